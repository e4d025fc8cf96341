// What the live suite puts in the cluster: the harness's own services (a git fixture, a
// reviewed "gateway" with a second, undeclared port, a pod no capability names, a control pod
// in a namespace without policies) and the Berth documents an operator and a developer would
// commit (a profile, an agent-sandbox class, two DeveloperWorkspaces, an ExecutionWorkspace).
//
// Every probe that shows a boundary refusing something has its control here: the same probe,
// from the control namespace, to the same target, succeeding.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { issueCert } from "../conformance/controlplane/controlplane.js";
import type { Obj } from "../conformance/setup.js";
import type { LiveCluster } from "./cluster.js";
import { DECLARED_TOOLS } from "../support/mcp-probes.js";
import { LIVE_IMAGES, NONROOT } from "./images.js";

export const FIXTURES_NS = "berth-live-fixtures";
export const CONTROL_NS = "berth-live-control";
/** The port the gateway pod serves on but its Service and the reviewed destination do not name. */
export const UNDECLARED_PORT = 9090;
export const PROBE_PORT = 8080;
export const GIT_HOST = `git.${FIXTURES_NS}.svc.cluster.local`;
export const GIT_REPOSITORY = `https://${GIT_HOST}/fixture.git`;
/** The fixture repository's `main` (test/live/programs/README.md). */
export const FIXTURE_MAIN = "5ff79d18ace1f638406204538236caaa17748b20";
/** The files of FIXTURE_MAIN, as internal/gitfixture/repo.go builds them. */
export const FIXTURE_FILES: Readonly<Record<string, Buffer>> = {
  ".gitattributes": Buffer.from("*.png binary\n*.txt text eol=crlf\n"),
  "README.md": Buffer.from("berth live fixture\n"),
  "logo.png": Buffer.from("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x01\x02\xff", "latin1"),
  "src/hello.txt": Buffer.from("hello from the fixture\n"),
};
export const PROFILE = "live";
export const SANDBOX_CLASS = "live-sandbox";

/** Where the harness's own listeners and the API server are, as pods reach them. */
export interface LiveAddresses {
  /** The host end of the node's veth: the API server and the harness's TCP listeners. */
  hostIP: string;
  apiPort: number;
  /** A harness listener a reviewed CIDR destination names, and one nothing names. */
  declaredHostPort: number;
  undeclaredHostPort: number;
  /** MCP servers the harness runs on hostIP (test/support/mcp-upstream.ts): its recording one and server-everything. */
  mcpRecordingPort?: number;
  mcpEverythingPort?: number;
  /** The harness's registry (host:port on hostIP), where evidence is pushed, and a listener that refuses every push. */
  registry?: string;
  refusingRegistryPort?: number;
}

/** The MCP servers the live profile reviews, and what the gated workspace declares of them. */
export const MCP = {
  recording: { destination: "mcp-recording", tools: DECLARED_TOOLS },
  everything: { destination: "mcp-everything", tools: ["echo", "get-sum"] },
} as const;

const API = "workspaces.berth.dev/v1alpha1";

function probePod(name: string, namespace: string, labels: Record<string, string>, containers: { name: string; port: number }[], extra: Record<string, any> = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels },
    spec: {
      terminationGracePeriodSeconds: 1,
      automountServiceAccountToken: false,
      containers: containers.map((c) => ({
        name: c.name,
        image: LIVE_IMAGES.runtime,
        imagePullPolicy: "Never",
        args: ["listen", String(c.port)],
        ports: [{ containerPort: c.port }],
        ...extra,
      })),
    },
  };
}

/** The harness's services and the control pod; `tls` is the git fixture's certificate. */
export function harnessObjects(gitToken: string, tls: { crt: string; key: string }): Obj[] {
  const git = { "app.kubernetes.io/name": "git-fixture" };
  const gateway = { "app.kubernetes.io/name": "model-gateway" };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: FIXTURES_NS } },
    { apiVersion: "v1", kind: "Namespace", metadata: { name: CONTROL_NS } },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "git-fixture", namespace: FIXTURES_NS },
      stringData: { token: gitToken, "tls.crt": tls.crt, "tls.key": tls.key },
    },
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "git", namespace: FIXTURES_NS, labels: git },
      spec: {
        terminationGracePeriodSeconds: 1,
        automountServiceAccountToken: false,
        containers: [
          {
            name: "git-server",
            image: LIVE_IMAGES.gitServer,
            imagePullPolicy: "Never",
            env: [
              { name: "GIT_FIXTURE_TOKEN", valueFrom: { secretKeyRef: { name: "git-fixture", key: "token" } } },
              { name: "TLS_CERT_FILE", value: "/tls/tls.crt" },
              { name: "TLS_KEY_FILE", value: "/tls/tls.key" },
            ],
            ports: [{ containerPort: PROBE_PORT }],
            volumeMounts: [{ name: "tls", mountPath: "/tls", readOnly: true }],
          },
        ],
        volumes: [{ name: "tls", secret: { secretName: "git-fixture", defaultMode: 0o444 } }],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "git", namespace: FIXTURES_NS },
      spec: { selector: git, ports: [{ name: "https", port: 443, targetPort: PROBE_PORT }] },
    },
    probePod("gateway", FIXTURES_NS, gateway, [
      { name: "api", port: PROBE_PORT },
      { name: "admin", port: UNDECLARED_PORT },
    ]),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "gateway", namespace: FIXTURES_NS },
      spec: { selector: gateway, ports: [{ name: "http", port: 80, targetPort: PROBE_PORT }] },
    },
    probePod("stranger", FIXTURES_NS, { "app.kubernetes.io/name": "stranger" }, [{ name: "listen", port: PROBE_PORT }]),
    // No Pod Security label, no NetworkPolicy, the host's user namespace: what the probes
    // can do where nothing stops them. It holds the git token in its environment so that
    // find-string is shown to find it where it is.
    probePod("control", CONTROL_NS, { "app.kubernetes.io/name": "control" }, [{ name: "probe", port: PROBE_PORT }], {
      env: [{ name: "CONTROL_GIT_TOKEN", valueFrom: { secretKeyRef: { name: "control-git-token", key: "token" } } }],
    }),
    { apiVersion: "v1", kind: "Secret", metadata: { name: "control-git-token", namespace: CONTROL_NS }, stringData: { token: gitToken } },
  ];
}

/**
 * Puts what every live workspace needs in the cluster: the harness's services (the git fixture
 * serving https with a certificate from the cluster CA, which the profile's caBundle names for
 * the checkout), the profile (and its refusing twin) and the agent-sandbox class. The live suite and `npm run bench:system:live` share it.
 */
export async function installHarness(live: LiveCluster, addresses: LiveAddresses, gitToken: string): Promise<void> {
  const tlsDir = join(live.cp.runDir, "git-fixture-tls");
  mkdirSync(tlsDir, { recursive: true });
  const cert = await issueCert(tlsDir, "git", {
    subject: `/CN=${GIT_HOST}`,
    caCrt: join(live.cp.pkiDir, "ca.crt"),
    caKey: join(live.cp.pkiDir, "ca.key"),
    sans: `DNS:${GIT_HOST}`,
    server: true,
  });
  for (const o of harnessObjects(gitToken, { crt: readFileSync(cert.crt, "utf8"), key: readFileSync(cert.key, "utf8") })) await live.cluster.apply(o);
  await live.cluster.apply(profile(addresses));
  if (addresses.refusingRegistryPort !== undefined) await live.cluster.apply(profile(addresses, true));
  await live.cluster.apply(sandboxClass());
}

/** The developer's git credential, in the namespace Berth made for the workspace (developerWorkspace names it). */
export function gitTokenSecret(namespace: string, gitToken: string): Obj {
  return { apiVersion: "v1", kind: "Secret", metadata: { name: "git-token", namespace }, stringData: { token: gitToken } };
}

/** The recording MCP server's credential, in the gated workspace's namespace. */
export function mcpTokenSecret(namespace: string, token: string): Obj {
  return { apiVersion: "v1", kind: "Secret", metadata: { name: "mcp-token", namespace }, stringData: { token } };
}

/** The evidence repository in the harness's registry. */
export const EVIDENCE_REPOSITORY = "berth/evidence";
/** The profile whose evidence registry refuses every push. */
export const REFUSING_PROFILE = "live-refusing";
/** The cluster CA as every namespace has it (kube-controller-manager publishes it): it signs the git fixture's and the registry's certificates. */
const CLUSTER_CA = { namespace: FIXTURES_NS, name: "kube-root-ca.crt", key: "ca.crt" };

/** The evidence registry's push credential, a Docker config JSON, in a workspace's namespace. */
export function evidencePushSecret(namespace: string, registryHost: string, token: string): Obj {
  const auth = Buffer.from(`berth-live:${token}`).toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "evidence-push", namespace },
    type: "kubernetes.io/dockerconfigjson",
    stringData: { ".dockerconfigjson": JSON.stringify({ auths: { [registryHost]: { auth } } }) },
  };
}

/** The live profile, and with `refusing` its twin whose evidence registry refuses every push. */
export function profile(a: LiveAddresses, refusing = false): Obj {
  const registry = refusing ? (a.refusingRegistryPort === undefined ? undefined : `${a.hostIP}:${a.refusingRegistryPort}`) : a.registry;
  const registryPort = registry === undefined ? undefined : Number(registry.split(":").pop());
  return {
    apiVersion: API,
    kind: "WorkspaceProfile",
    metadata: { name: refusing ? REFUSING_PROFILE : PROFILE },
    spec: {
      podSecurity: { level: "restricted", version: "latest" },
      // The harness's loop-device provisioner: an ext4 filesystem of exactly the claim's size.
      storage: { storageClassName: "loop-ext4", capacityEnforcement: "Runtime", maxSize: "1Gi" },
      runtimes: [{ name: "probe", image: LIVE_IMAGES.runtime, args: ["run"] }],
      checkout: { image: LIVE_IMAGES.checkout },
      mcpGate: { image: LIVE_IMAGES.mcpGate },
      // The refusing twin's collector gives up sooner: nothing will fetch from it.
      ...(registry === undefined ? {} : { evidence: { image: LIVE_IMAGES.evidence, destination: "evidence-registry", repository: `${registry}/${EVIDENCE_REPOSITORY}`, resources: { cpu: "100m", memory: "160Mi" }, collectTimeoutSeconds: refusing ? 120 : 300 } }),
      user: { uid: NONROOT, gid: NONROOT },
      destinations: [
        // The checkout trusts the cluster CA through the profile, not through its image.
        { name: "git-fixture", description: "The harness's git server", service: { namespace: FIXTURES_NS, name: "git" }, caBundle: CLUSTER_CA },
        ...(registry === undefined
          ? []
          : [{ name: "evidence-registry", description: "Where finished workspaces push their evidence", cidrs: [`${a.hostIP}/32`], ports: [{ port: registryPort }], caBundle: CLUSTER_CA }]),
        { name: "model-gateway", description: "A reviewed in-cluster service", service: { namespace: FIXTURES_NS, name: "gateway" } },
        { name: "host-fixture", description: "A reviewed address outside the cluster", cidrs: [`${a.hostIP}/32`], ports: [{ port: a.declaredHostPort }] },
        { name: "kube-api", description: "This cluster's API server, after kube-proxy's DNAT", cidrs: [`${a.hostIP}/32`], ports: [{ port: a.apiPort }] },
        ...(a.mcpRecordingPort === undefined || a.mcpEverythingPort === undefined
          ? []
          : [
              { name: MCP.recording.destination, description: "The harness's recording MCP server", cidrs: [`${a.hostIP}/32`], ports: [{ port: a.mcpRecordingPort }], mcp: { path: "/mcp" } },
              { name: MCP.everything.destination, description: "server-everything, behind a recording proxy", cidrs: [`${a.hostIP}/32`], ports: [{ port: a.mcpEverythingPort }] },
            ]),
      ],
      dns: { namespace: "kube-system", podSelector: { "k8s-app": "kube-dns" } },
      limits: {
        defaultRequest: { cpu: "50m", memory: "64Mi" },
        default: { cpu: "250m", memory: "256Mi" },
        max: { cpu: "1", memory: "512Mi" },
      },
    },
  };
}

/** A DeveloperWorkspace on the live profile; its git credential is the Secret `git-token` in its namespace. */
export function developerWorkspace(
  id: string,
  opts: { storage: "persistent" | "ephemeral"; kubernetes: "none" | "read"; mcp?: boolean; evidence?: { verification: string[]; profile?: string } },
): Obj {
  return {
    apiVersion: API,
    kind: "DeveloperWorkspace",
    metadata: { name: `${id}-xr` },
    spec: {
      workspaceID: id,
      profileRef: { name: opts.evidence?.profile ?? PROFILE },
      owner: { name: "Berth live suite" },
      source: { repository: GIT_REPOSITORY, revision: "main" },
      runtime: { profile: "probe" },
      storage: { mode: opts.storage, size: "64Mi" },
      resources: { cpu: "100m", memory: "128Mi" },
      capabilities: {
        git: { destination: "git-fixture" },
        inference: { destination: "model-gateway" },
        registries: [{ destination: "host-fixture" }],
        kubernetes: opts.kubernetes === "none" ? { access: "none" } : { access: opts.kubernetes, destination: "kube-api" },
        ...(opts.mcp
          ? { mcp: Object.entries(MCP).map(([name, m]) => ({ name, destination: m.destination, tools: [...m.tools] })) }
          : {}),
      },
      credentials: [
        { name: "git", purpose: "git", secretRef: { name: "git-token", key: "token" } },
        // For the recording server, named after it: the gate sends it, the runtime never has it.
        ...(opts.mcp ? [{ name: "recording", purpose: "mcp", secretRef: { name: "mcp-token", key: "token" } }] : []),
        // The evidence registry's: the export holds it, no container of the run does.
        ...(opts.evidence ? [{ name: "evidence", purpose: "evidence", secretRef: { name: "evidence-push", key: ".dockerconfigjson" } }] : []),
      ],
      ...(opts.evidence ? { verification: { command: opts.evidence.verification } } : {}),
      lifecycle: {
        profile: opts.storage === "persistent" ? "persistent" : "ephemeral",
        deletion: "Delete",
        ...(opts.evidence ? { retentionMinutes: 1, evidence: { exportBeforeCleanup: true } } : {}),
      },
    },
  };
}

export function sandboxClass(): Obj {
  return {
    apiVersion: API,
    kind: "ExecutionWorkspaceClass",
    metadata: { name: SANDBOX_CLASS },
    spec: {
      provider: "agent-sandbox",
      profileRef: { name: PROFILE },
      runtime: { profile: "probe" },
      mode: "Durable",
      reuseScopes: ["None", "Session"],
      lifecycle: {
        onDetach: { default: "Suspend", allowed: ["Suspend", "Delete"] },
        idleTimeoutMinutes: 15,
        maxLifetimeMinutes: 1440,
        deletionPolicy: { providerResources: "Delete", volumes: "Delete", checkpoints: "Retain" },
      },
      permits: {
        resources: { default: { cpu: "100m", memory: "128Mi" }, max: { cpu: "500m", memory: "256Mi" } },
        storage: { default: "64Mi", max: "128Mi" },
        destinations: ["model-gateway", "host-fixture", "kube-api"],
        kubernetesAccess: "edit",
        checkpoint: false,
        restore: false,
        fork: false,
      },
    },
  };
}

/**
 * An ExecutionWorkspace on the live class; `cpu` its runtime's CPU (requests and limits), 100m
 * unless said. With `edit`, its runtime may make pods in its Namespace, within 100m and 64Mi of
 * its own beside the runtime's.
 */
export function executionWorkspace(name: string, desiredState: "Ready" | "Suspended", cpu = "100m", opts: { edit?: boolean } = {}): Obj {
  return {
    apiVersion: API,
    kind: "ExecutionWorkspace",
    metadata: { name },
    spec: {
      classRef: { name: SANDBOX_CLASS },
      sessionRef: { name, namespace: FIXTURES_NS },
      reusePolicy: "Session",
      desiredState,
      requests: {
        resources: { cpu, memory: "128Mi" },
        storage: { size: "64Mi" },
        capabilities: {
          inference: { destination: "model-gateway" },
          ...(opts.edit ? { kubernetes: { access: "edit", destination: "kube-api", resources: { cpu: "100m", memory: "64Mi" } } } : {}),
        },
      },
    },
  };
}

/**
 * A pod a workspace runtime granted edit makes in its own Namespace, as the rules for such pods
 * want it (admission/policies.yaml, berth-workspace-runtime): its one owner the workspace's
 * runtime lease, no Secret, the workspace's runtime class, bounded, restricted, in a user
 * namespace. It runs workspace-probe with `args`. `edit` changes it into one the rules refuse.
 */
export function runtimeMadePod(namespace: string, name: string, lease: { uid: string } | undefined, args: string[], edit: (pod: any) => void = () => {}): Obj {
  const pod: any = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, ...(lease ? { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "runtime-lease", uid: lease.uid }] } : {}) },
    spec: {
      hostUsers: false,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 1,
      securityContext: { runAsNonRoot: true, runAsUser: NONROOT, runAsGroup: NONROOT, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "made",
          image: LIVE_IMAGES.runtime,
          imagePullPolicy: "Never",
          args,
          resources: { requests: { cpu: "20m", memory: "16Mi" }, limits: { cpu: "20m", memory: "16Mi" } },
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
        },
      ],
    },
  };
  edit(pod);
  return pod;
}
