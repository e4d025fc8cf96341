// Berth's function on the live node as Crossplane's Deployment runtime runs a Function package:
// the image image/build.ts builds, embedded in the Function package by `crossplane xpkg build
// --embed-runtime-image-tarball`, pushed with `crossplane xpkg push` to the harness's registry
// and pulled from there by the node; one pod of a Deployment in crossplane-system behind a Service, serving TLS with a certificate that
// Crossplane's CA signs, mounted where the runtime mounts it (/tls/server, the SDK's default), the
// ENTRYPOINT unchanged. Crossplane (still a process on the host here) dials the Service's
// ClusterIP: a host route sends that one address into the node's network namespace, where
// kube-proxy's rules take it to the pod. The route is on the node's veth, so it goes with it.
//
// Still stood in for: Crossplane's package manager. The Deployment and Service are applied here
// as its Deployment runtime would make them, and the FunctionRevision is registered by hand
// (registerFunction) with that endpoint, instead of Crossplane pulling the package itself.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { issueCert, type ControlPlane } from "../conformance/controlplane/controlplane.js";
import { REPO, type Cluster } from "../conformance/setup.js";
import { run } from "../conformance/controlplane/node-host.js";
import type { NodeNetwork } from "../conformance/controlplane/node.js";
import type { Registry } from "./registry.js";
import type { BuiltImage } from "../../image/oci.js";

export const FUNCTION_NAME = "function-berth";
export const FUNCTION_NAMESPACE = "crossplane-system";
/** A fixed address in the node's service range (10.0.0.0/24; DNS is .10), so the certificate can name it. */
export const FUNCTION_SERVICE_IP = "10.0.0.20";
const PORT = 9443;
const labels = { "pkg.crossplane.io/function": FUNCTION_NAME };

/** The Function package as pushed: its reference, and the manifest digest the registry holds. */
export interface FunctionPackage {
  ref: string;
  digest: string;
  /** The runtime image embedded in it. */
  image: BuiltImage;
}

export interface FunctionPod {
  endpoint: string;
  package: FunctionPackage;
}

/** The Deployment Crossplane's Deployment runtime would make for the package. */
function functionDeployment(pkg: FunctionPackage) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: FUNCTION_NAME, namespace: FUNCTION_NAMESPACE },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            {
              name: "package-runtime",
              image: pkg.ref,
              // Pulled from the registry every time the pod starts: nothing was imported.
              imagePullPolicy: "Always",
              ports: [{ name: "grpc", containerPort: PORT }],
              env: [{ name: "TLS_SERVER_CERTS_DIR", value: "/tls/server" }],
              readinessProbe: { tcpSocket: { port: PORT }, periodSeconds: 2 },
              securityContext: { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
              volumeMounts: [{ name: "tls-server-certs", mountPath: "/tls/server", readOnly: true }],
            },
          ],
          volumes: [{ name: "tls-server-certs", secret: { secretName: `${FUNCTION_NAME}-tls-server` } }],
        },
      },
    },
  };
}

/**
 * Runs the package's image as the function, as a package upgrade (or rollback) does: the
 * Deployment's image changes and waits until the one pod left runs it. The Service, and so the
 * endpoint Crossplane dials, stay the same.
 */
export async function rollOutFunction(cp: ControlPlane, cluster: Cluster, pkg: FunctionPackage): Promise<void> {
  await cluster.apply(functionDeployment(pkg) as any);
  await cp.kube.waitFor(
    `${FUNCTION_NAME} running ${pkg.ref} alone`,
    async () => {
      const d = await cp.kube.get("apps/v1", "Deployment", FUNCTION_NAME, FUNCTION_NAMESPACE);
      const s = d?.status ?? {};
      const pods = await cp.kube.list<any>("v1", "Pod", FUNCTION_NAMESPACE, `pkg.crossplane.io/function=${FUNCTION_NAME}`);
      return s.observedGeneration >= d.metadata.generation && s.updatedReplicas === 1 && s.readyReplicas === 1 && s.replicas === 1 && pods.length === 1 && pods[0].spec.containers[0].image === pkg.ref;
    },
    120_000,
  );
}

/** Builds the Function package around the image with the real Crossplane CLI, and pushes it. */
export async function pushFunctionPackage(cp: ControlPlane, registry: Registry, image: BuiltImage, dir: string): Promise<FunctionPackage> {
  if (!cp.crossplaneCLI) throw new Error("pushing the Function package needs the Crossplane CLI (build.sh builds it)");
  const tarball = join(dir, "function-image.oci.tar");
  const tag = image.name.slice(image.name.lastIndexOf(":") + 1);
  const xpkg = join(dir, `function-berth-${tag}.xpkg`);
  writeFileSync(tarball, image.archive);
  const cli = (args: string[]) => execFileSync(cp.crossplaneCLI!, args, { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, SSL_CERT_FILE: registry.caFile } });
  cli(["xpkg", "build", "--package-root", "package", `--embed-runtime-image-tarball=${tarball}`, "-o", xpkg]);
  const repository = "berth/function-berth";
  const ref = `${registry.host}/${repository}:${tag}`;
  cli(["xpkg", "push", "-f", xpkg, ref]);
  return { ref, digest: await registry.manifestDigest(repository, tag), image };
}

export async function deployFunctionPod(cp: ControlPlane, cluster: Cluster, network: NodeNetwork, pkg: FunctionPackage, dir: string, log: (m: string) => void): Promise<FunctionPod> {
  if (!cp.crossplaneCADir) throw new Error("the function pod needs Crossplane's CA (start the control plane with Crossplane)");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const service = `${FUNCTION_NAME}.${FUNCTION_NAMESPACE}`;
  const cert = await issueCert(dir, "tls", {
    subject: `/CN=${FUNCTION_NAME}`,
    caCrt: join(cp.crossplaneCADir, "ca.crt"),
    caKey: join(cp.crossplaneCADir, "ca.key"),
    sans: `DNS:${FUNCTION_NAME},DNS:${service},DNS:${service}.svc,DNS:${service}.svc.cluster.local,IP:${FUNCTION_SERVICE_IP}`,
    server: true,
  });
  const b64 = (path: string) => readFileSync(path).toString("base64");
  await cluster.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `${FUNCTION_NAME}-tls-server`, namespace: FUNCTION_NAMESPACE },
    type: "Opaque",
    data: { "tls.crt": b64(cert.crt), "tls.key": b64(cert.key), "ca.crt": b64(join(cp.crossplaneCADir, "ca.crt")) },
  } as any);
  await cluster.apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: FUNCTION_NAME, namespace: FUNCTION_NAMESPACE },
    spec: { clusterIP: FUNCTION_SERVICE_IP, selector: labels, ports: [{ name: "grpc", port: PORT, targetPort: PORT, protocol: "TCP" }] },
  } as any);
  await rollOutFunction(cp, cluster, pkg);
  await run("ip", ["route", "replace", `${FUNCTION_SERVICE_IP}/32`, "via", network.nodeIP, "dev", network.hostLink]);
  const endpoint = `dns:///${FUNCTION_SERVICE_IP}:${PORT}`;
  await cp.registerFunction(FUNCTION_NAME, endpoint);
  log(`${FUNCTION_NAME}: a pod of ${pkg.ref} (${pkg.digest}), Crossplane dials ${endpoint}`);
  return { endpoint, package: pkg };
}
