// Crossplane and Berth installed on the live cluster the way operators install them, by the two
// scripts the README and docs/operations.md give them (install/publish.sh and install/install.sh, which
// `npm run conformance:kind` runs too):
//   - the packages built by the real Crossplane CLI, the Function with the runtime image
//     image/build.ts makes embedded in it, pushed to the harness's registry under
//     <registry>/berth-dev;
//   - Crossplane from its Helm chart (the one in the Crossplane core module, copied by build.sh),
//     running as a pod from an image of the same binary, package manager and webhooks on;
//   - an ImageConfig that pulls xpkg.crossplane.io/berth-dev/* from that registry, so the
//     packages keep their public names and the Configuration's dependency resolves to the
//     Function installed under the name the Compositions call;
//   - Crossplane's Deployment runtime running the function as a pod the node pulls from the
//     registry, dialled over TLS through its Service.
// What differs from kind: the images the chart runs reach the node by import (kind: `kind load`
// or a registry), and the registry is the harness's (kind: a registry container).
import { execFile as execFileCb } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ControlPlane } from "../conformance/controlplane/controlplane.js";
import { REPO } from "../conformance/setup.js";
import { installedFunction } from "../support/function-name.js";
import type { Registry } from "./registry.js";

const execFile = promisify(execFileCb);

/** What the Function is installed as (the name the Compositions call), and its published package. */
export const { name: FUNCTION_NAME, package: FUNCTION_PACKAGE } = installedFunction();
export const CROSSPLANE_NAMESPACE = "crossplane-system";
/** The operators group install.sh is given: the one admission/params.yaml ships with. */
export const OPERATORS_GROUP = "berth:operators";
const MIRROR_REPOSITORY = "berth-dev";
/** The Function package's own repository name (function-berth), as published under any registry path. */
const FUNCTION_REPOSITORY = FUNCTION_PACKAGE.slice(FUNCTION_PACKAGE.lastIndexOf("/") + 1);

/** One release of the Function package, as pushed. */
export interface FunctionPackage {
  /** v0.1.0 */
  version: string;
  /** The name operators install: xpkg.crossplane.io/berth-dev/function-berth:<version>. */
  publicRef: string;
  /** Where the node pulls it from (the ImageConfig's rewrite of publicRef). */
  ref: string;
  /** The manifest digest the registry holds under ref. */
  digest: string;
}

/** install/publish.sh: both packages of one release, built with the real CLI and pushed. */
export async function publishRelease(cp: ControlPlane, registry: Registry, version: string, workDir: string): Promise<FunctionPackage> {
  if (!cp.crossplaneCLI) throw new Error("publishing Berth's packages needs the Crossplane CLI (build.sh builds it)");
  const mirror = `${registry.host}/${MIRROR_REPOSITORY}`;
  await script("publish.sh", [mirror, version], { CROSSPLANE_CLI: cp.crossplaneCLI, SSL_CERT_FILE: registry.caFile, BERTH_WORK: workDir });
  return {
    version,
    publicRef: `${FUNCTION_PACKAGE}:${version}`,
    ref: `${mirror}/${FUNCTION_REPOSITORY}:${version}`,
    digest: await registry.manifestDigest(`${MIRROR_REPOSITORY}/${FUNCTION_REPOSITORY}`, version),
  };
}

/**
 * install/install.sh: Crossplane from its chart (the cluster has none the first time), then
 * Berth from the mirror. Run again, it finds Crossplane installed and leaves it alone. Its log.
 */
export async function installBerth(
  cp: ControlPlane,
  registry: Registry,
  opts: { helm: string; crossplaneImage: string; release: FunctionPackage },
): Promise<string> {
  return script("install.sh", [], {
    KUBECONFIG: cp.kubeconfig,
    HELM: opts.helm,
    KUBECTL: join(cp.binDir, "kubectl"),
    CROSSPLANE_CHART: join(cp.binDir, "crossplane-chart"),
    CROSSPLANE_IMAGE: opts.crossplaneImage,
    // Imported into the node's containerd, never pulled.
    CROSSPLANE_IMAGE_PULL_POLICY: "Never",
    BERTH_VERSION: opts.release.version,
    BERTH_MIRROR: `${registry.host}/${MIRROR_REPOSITORY}`,
    REGISTRY_CA_FILE: registry.caFile,
    // The operators group the conformance suite's identities are in (admission/params.yaml's).
    BERTH_OPERATORS_GROUP: OPERATORS_GROUP,
    // Helm keeps its repository and cache settings under the run folder, not the user's home.
    HELM_CONFIG_HOME: join(cp.runDir, "helm", "config"),
    HELM_CACHE_HOME: join(cp.runDir, "helm", "cache"),
    HELM_DATA_HOME: join(cp.runDir, "helm", "data"),
  });
}

/** `helm get values crossplane -o json` on the live cluster, with the Helm install.sh ran. */
export async function crossplaneHelmValues(cp: ControlPlane, helm: string): Promise<unknown> {
  const { stdout } = await execFile(helm, ["get", "values", "crossplane", "--namespace", CROSSPLANE_NAMESPACE, "-o", "json"], {
    env: { ...process.env, KUBECONFIG: cp.kubeconfig, HELM_CONFIG_HOME: join(cp.runDir, "helm", "config"), HELM_CACHE_HOME: join(cp.runDir, "helm", "cache"), HELM_DATA_HOME: join(cp.runDir, "helm", "data") },
  });
  return JSON.parse(stdout);
}

/**
 * An upgrade (or rollback) as operators make one: the Function's package names another release.
 * Crossplane makes a new revision, its Deployment runtime a new pod, and retires the old one;
 * this waits until that pod, running the release's image, is the only one left and Ready.
 */
export async function rollOutFunction(cp: ControlPlane, pkg: FunctionPackage): Promise<void> {
  await cp.kube.mergePatch("pkg.crossplane.io/v1", "Function", FUNCTION_NAME, { spec: { package: pkg.publicRef } });
  await cp.kube.waitFor(
    `${FUNCTION_NAME} running ${pkg.ref} alone`,
    async () => {
      const fn = await cp.kube.get("pkg.crossplane.io/v1", "Function", FUNCTION_NAME);
      const healthy = (fn?.status?.conditions ?? []).some((c: any) => c.type === "Healthy" && c.status === "True");
      const pods = await cp.kube.list<any>("v1", "Pod", CROSSPLANE_NAMESPACE, `pkg.crossplane.io/function=${FUNCTION_NAME}`);
      const ready = (p: any) => (p.status?.containerStatuses ?? []).every((s: any) => s.ready) && !p.metadata.deletionTimestamp;
      return healthy && fn?.status?.resolvedPackage === pkg.ref && pods.length === 1 && pods[0].spec.containers[0].image === pkg.ref && ready(pods[0]);
    },
    180_000,
  );
}

/** Runs install/<name>; its standard output. */
async function script(name: string, args: string[], env: Record<string, string>): Promise<string> {
  try {
    const r = await execFile("bash", [join(REPO, "install", name), ...args], { cwd: REPO, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
    return r.stdout;
  } catch (e: any) {
    throw new Error(`install/${name} ${args.join(" ")} failed (exit ${e?.code}):\n${e?.stdout ?? ""}${e?.stderr ?? ""}`);
  }
}
