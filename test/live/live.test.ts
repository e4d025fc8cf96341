// The live tier: Berth's workspaces running on a real node (kubelet, containerd, runc, kube-proxy,
// kube-router's NetworkPolicy firewall, CoreDNS), each isolation effect proven on a running pod
// with workspace-probe, and each with its control: the same probe, from a pod nothing restricts,
// succeeding against the same target. A refused probe proves nothing unless its control passes.
//
//   sudo npm run test:live          # needs root and `npm run controlplane:build -- --node`
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueCert } from "../conformance/controlplane/controlplane.js";
import { classPermitsInEffect, compressedLifecycle, condition, operationsOf, printedColumns, sleep, undoneByCrossplane, waitFor, type Obj } from "../conformance/setup.js";
import { LAST_ACTIVITY, rfc3339, SUSPENDED_AT, SUSPENDED_BY } from "../../functions/berth/lifecycle/signals.js";
import { startLiveCluster, type LiveCluster } from "./cluster.js";
import { CROSSPLANE_NAMESPACE, crossplaneHelmValues, FUNCTION_NAME, rollOutFunction } from "./operator-install.js";
import { shippedRuntime } from "../../image/shipped.js";
import {
  CONTROL_NS,
  developerWorkspace,
  EVIDENCE_REPOSITORY,
  evidencePushSecret,
  executionWorkspace,
  FIXTURE_FILES,
  FIXTURE_MAIN,
  FIXTURES_NS,
  GIT_HOST,
  GIT_REPOSITORY,
  gitTokenSecret,
  installHarness,
  MCP,
  mcpTokenSecret,
  PROBE_PORT,
  REFUSING_PROFILE,
  runtimeMadePod,
  SANDBOX_CLASS,
  UNDECLARED_PORT,
  type LiveAddresses,
} from "./fixtures.js";
import { hostStateDiff, readHostState, type HostState } from "./host-state.js";
import { AGENT_SANDBOX_VERSION } from "./agent-sandbox.js";
import { startGate, type RunningGate } from "../../functions/mcp-gate/gate.js";
import { parsePolicy } from "../../functions/contracts/mcp-gate-policy.js";
import { basicProbes, isForbidden, messagesOf, NEGATIVE_PROBES, OPEN_SESSION, UPSTREAM_TOOLS, type NegativeProbe, type RpcMessage } from "../support/mcp-probes.js";
import { startEverything, startRecordingUpstream, type EverythingUpstream, type Recorder, type RecordingUpstream } from "../support/mcp-upstream.js";

const say = (m: string) => process.stderr.write(`[live ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

/** A container the harness runs workspace-probe in. */
interface Where {
  ns: string;
  pod: string;
  container: string;
}

interface ProbeResult {
  code: number;
  out: any;
  raw: string;
}

const DEV = { id: "live-dev", ns: "ws-live-dev" };
const KUBE = { id: "live-kube", ns: "ws-live-kube" };
const SESSION = { name: "live-session", ns: "ws-live-session" };
/** The session's workspace: its runtime is granted edit (issue 44: what it makes is proven below). */
const sessionDocument = (desiredState: "Ready" | "Suspended") => executionWorkspace(SESSION.name, desiredState, "100m", { edit: true });
const control: Where = { ns: CONTROL_NS, pod: "control", container: "probe" };

let live: LiveCluster;
let before: HostState;
let stopped = false;
let addresses: LiveAddresses;
let kubernetesServiceIP: string;
const gitToken = randomBytes(18).toString("hex");
const mcpToken = randomBytes(18).toString("hex");
// The MCP servers the gated workspace declares, on the host end of the node's veth, and the
// negative control: the same gate program with enforcement off, in front of the same servers.
let recording: RecordingUpstream;
let everything: EverythingUpstream;
let openGate: RunningGate;
const hostListeners: Server[] = [];
const podIPs: Record<string, string> = {};

async function probe(where: Where, args: string[]): Promise<ProbeResult> {
  const r = await live.node.exec(where.ns, where.pod, where.container, ["/workspace-probe", ...args], 60_000);
  const line = r.stdout.trim().split("\n").pop() ?? "";
  let out: any;
  try {
    out = JSON.parse(line);
  } catch {
    throw new Error(`workspace-probe ${args.join(" ")} in ${where.ns}/${where.pod}: no JSON (exit ${r.code}): ${r.stdout}${r.stderr}`);
  }
  if (r.code === 2) throw new Error(`workspace-probe ${args.join(" ")}: usage error: ${line}`);
  return { code: r.code, out, raw: line };
}

/** Asserts a probe succeeded, with its whole answer in the failure message. */
function allowed(r: ProbeResult, what: string): void {
  expect(r.code, `${what} should succeed: ${r.raw}`).toBe(0);
}

/** Asserts a probe was refused (and not a usage error). */
function refused(r: ProbeResult, what: string): void {
  expect(r.code, `${what} should be refused: ${r.raw}`).toBe(1);
}

async function pod(ns: string, name: string): Promise<Obj | undefined> {
  return live.cluster.get("v1", "Pod", name, ns);
}

async function jobPod(ns: string): Promise<string> {
  return waitFor(`the Job pod in ${ns}`, async () => {
    const res = await live.cluster.request("GET", `/api/v1/namespaces/${ns}/pods?labelSelector=job-name%3Dworkspace`);
    return (res.body?.items?.[0]?.metadata?.name as string | undefined) ?? false;
  }, 120_000);
}

async function containerRunning(ns: string, name: string, container: string, timeoutMs = 240_000): Promise<Obj> {
  return waitFor(`${ns}/${name} container ${container} running`, async () => {
    const p = await pod(ns, name);
    const s = (p?.status?.containerStatuses ?? []).find((c: any) => c.name === container);
    return s?.state?.running && s.ready !== false ? p : false;
  }, timeoutMs, 1000).catch(async (e) => {
    throw new Error(`${e instanceof Error ? e.message : e}; ${await whyNotRunning(ns, name)}`);
  });
}

/** What a pod that never ran says about itself: its phase, each container's state, and its events. */
async function whyNotRunning(ns: string, name: string): Promise<string> {
  const p = await pod(ns, name);
  if (!p) return "the pod is gone";
  const states = [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].map(
    (c: any) => `${c.name} ${JSON.stringify(c.state)} restarts ${c.restartCount}`,
  );
  const logs: string[] = [];
  for (const c of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) {
    if (c.state?.waiting && c.restartCount === 0) continue;
    const log = await live.cluster.request("GET", `/api/v1/namespaces/${ns}/pods/${name}/log?container=${c.name}&tailLines=20`);
    logs.push(`${c.name}: ${log.status === 200 ? log.text.trim() : `HTTP ${log.status}`}`);
  }
  const events = await live.cluster.request("GET", `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name%3D${name}`);
  const said = (events.body?.items ?? []).map((e: any) => `${e.reason} x${e.count ?? 1}: ${e.message}`);
  return `pod phase ${p.status?.phase}, conditions ${JSON.stringify(p.status?.conditions ?? [])}; containers: ${states.join("; ") || "none"}; logs: ${logs.join(" | ") || "none"}; events: ${said.join(" | ") || "none"}`;
}

/**
 * A registry that refuses every push, as a registry does to a credential it does not accept: TLS
 * with a certificate the cluster CA signs (so the refusal, not the handshake, is what fails), 403
 * to every write. The evidence destination of the profile REFUSING_PROFILE.
 */
async function refusingRegistry(): Promise<number> {
  const dir = join(live.cp.runDir, "refusing-registry");
  mkdirSync(dir, { recursive: true });
  const cert = await issueCert(dir, "registry", { subject: "/CN=berth-live-refusing-registry", caCrt: join(live.cp.pkiDir, "ca.crt"), caKey: join(live.cp.pkiDir, "ca.key"), sans: `IP:${live.network.hostIP}`, server: true });
  const server = createHttpsServer({ cert: readFileSync(cert.crt), key: readFileSync(cert.key) }, (req, res) => {
    req.resume();
    if (req.method === "HEAD") return void res.writeHead(404).end();
    res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ errors: [{ code: "DENIED", message: "requested access to the resource is denied" }] }));
  });
  hostListeners.push(server as unknown as Server);
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, live.network.hostIP, resolve));
  return (server.address() as { port: number }).port;
}

async function listen(port: number): Promise<number> {
  const server = createServer((socket) => socket.end(`berth-host ${port}\n`));
  hostListeners.push(server);
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, live.network.hostIP, resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("listener has no port");
  return address.port;
}

/** An ExecutionWorkspace as the API server has it. */
const sessionXR = () => live.cluster.get("workspaces.berth.dev/v1alpha1", "ExecutionWorkspace", SESSION.name);

/**
 * Waits until the session's workspace says `phase`, polling often enough to see what the node was
 * doing at that moment: returns the XR and whether the Sandbox's pod was still there (read right
 * after the XR said so; a suspended pod does not come back, so a pod seen then was there when the
 * XR said Suspended).
 */
async function sessionPhase(phase: string, timeoutMs = 120_000): Promise<{ xr: Obj; podThen: Obj | undefined }> {
  const xr = await waitFor(`${SESSION.name} phase ${phase}`, async () => {
    const x = await sessionXR();
    return x?.status?.phase === phase && x;
  }, timeoutMs, 100).catch(async (e) => {
    const x = await sessionXR();
    const sandbox = await live.cluster.get("agents.x-k8s.io/v1beta1", "Sandbox", "workspace", SESSION.ns);
    throw new Error(`${e instanceof Error ? e.message : e}; the XR says ${JSON.stringify({ phase: x?.status?.phase, reason: x?.status?.reason, message: x?.status?.message, conditions: x?.status?.conditions })}; the Sandbox says ${JSON.stringify(sandbox?.status?.conditions)}`);
  });
  return { xr, podThen: await pod(SESSION.ns, "workspace") };
}

beforeAll(async () => {
  before = await readHostState();
  live = await startLiveCluster({ log: say });
  const t = Date.now();
  recording = await startRecordingUpstream(UPSTREAM_TOOLS, live.network.hostIP);
  everything = await startEverything(live.network.hostIP);
  const openPolicy = parsePolicy({ servers: [{ name: "recording", upstream: recording.url, tools: [] }, { name: "everything", upstream: everything.url, tools: [] }] });
  if (!openPolicy.ok) throw new Error(`the open gate's policy: ${openPolicy.problems.join("; ")}`);
  openGate = await startGate({
    policy: openPolicy.value,
    listen: { host: live.network.hostIP, port: 0 },
    enforce: false,
    env: {},
  });
  addresses = {
    hostIP: live.network.hostIP,
    apiPort: live.apiServer.port,
    declaredHostPort: await listen(0),
    undeclaredHostPort: await listen(0),
    mcpRecordingPort: Number(new URL(recording.url).port),
    mcpEverythingPort: Number(new URL(everything.url).port),
    registry: live.registry.host,
    refusingRegistryPort: await refusingRegistry(),
  };
  kubernetesServiceIP = (await live.cluster.get("v1", "Service", "kubernetes", "default"))!.spec.clusterIP;

  await installHarness(live, addresses, gitToken);
  await live.cluster.apply(developerWorkspace(DEV.id, { storage: "persistent", kubernetes: "none", mcp: true }));
  await live.cluster.apply(developerWorkspace(KUBE.id, { storage: "ephemeral", kubernetes: "read" }));
  await live.cluster.apply(sessionDocument("Ready"));

  // The developer's git credential, in the namespace Berth made for the workspace.
  for (const ns of [DEV.ns, KUBE.ns]) {
    await waitFor(`namespace ${ns}`, async () => (await live.cluster.get("v1", "Namespace", ns)) !== undefined, 120_000);
    await live.cluster.apply(gitTokenSecret(ns, gitToken));
  }
  await live.cluster.apply(mcpTokenSecret(DEV.ns, mcpToken));
  await waitFor(`Sandbox in ${SESSION.ns}`, async () => (await live.cluster.get("agents.x-k8s.io/v1beta1", "Sandbox", "workspace", SESSION.ns)) !== undefined, 120_000);
  // A credential in the session's Namespace, as the operator's secret tooling puts one there: the
  // runtime granted edit must not be able to read it (issue 44, finding 2).
  await live.cluster.apply(gitTokenSecret(SESSION.ns, gitToken));

  for (const [ns, name, container] of [
    [FIXTURES_NS, "git", "git-server"],
    [FIXTURES_NS, "gateway", "admin"],
    [FIXTURES_NS, "stranger", "listen"],
    [CONTROL_NS, "control", "probe"],
    [DEV.ns, await jobPod(DEV.ns), "runtime"],
    [KUBE.ns, await jobPod(KUBE.ns), "runtime"],
    [SESSION.ns, "workspace", "runtime"],
  ] as const) {
    const p = await containerRunning(ns, name, container);
    podIPs[`${ns}/${name}`] = p.status.podIP;
  }
  say(`workloads running in ${((Date.now() - t) / 1000).toFixed(1)} s: ${JSON.stringify(podIPs)}`);
  // What the MCP gate adds to a workspace's start: its pod from creation to Ready, on this node.
  const gatePod = await waitFor(`the MCP gate's pod in ${DEV.ns} Ready`, async () => {
    const p = (await live.cluster.request("GET", `/api/v1/namespaces/${DEV.ns}/pods?labelSelector=workspaces.berth.dev%2Fcomponent%3Dmcp-gate`)).body?.items?.[0];
    return (p?.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True") && p;
  }, 240_000, 1000);
  const gateReady = (gatePod.status.conditions as { type: string; lastTransitionTime: string }[]).find((c) => c.type === "Ready");
  const jobPodNow = await pod(DEV.ns, await jobPod(DEV.ns));
  say(`MCP gate pod created ${gatePod?.metadata?.creationTimestamp}, Ready ${gateReady?.lastTransitionTime}; the runtime's Job pod created ${jobPodNow?.metadata?.creationTimestamp}`);
}, 900_000);

afterAll(async () => {
  for (const s of hostListeners) s.close();
  await openGate?.close();
  await recording?.close();
  await everything?.close();
  if (live && !stopped) await live.stop();
});

const devPod = async (): Promise<Where> => ({ ns: DEV.ns, pod: await jobPod(DEV.ns), container: "runtime" });
const kubePod = async (): Promise<Where> => ({ ns: KUBE.ns, pod: await jobPod(KUBE.ns), container: "runtime" });
const sessionPod: Where = { ns: SESSION.ns, pod: "workspace", container: "runtime" };
/** A call to the API server from the session's runtime, with its own token (workspace-probe kube). */
const asSessionRuntime = (path: string, method = "GET", body?: unknown) => probe(sessionPod, ["kube", path, "--method", method, ...(body === undefined ? [] : ["--body", JSON.stringify(body)])]);
/** The session's runtime lease, as its runtime reads it (its name is BERTH_RUNTIME_LEASE); undefined when there is none. */
async function sessionLease(): Promise<{ uid: string } | undefined> {
  const r = await asSessionRuntime(`/api/v1/namespaces/${SESSION.ns}/configmaps/runtime-lease`);
  return r.out.status === 200 ? { uid: r.out.uid } : undefined;
}
const sessionPods = `/api/v1/namespaces/${SESSION.ns}/pods`;
const ip = (ns: string, name: string) => podIPs[`${ns}/${name}`]!;

/** Every object the workspaces compose, by uid, and the resourceVersions of their Namespaces and PVCs. */
async function owned(): Promise<{ uids: Record<string, string>; versions: Record<string, string> }> {
  const uids: Record<string, string> = {};
  const versions: Record<string, string> = {};
  const xrs = [
    ["DeveloperWorkspace", `${DEV.id}-xr`],
    ["DeveloperWorkspace", `${KUBE.id}-xr`],
    ["ExecutionWorkspace", SESSION.name],
  ] as const;
  for (const [kind, name] of xrs) {
    const xr = (await live.cluster.get("workspaces.berth.dev/v1alpha1", kind, name)) as any;
    const refs: any[] = xr?.spec?.crossplane?.resourceRefs ?? [];
    expect(refs.length, `${kind} ${name} composes objects`).toBeGreaterThan(0);
    for (const r of refs) {
      const o = (await live.cluster.get(r.apiVersion, r.kind, r.name, r.namespace)) as any;
      const key = `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
      uids[key] = o?.metadata?.uid ?? "missing";
      if (r.kind === "Namespace" || r.kind === "PersistentVolumeClaim") versions[key] = o?.metadata?.resourceVersion ?? "missing";
    }
  }
  return { uids, versions };
}

describe("Crossplane and Berth, installed as operators install them", () => {
  it("Crossplane runs on the node from its Helm chart, with the package manager and its webhooks serving the API server", async () => {
    const release = await live.cluster.get<any>("v1", "Secret", "sh.helm.release.v1.crossplane.v1", CROSSPLANE_NAMESPACE);
    expect(release?.type, "Helm's release record").toBe("helm.sh/release.v1");
    for (const app of ["crossplane", "crossplane-rbac-manager"]) {
      const pods = await live.cp.kube.list<any>("v1", "Pod", CROSSPLANE_NAMESPACE, `app=${app}`);
      expect(pods.map((p) => [p.spec.nodeName, p.status.phase]), app).toEqual([[live.node.name, "Running"]]);
    }
    // The API server calls Crossplane's webhook: a ConfigMap a Usage protects cannot be deleted.
    const probe = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "live-webhook-probe", namespace: CROSSPLANE_NAMESPACE }, data: { why: "a Usage protects me" } };
    const usage = {
      apiVersion: "protection.crossplane.io/v1beta1",
      kind: "Usage",
      metadata: { name: "live-webhook-probe", namespace: CROSSPLANE_NAMESPACE },
      spec: { of: { apiVersion: "v1", kind: "ConfigMap", resourceRef: { name: probe.metadata.name } }, reason: "the live tier's webhook check" },
    };
    await live.cluster.apply(probe as any);
    await live.cluster.apply(usage as any);
    await waitFor("the Usage marks the ConfigMap in use", async () => (await live.cluster.getOf<any>(probe))?.metadata?.labels?.["crossplane.io/in-use"] === "true", 60_000);
    const path = await live.cluster.path("v1", "ConfigMap", probe.metadata.name, CROSSPLANE_NAMESPACE);
    const refused = await live.cluster.request("DELETE", `${path}?dryRun=All`);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body?.message).toMatch(/^admission webhook "nousages\.protection\.crossplane\.io" denied the request: This resource is in-use by 1 usage/);
    await live.cluster.delete(usage.apiVersion, usage.kind, usage.metadata.name, CROSSPLANE_NAMESPACE);
    await waitFor("the ConfigMap deleted once nothing uses it", async () => (await live.cluster.request("DELETE", path)).status === 200, 60_000);
  });

  it("install.sh run again on the installed cluster leaves Crossplane alone: no helm run, its Helm values (image overrides, CA bundle, args) and Deployment unchanged", async () => {
    const deployment = async () => {
      const d = await live.cluster.get<any>("apps/v1", "Deployment", "crossplane", CROSSPLANE_NAMESPACE);
      return { generation: d?.metadata?.generation, spec: d?.spec };
    };
    const releases = async () => (await live.cp.kube.list<any>("v1", "Secret", CROSSPLANE_NAMESPACE, "owner=helm,name=crossplane")).map((s) => s.metadata.name).sort();
    const valuesBefore = (await crossplaneHelmValues(live.cp, live.helm)) as any;
    // Crossplane was installed with values of its own (the image's repository, tag and pull policy,
    // the registry CA): the values a second run must not reset.
    expect(valuesBefore).toMatchObject({ image: { pullPolicy: "Never" }, registryCaBundleConfig: { name: "berth-registry-ca" }, args: ["--enable-operations"] });
    const [deploymentBefore, releasesBefore] = [await deployment(), await releases()];
    expect(releasesBefore).toEqual(["sh.helm.release.v1.crossplane.v1"]);
    const log = await live.reinstall();
    expect(log).toContain("already installed (Operations on; Helm not run, its values untouched)");
    expect(log).toMatch(/Berth v\S+ installed/);
    expect(await crossplaneHelmValues(live.cp, live.helm)).toEqual(valuesBefore);
    expect(await releases(), "no new Helm release revision").toEqual(releasesBefore);
    expect(await deployment()).toEqual(deploymentBefore);
  });

  it("the Function and Configuration are pulled from the registry; the function runs as Crossplane's Deployment runtime made it, and Crossplane calls it over TLS", async () => {
    const pkg = live.release;
    const fn = await live.cluster.get<any>("pkg.crossplane.io/v1", "Function", FUNCTION_NAME);
    expect(fn.spec.package).toBe(pkg.publicRef);
    expect(fn.status.resolvedPackage, "the ImageConfig's rewrite to the registry").toBe(pkg.ref);
    const configuration = await live.cluster.get<any>("pkg.crossplane.io/v1", "Configuration", "configuration-berth");
    expect(condition(configuration, "Healthy")?.status).toBe("True");
    // The Configuration's dependency on xpkg.crossplane.io/berth-dev/function-berth is the Function above.
    const source = pkg.publicRef.slice(0, pkg.publicRef.lastIndexOf(":"));
    const lock = await live.cluster.get<any>("pkg.crossplane.io/v1beta1", "Lock", "lock");
    const locked = (kind: string) => (lock?.packages ?? []).filter((p: any) => p.kind === kind);
    expect(locked("Function").map((p: any) => [p.source, p.version])).toEqual([[source, pkg.version]]);
    expect(locked("Configuration").map((p: any) => p.dependencies.map((d: any) => d.package))).toEqual([[source]]);
    expect(condition(lock, "Resolved")?.status).toBe("True");
    const pods = await live.cp.kube.list<Obj>("v1", "Pod", CROSSPLANE_NAMESPACE, `pkg.crossplane.io/function=${FUNCTION_NAME}`);
    expect(pods.length).toBe(1);
    const fnPod = pods[0]! as any;
    const status = fnPod.status.containerStatuses[0];
    expect(status.ready).toBe(true);
    // What containerd runs is what the registry holds under the package's reference (the
    // package's layers are the image's plus package.yaml: test/conformance/crossplane-cli.ts).
    expect(status.image).toBe(pkg.ref);
    expect(status.imageID).toBe(`${pkg.ref.slice(0, pkg.ref.lastIndexOf(":"))}@${pkg.digest}`);
    // Its process, read on the host: the image's ENTRYPOINT, as the uid Crossplane's runtime
    // sets for every package (2000: its default pod security context), never root.
    const pid = await live.node.containerPid(CROSSPLANE_NAMESPACE, fnPod.metadata.name, "package-runtime");
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean)).toEqual(shippedRuntime().entrypoint);
    const uid = fnPod.spec.containers[0].securityContext.runAsUser;
    expect(uid).toBeGreaterThan(0);
    expect(readFileSync(`/proc/${pid}/status`, "utf8")).toMatch(new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, "m"));
    // Crossplane dials the Service by name, and the workspace it composed through it is Synced.
    const revision = (await live.cp.kube.list<any>("pkg.crossplane.io/v1", "FunctionRevision", undefined, `pkg.crossplane.io/package=${FUNCTION_NAME}`)).find((r) => r.spec.desiredState === "Active");
    expect(revision.status.endpoint).toBe(`dns:///${FUNCTION_NAME}.${CROSSPLANE_NAMESPACE}:9443`);
    const xr = await live.cluster.get("workspaces.berth.dev/v1alpha1", "DeveloperWorkspace", `${DEV.id}-xr`);
    expect(condition(xr!, "Synced")?.status).toBe("True");
  });
});

describe("a DeveloperWorkspace's Job pod", () => {
  it("is admitted under Pod Security restricted, which refuses a privileged pod there and not in the control namespace", async () => {
    const ns = await live.cluster.get("v1", "Namespace", DEV.ns);
    expect(ns!.metadata!.labels!["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const running = await pod(DEV.ns, await jobPod(DEV.ns));
    expect(running!.spec.hostUsers).toBe(false);

    const privileged = (namespace: string) =>
      ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "privileged", namespace },
        spec: { containers: [{ name: "c", image: "berth.local/live/workspace-runtime:live", securityContext: { privileged: true } }] },
      }) as Obj;
    const inWorkspace = await live.cluster.create(privileged(DEV.ns), { dryRun: true });
    expect(inWorkspace.status, inWorkspace.text).toBe(403);
    expect(inWorkspace.body.message).toContain('violates PodSecurity "restricted:latest"');
    const inControl = await live.cluster.create(privileged(CONTROL_NS), { dryRun: true });
    expect(inControl.status, inControl.text).toBe(201);
  });

  it("runs in a user namespace: container uid 0 is a host uid that is not 0 (read on the host), unlike the control pod", async () => {
    const uidMap = async (w: Where) => readFileSync(`/proc/${await live.node.containerPid(w.ns, w.pod, w.container)}/uid_map`, "utf8").trim().split(/\s+/).map(Number);
    const [inside, outside, count] = await uidMap(await devPod());
    expect(inside).toBe(0);
    expect(outside).toBeGreaterThan(0);
    expect(count).toBe(65536);
    const inspect = await probe(await devPod(), ["inspect"]);
    expect(inspect.out.uid).toBe(65532);
    // Control: a pod in the host's user namespace maps 0 to 0.
    expect((await uidMap(control)).slice(0, 2)).toEqual([0, 0]);
  });

  it("the checkout init container cloned the declared revision with the Git credential; without it the server answers 401", async () => {
    const record = await probe(await devPod(), ["read", "/workspace/.berth-checkout.json"]);
    allowed(record, "reading the checkout record");
    expect(JSON.parse(record.out.content)).toMatchObject({ revision: "main", commit: FIXTURE_MAIN });
    const file = await probe(await devPod(), ["read", "/workspace/src/src/hello.txt"]);
    allowed(file, "reading the checked-out file");
    expect(file.out.content).toBe("hello from the fixture\n");
    // Control: the repository is not readable without the token (so the clone used it).
    const anonymous = await probe(control, ["http", `https://${GIT_HOST}/fixture.git/info/refs?service=git-upload-pack`]);
    refused(anonymous, "an anonymous fetch");
    expect(anonymous.out.status).toBe(401);
  });

  it("the runtime has no credential in its environment or files, and no ServiceAccount token; find-string finds the token where it is", async () => {
    const w = await devPod();
    const search = await probe(w, ["find-string", gitToken, "/"]);
    allowed(search, "searching the runtime for the git token");
    expect(search.out.foundCount).toBe(0);
    expect(search.out.filesScanned).toBeGreaterThan(0);
    const inspect = await probe(w, ["inspect"]);
    expect(inspect.out.serviceAccountToken).toBe(false);
    expect(inspect.out.envNames).not.toContain("GIT_TOKEN");
    // Controls: the same search finds the token in the control pod's environment, and a
    // workspace with kubernetes access read does get a token.
    const found = await probe(control, ["find-string", gitToken, "/"]);
    expect(found.code, found.raw).toBe(1);
    expect(found.out.found).toContain("env:CONTROL_GIT_TOKEN");
    expect((await probe(await kubePod(), ["inspect"])).out.serviceAccountToken).toBe(true);
  });

  it("has a read-only root filesystem; /workspace, /tmp and home are writable", async () => {
    const inspect = await probe(await devPod(), ["inspect"]);
    const writable = inspect.out.writable;
    expect(writable["/"]).toMatchObject({ ok: false, reason: "read-only file system" });
    for (const dir of ["/workspace", "/tmp", "$HOME"]) expect(writable[dir], `${dir}: ${JSON.stringify(writable[dir])}`).toMatchObject({ ok: true });
    expect(writable["$HOME"].path).toBe("/home/workspace");
  });
});

describe("egress from a workspace", () => {
  it("reaches cluster DNS and the reviewed Service on its declared port", async () => {
    const w = await devPod();
    const dns = await probe(w, ["dns", `gateway.${FIXTURES_NS}.svc.cluster.local`]);
    allowed(dns, "resolving the gateway");
    allowed(await probe(w, ["tcp", `gateway.${FIXTURES_NS}.svc.cluster.local:80`]), "the gateway Service");
    allowed(await probe(w, ["tcp", `${ip(FIXTURES_NS, "gateway")}:${PROBE_PORT}`]), "the gateway pod on its declared port");
  });

  it("is refused the same pod on an undeclared port (control: reachable from the control namespace)", async () => {
    const target = `${ip(FIXTURES_NS, "gateway")}:${UNDECLARED_PORT}`;
    refused(await probe(await devPod(), ["tcp", target]), "the gateway's undeclared port");
    allowed(await probe(control, ["tcp", target]), "control: the gateway's undeclared port");
  });

  it("is refused a pod no capability names (control: reachable from the control namespace)", async () => {
    const target = `${ip(FIXTURES_NS, "stranger")}:${PROBE_PORT}`;
    refused(await probe(await devPod(), ["tcp", target]), "the stranger pod");
    allowed(await probe(control, ["tcp", target]), "control: the stranger pod");
  });

  it("reaches the reviewed CIDR destination on its port, and is refused the same address on another port", async () => {
    const w = await devPod();
    const declared = `${addresses.hostIP}:${addresses.declaredHostPort}`;
    const undeclared = `${addresses.hostIP}:${addresses.undeclaredHostPort}`;
    const ok = await probe(w, ["tcp", declared]);
    allowed(ok, "the reviewed CIDR destination");
    expect(ok.out.banner).toContain("berth-host");
    refused(await probe(w, ["tcp", undeclared]), "an undeclared port on the reviewed address");
    allowed(await probe(control, ["tcp", undeclared]), "control: the undeclared port");
  });

  it("is refused the API server without kubernetes access (controls: the control pod, and a workspace with access read)", async () => {
    const api = `${kubernetesServiceIP}:443`;
    refused(await probe(await devPod(), ["tcp", api]), "the API server");
    allowed(await probe(control, ["tcp", api]), "control: the API server");
    allowed(await probe(await kubePod(), ["tcp", api]), "a workspace with kubernetes access read: the API server");
  });
});

describe("ingress to a workspace", () => {
  it("is refused from another workspace and from the control namespace, while the runtime listens (control: its own loopback)", async () => {
    const target = `${ip(DEV.ns, await jobPod(DEV.ns))}:${PROBE_PORT}`;
    refused(await probe(await kubePod(), ["tcp", target]), "another workspace's pod to this one");
    refused(await probe(control, ["tcp", target]), "the control pod to the workspace");
    allowed(await probe(await devPod(), ["tcp", `127.0.0.1:${PROBE_PORT}`]), "control: the runtime's own listener");
    allowed(await probe(control, ["tcp", `${ip(FIXTURES_NS, "stranger")}:${PROBE_PORT}`]), "control: the same probe to an unrestricted pod");
  });
});

describe("declared MCP tools: the runtime reaches the MCP servers only through its gate, which offers and forwards only the declared tools", () => {
  const gateUrl = (server: string) => `http://mcp-gate:8080/mcp/${server}`;
  const openUrl = (server: string) => `${openGate.url}/mcp/${server}`;
  const added = new Set<string>();

  /** One session from inside a pod: initialize, initialized, then `probe`; the probe's reply. */
  async function exchange(where: Where, url: string, probe: { body: string; headers?: Readonly<Record<string, string>> }): Promise<{ status: number; messages: RpcMessage[]; raw: string }> {
    const steps = [...OPEN_SESSION.map((body) => ({ body })), { body: probe.body, headers: probe.headers ?? {} }];
    const r = await probe_(where, ["mcp", url, "--script", JSON.stringify(steps)]);
    allowed(r, `an MCP session to ${url}`);
    const replies = r.out.replies as { status: number; contentType: string; body: string }[];
    expect(replies[0]!.status, `initialize: ${r.raw}`).toBe(200);
    const last = replies.at(-1)!;
    return { status: last.status, messages: messagesOf(last.contentType, last.body), raw: r.raw };
  }
  const probe_ = probe;

  /** Refused by the gate, with nothing forbidden upstream; through the open gate, the same bytes arrive. */
  async function refusedWithControl(server: "recording" | "everything", upstream: Recorder, p: NegativeProbe): Promise<void> {
    if (p.addedAtRunTime && !added.has(p.addedAtRunTime)) {
      await recording.addTool(p.addedAtRunTime);
      added.add(p.addedAtRunTime);
    }
    upstream.clear();
    const gated = await exchange(await devPod(), gateUrl(server), p);
    const answered = gated.messages.filter((m) => m.id !== undefined && m.method === undefined);
    expect(answered.length, `${p.name}: an answer from the gate: ${gated.raw}`).toBeGreaterThan(0);
    for (const m of answered) expect(m.error, `${p.name}: refused: ${gated.raw}`).toBeDefined();
    expect(upstream.messages.filter((m) => isForbidden(p.forbidden, m) && !("anything" in p.forbidden && SESSION_METHODS.includes(m.method ?? ""))), `${p.name}: nothing forbidden upstream`).toEqual([]);

    upstream.clear();
    const open = await exchange(control, openUrl(server), p);
    expect(upstream.messages.filter((m) => isForbidden(p.forbidden, m) && !("anything" in p.forbidden && SESSION_METHODS.includes(m.method ?? ""))).length, `${p.name}, control: it reaches the server with enforcement off: ${open.raw}`).toBeGreaterThan(0);
  }
  /** What the gate sends on its own when a session opens: not the probe's doing. */
  const SESSION_METHODS = ["initialize", "notifications/initialized", "tools/list"];

  it("the runtime is refused a direct connection to the MCP servers (control: the control pod connects)", async () => {
    for (const port of [addresses.mcpRecordingPort!, addresses.mcpEverythingPort!]) {
      const target = `${addresses.hostIP}:${port}`;
      refused(await probe(await devPod(), ["tcp", target]), `the runtime to the MCP server at ${target}`);
      allowed(await probe(control, ["tcp", target]), `control: the MCP server at ${target}`);
    }
  });

  it("tools/list through the gate is the declared tools the server has, from every page; a declared tool is called, with the gate's credential", async () => {
    const list = await exchange(await devPod(), gateUrl("recording"), { body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }) });
    const names = ((list.messages[0]?.result?.tools ?? []) as { name: string }[]).map((t) => t.name);
    expect(names, list.raw).toEqual(["search", "fetch", "ask-model", ...(added.has("later-tool") ? ["later-tool"] : [])]);
    const open = await exchange(control, openUrl("recording"), { body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }) });
    expect(((open.messages[0]?.result?.tools ?? []) as unknown[]).length, "control: the server's first page alone, unfiltered").toBeGreaterThan(0);

    recording.clear();
    const call = await exchange(await devPod(), gateUrl("recording"), { body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "fetch", arguments: {} } }) });
    expect(call.messages.find((m) => m.id === 3)?.result, call.raw).toBeDefined();
    expect(recording.messages.filter((m) => m.method === "tools/call").map((m) => m.params?.name)).toEqual(["fetch"]);
    expect(recording.requests.every((r) => r.headers.authorization === `Bearer ${mcpToken}`), "every request upstream carries the gate's credential").toBe(true);
  });

  it("a declared tool added at run time is offered once the server has it; an undeclared one is not", async () => {
    for (const tool of ["later-tool", "rogue-tool"]) {
      if (!added.has(tool)) await recording.addTool(tool);
      added.add(tool);
    }
    const list = await exchange(await devPod(), gateUrl("recording"), { body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }) });
    const names = ((list.messages[0]?.result?.tools ?? []) as { name: string }[]).map((t) => t.name);
    expect(names, list.raw).toContain("later-tool");
    expect(names).not.toContain("rogue-tool");
  });

  it("the MCP credential is in neither the runtime's environment nor its files (control: the gate holds it)", async () => {
    const search = await probe(await devPod(), ["find-string", mcpToken, "/"]);
    allowed(search, "searching the runtime for the MCP token");
    expect(search.out.foundCount).toBe(0);
  });

  it.each(NEGATIVE_PROBES.map((p) => [p.name, p] as const))("recording server: %s is refused by the gate and reaches nothing upstream (control: it arrives with enforcement off)", async (_, p) => {
    await refusedWithControl("recording", recording, p);
  });

  it.each(basicProbes("echo", "get-env").map((p) => [p.name, p] as const))("server-everything: %s is refused by the gate and reaches nothing upstream (control: it arrives with enforcement off)", async (_, p) => {
    await refusedWithControl("everything", everything, p);
  });

  it("server-everything: the gate offers exactly echo and get-sum, and get-sum answers", async () => {
    const list = await exchange(await devPod(), gateUrl("everything"), { body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }) });
    expect(((list.messages[0]?.result?.tools ?? []) as { name: string }[]).map((t) => t.name).sort(), list.raw).toEqual([...MCP.everything.tools].sort());
    const sum = await exchange(await devPod(), gateUrl("everything"), { body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get-sum", arguments: { a: 2, b: 3 } } }) });
    expect(JSON.stringify(sum.messages.find((m) => m.id === 3)?.result), sum.raw).toContain("5");
  });
});

describe("kubernetes access read", () => {
  it("lists pods in the workspace namespace and is forbidden everything outside the Role", async () => {
    const w = await kubePod();
    const list = await probe(w, ["kube", `/api/v1/namespaces/${KUBE.ns}/pods`]);
    allowed(list, "listing the workspace's pods");
    expect(list.out.names).toContain(w.pod);
    for (const path of [`/api/v1/namespaces/${KUBE.ns}/secrets`, `/api/v1/namespaces/${DEV.ns}/pods`, "/api/v1/namespaces", "/api/v1/nodes"]) {
      const r = await probe(w, ["kube", path]);
      refused(r, `GET ${path}`);
      expect(r.out.status, r.raw).toBe(403);
    }
  });
});

describe("kubernetes access edit: what the session's runtime makes, with its own token", () => {
  it("a pod of its making that names the git Secret of its Namespace is refused, so its log can never hand the runtime the token; so are one that asks for nothing and one it does not own", async () => {
    const lease = await sessionLease();
    const secretEnv = (p: any) => (p.spec.containers[0].env = [{ name: "T", valueFrom: { secretKeyRef: { name: "git-token", key: "token" } } }]);
    const zero = (p: any) => (p.spec.containers[0].resources = { requests: { cpu: "0", memory: "0" }, limits: { cpu: "0", memory: "0" } });
    // The attack as 539ceab let it through: a pod that asks for nothing (the quota counts it as
    // nothing, and the runtime's own pod takes the whole budget) and prints the Secret. Admitted,
    // run by the kubelet, its log read back with the runtime's own token.
    const leak = await asSessionRuntime(sessionPods, "POST", runtimeMadePod(SESSION.ns, "leak", lease, ["say-and-exit", "0", "$(T)"], (p) => (secretEnv(p), zero(p))));
    if (leak.out.status === 201) {
      const log = await waitFor("the admitted pod's log", async () => {
        const l = await asSessionRuntime(`${sessionPods}/leak/log`);
        return l.out.status === 200 && l.out.text !== "" && (l.out.text as string);
      }, 120_000).catch((e) => String(e));
      await live.cluster.delete("v1", "Pod", "leak", SESSION.ns);
      throw new Error(`the runtime's pod naming the git Secret was admitted; its log, read with the runtime's own token, ${log.includes(gitToken) ? "is the git token" : `says ${JSON.stringify(log)}`}`);
    }
    expect(leak.out.status, `a pod asking for nothing, which the quota counts as nothing and the kubelet runs unbounded: ${leak.raw}`).toBe(403);
    expect(leak.out.error, leak.raw).toContain("minimum cpu usage per Container is 1m");

    // The same within the workspace's budget for its runtime's pods: refused by the policy.
    const r = await asSessionRuntime(sessionPods, "POST", runtimeMadePod(SESSION.ns, "leak", lease, ["say-and-exit", "0", "$(T)"], secretEnv));
    refused(r, "the runtime making a pod that names the git Secret");
    expect(r.out.status, r.raw).toBe(403);
    expect(r.out.error, r.raw).toContain("ValidatingAdmissionPolicy 'berth-workspace-runtime'");
    expect(r.out.error, r.raw).toContain("may not reference a Secret");

    const unowned = await asSessionRuntime(sessionPods, "POST", runtimeMadePod(SESSION.ns, "unowned", undefined, ["listen", "8081"]));
    expect(unowned.out.status, `a pod the lease does not own, which would outlive a suspend: ${unowned.raw}`).toBe(403);
    expect(unowned.out.error, unowned.raw).toContain("only what it made");
  });

  it("control: a pod that follows the rules runs; the runtime reads its log and deletes it", async () => {
    const lease = await sessionLease();
    expect(lease, "the runtime reads its lease").toBeDefined();
    allowed(await asSessionRuntime(sessionPods, "POST", runtimeMadePod(SESSION.ns, "made", lease, ["say-and-exit", "0", "made by the runtime"])), "the runtime making a pod that follows the rules");
    await waitFor("the runtime's pod Succeeded", async () => (await pod(SESSION.ns, "made"))?.status?.phase === "Succeeded", 120_000, 1000).catch(async (e) => {
      throw new Error(`${e instanceof Error ? e.message : e}; ${await whyNotRunning(SESSION.ns, "made")}`);
    });
    const log = await asSessionRuntime(`${sessionPods}/made/log`);
    allowed(log, "the runtime reading its pod's log");
    expect(log.out.text).toBe("made by the runtime");
    allowed(await asSessionRuntime(`${sessionPods}/made`, "DELETE"), "the runtime deleting its pod");
    await waitFor("the runtime's pod gone", async () => (await pod(SESSION.ns, "made")) === undefined, 60_000);
  });
});

describe("bounds", () => {
  it("writing past the volume's size fails with ENOSPC; writing within it succeeds", async () => {
    const w = await devPod();
    allowed(await probe(w, ["write", "/workspace/within", "16Mi"]), "writing 16Mi to a 64Mi volume");
    const past = await probe(w, ["write", "/workspace/past", "96Mi"]);
    refused(past, "writing 96Mi to a 64Mi volume");
    expect(past.out.reason).toBe("no space left on device");
  });

  it("a pod asking for more than the LimitRange max is refused there; the same pod is admitted in the control namespace", async () => {
    // The LimitRange's max is the workspace's own resources (128Mi), and its ResourceQuota is
    // already used by the running Job, so the control is the same pod where no LimitRange is.
    const template = (await pod(DEV.ns, await jobPod(DEV.ns)))!.spec;
    const asking = (namespace: string) =>
      ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "asks-1gi", namespace },
        spec: {
          ...template,
          nodeName: undefined,
          serviceAccountName: undefined,
          serviceAccount: undefined,
          initContainers: undefined,
          volumes: template.volumes.filter((v: any) => v.name !== "workspace"),
          containers: template.containers.map((c: any) => ({
            ...c,
            volumeMounts: c.volumeMounts.filter((m: any) => m.name !== "workspace"),
            resources: { requests: { cpu: "100m", memory: "1Gi" }, limits: { cpu: "100m", memory: "1Gi" } },
          })),
        },
      }) as Obj;
    const over = await live.cluster.create(asking(DEV.ns), { dryRun: true });
    expect(over.status, over.text).toBe(403);
    // The workspace's own 128Mi, raised to its MCP gate's 256Mi (the profile's default for the gate).
    expect(over.body.message).toContain("maximum memory usage per Container is 256Mi");
    const control = await live.cluster.create(asking(CONTROL_NS), { dryRun: true });
    expect(control.status, control.text).toBe(201);
  });
});

describe("what a workspace uses", () => {
  it("status.usage counts the running Job pod against the quota, and kubectl get prints it", async () => {
    const name = `${KUBE.id}-xr`;
    const usage = await waitFor(`${name}'s status.usage counting its pod`, async () => {
      const u = (await live.cluster.get<any>("workspaces.berth.dev/v1alpha1", "DeveloperWorkspace", name))?.status?.usage;
      return u?.pods === "1/4" && u;
    }, 120_000, 1000);
    // The runtime's limits are the workspace's resources (100m, 128Mi); an ephemeral workspace has no volume budget.
    expect(usage).toEqual({ cpu: "100m/100m", memory: "128Mi/128Mi", pods: "1/4" });
    const printed = await printedColumns(live.cluster, "workspaces.berth.dev/v1alpha1", "DeveloperWorkspace", name);
    expect([printed.CPU, printed.MEMORY]).toEqual(["100m/100m", "128Mi/128Mi"]);
  });
});

describe("drift on a live boundary", () => {
  it("a deleted default-deny NetworkPolicy is restored by Crossplane, and the refused connection is refused again", async () => {
    const target = `${ip(DEV.ns, await jobPod(DEV.ns))}:${PROBE_PORT}`;
    refused(await probe(control, ["tcp", target]), "ingress before the drift");
    const original = await live.cluster.get("networking.k8s.io/v1", "NetworkPolicy", "default-deny", DEV.ns);
    await live.cluster.delete("networking.k8s.io/v1", "NetworkPolicy", "default-deny", DEV.ns);
    const t = Date.now();
    // Opportunistic: while it is gone, ingress is open (not asserted: Crossplane may be faster than the probe).
    const during = await probe(control, ["tcp", target]);
    say(`while default-deny was deleted, ingress was ${during.code === 0 ? "open" : "still refused (already restored, or not yet unprogrammed)"}`);
    const current = () => live.cluster.get("networking.k8s.io/v1", "NetworkPolicy", "default-deny", DEV.ns);
    await undoneByCrossplane(live.cluster, { apiVersion: "workspaces.berth.dev/v1alpha1", kind: "DeveloperWorkspace", name: `${DEV.id}-xr` }, "default-deny restored", async () => {
      const np = await current();
      return np !== undefined && np.metadata!.uid !== original!.metadata!.uid;
    }, 180_000);
    say(`default-deny restored in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    expect((await current())!.spec).toEqual(original!.spec);
    // kube-router programs the restored policy on its next sync; refused again within that.
    await waitFor("ingress refused again", async () => (await probe(control, ["tcp", target])).code === 1, 120_000, 1000);
  });
});

describe("the run's outcome", () => {
  it("the Job completes when the runtime finishes; status.outcome is recorded and stays after the Job is deleted", async () => {
    allowed(await probe(await devPod(), ["finish", "0"]), "asking the runtime to finish");
    const xr = (await live.cluster.get("workspaces.berth.dev/v1alpha1", "DeveloperWorkspace", `${DEV.id}-xr`))!;
    await waitFor("the Job Complete", async () => condition(await live.cluster.get("batch/v1", "Job", "workspace", DEV.ns), "Complete")?.status === "True", 120_000);
    const recorded = await waitFor(
      "status.outcome recorded",
      async () => (await live.cluster.getOf(xr))?.status?.outcome,
      120_000,
    );
    expect(recorded).toMatchObject({ result: "Succeeded", reason: "Completed" });
    const finished = (await live.cluster.get("batch/v1", "Job", "workspace", DEV.ns))!;
    expect(finished.spec.suspend, "Berth keeps a finished Job suspended").toBe(true);
    await live.cluster.delete("batch/v1", "Job", "workspace", DEV.ns);
    await waitFor("the finished Job gone", async () => (await live.cluster.get("batch/v1", "Job", "workspace", DEV.ns))?.metadata?.uid !== finished.metadata!.uid, 60_000);
    // Give Crossplane reconciles to (wrongly) run the agent again or drop the outcome. A
    // reconcile that saw the Job before the deletion may re-create it; Berth keeps a finished
    // Job suspended, so such a Job starts no pod.
    await sleep(20_000);
    const again = await live.cluster.get("batch/v1", "Job", "workspace", DEV.ns);
    say(`after the Job's deletion: ${again ? `re-created by an in-flight reconcile, suspend: ${again.spec.suspend}` : "it stayed gone"}`);
    if (again) expect(again.spec.suspend, "a re-created Job must not run the agent again").toBe(true);
    const pods = await live.cluster.request("GET", `/api/v1/namespaces/${DEV.ns}/pods?labelSelector=job-name%3Dworkspace`);
    expect(pods.body.items.map((p: Obj) => p.metadata!.name)).toEqual([]);
    expect((await live.cluster.getOf(xr))?.status?.outcome).toEqual(recorded);
  });
});

describe("evidence exported before clean-up: the run's outcome, verification and changes, pushed to the registry by the export alone", () => {
  const API = "workspaces.berth.dev/v1alpha1";
  // Two workspaces that export to the harness's registry (one persistent that succeeds with a
  // failing verification, one ephemeral whose runtime fails with a passing one), and one whose
  // registry refuses every push.
  const EXPORTING = [
    { id: "live-ev-p", ns: "ws-live-ev-p", storage: "persistent", exit: 0, verification: { exitCode: 3, output: "1 of 12 checks failed" } },
    { id: "live-ev-e", ns: "ws-live-ev-e", storage: "ephemeral", exit: 1, verification: { exitCode: 0, output: "12 checks passed" } },
  ] as const;
  const REFUSED = { id: "live-ev-r", ns: "ws-live-ev-r" };
  const evidenceToken = randomBytes(18).toString("hex");
  const xrOf = (id: string) => live.cluster.get(API, "DeveloperWorkspace", `${id}-xr`);
  const runtimeOf = async (ns: string): Promise<Where> => ({ ns, pod: await jobPod(ns), container: "runtime" });
  /** What each runtime writes: a change to a file of the revision, and a new file in a new folder. */
  const LOGO_BYTES = 3000;
  const changes = (id: string) => ({ "README.md": `berth live fixture\nchanged by the agent in ${id}\n`, "notes/agent.md": `what ${id} did\nno trailing newline` });

  beforeAll(async () => {
    const t = Date.now();
    for (const w of EXPORTING) {
      const verify = ["/workspace-probe", "say-and-exit", String(w.verification.exitCode), w.verification.output];
      await live.cluster.apply(developerWorkspace(w.id, { storage: w.storage, kubernetes: "none", evidence: { verification: verify } }));
    }
    await live.cluster.apply(developerWorkspace(REFUSED.id, { storage: "persistent", kubernetes: "none", evidence: { verification: ["/workspace-probe", "say-and-exit", "0", "ok"], profile: REFUSING_PROFILE } }));
    for (const ns of [...EXPORTING.map((w) => w.ns), REFUSED.ns]) {
      await waitFor(`namespace ${ns}`, async () => (await live.cluster.get("v1", "Namespace", ns)) !== undefined, 120_000);
      await live.cluster.apply(gitTokenSecret(ns, gitToken));
      await live.cluster.apply(evidencePushSecret(ns, live.registry.host, evidenceToken));
    }
    for (const ns of [...EXPORTING.map((w) => w.ns), REFUSED.ns]) await containerRunning(ns, await jobPod(ns), "runtime");
    say(`evidence workspaces running in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }, 600_000);

  it("the runtime cannot reach the registry (control: the control pod can), and the push credential is in neither its files nor its environment", async () => {
    const target = live.registry.host;
    for (const ns of [...EXPORTING.map((w) => w.ns), REFUSED.ns]) {
      const w = await runtimeOf(ns);
      refused(await probe(w, ["tcp", target, "--timeout", "3s"]), `the runtime in ${ns} connecting to the registry ${target}`);
      const search = await probe(w, ["find-string", evidenceToken, "/"]);
      allowed(search, `searching the runtime in ${ns} for the push credential`);
      expect(search.out.foundCount).toBe(0);
      expect(search.out.filesScanned).toBeGreaterThan(0);
    }
    allowed(await probe(control, ["tcp", target]), "the control pod connecting to the registry");
  });

  it("a persistent and an ephemeral workspace finish; the artifact pulled back holds the outcome as recorded, the runtime's verification, and a patch that applied to the checked-out revision gives the files the runtime wrote; the digest in status is the registry's", async () => {
    for (const w of EXPORTING) {
      const runtime = await runtimeOf(w.ns);
      for (const [path, text] of Object.entries(changes(w.id))) allowed(await probe(runtime, ["write-text", `/workspace/src/${path}`, text]), `writing ${path}`);
      // A binary file changed too (the fixture's attributes call *.png binary): the patch carries it.
      allowed(await probe(runtime, ["write", "/workspace/src/logo.png", String(LOGO_BYTES)]), "rewriting logo.png");
      const verified = await probe(runtime, ["verify"]);
      allowed(verified, "the runtime running its verification");
      expect(verified.out.exitCode).toBe(w.verification.exitCode);
      allowed(await probe(runtime, ["finish", String(w.exit)]), "asking the runtime to finish");
    }
    for (const w of EXPORTING) {
      const t = Date.now();
      const xr = await waitFor(`${w.id}: status.outcome.evidence recorded`, async () => {
        const x = await xrOf(w.id);
        return x?.status?.outcome?.evidence !== undefined && x;
      }, 300_000, 1000).catch(async (e) => {
        const x = await xrOf(w.id);
        throw new Error(`${e instanceof Error ? e.message : e}; the XR says ${JSON.stringify({ phase: x?.status?.phase, reason: x?.status?.reason, message: x?.status?.message, evidence: x?.status?.evidence, outcome: x?.status?.outcome })}`);
      });
      const { evidence, verification, ...outcome } = xr.status.outcome;
      say(`${w.id}: evidence recorded ${((Date.now() - t) / 1000).toFixed(1)} s after the runtime finished: ${evidence.repository}@${evidence.digest}`);
      expect(outcome.result).toBe(w.exit === 0 ? "Succeeded" : "Failed");
      expect(verification).toEqual({ ...w.verification, reportedBy: "runtime" });
      expect(evidence).toMatchObject({ repository: `${live.registry.host}/${EVIDENCE_REPOSITORY}`, tag: w.id });
      expect(xr.status.evidence).toMatchObject({ state: "Exported" });

      // Pulled back: the tag and the digest name the same manifest, whose bytes hash to the digest.
      expect(await live.registry.manifestDigest(EVIDENCE_REPOSITORY, w.id)).toBe(evidence.digest);
      const manifestRes = await live.registry.pull(`/v2/${EVIDENCE_REPOSITORY}/manifests/${evidence.digest}`, "application/vnd.oci.image.manifest.v1+json");
      expect(manifestRes.status).toBe(200);
      expect(`sha256:${createHash("sha256").update(manifestRes.body).digest("hex")}`).toBe(evidence.digest);
      const manifest = JSON.parse(manifestRes.body.toString("utf8"));
      expect(manifest.artifactType).toBe("application/vnd.berth.evidence.v1");
      const layers: Record<string, Buffer> = {};
      for (const layer of manifest.layers as { digest: string; annotations: Record<string, string> }[]) {
        const blob = await live.registry.pull(`/v2/${EVIDENCE_REPOSITORY}/blobs/${layer.digest}`);
        expect(`sha256:${createHash("sha256").update(blob.body).digest("hex")}`).toBe(layer.digest);
        layers[layer.annotations["org.opencontainers.image.title"]!] = blob.body;
      }
      expect(Object.keys(layers)).toEqual(["outcome.json", "verification.json", "changes.patch"]);
      expect(JSON.parse(layers["outcome.json"]!.toString())).toEqual({
        workspaceID: w.id,
        source: { repository: GIT_REPOSITORY, revision: "main", commit: FIXTURE_MAIN },
        outcome,
        // README.md and logo.png modified, notes/agent.md added; the untouched files, which git
        // converts on checkout (*.txt eol=crlf), are not changes.
        changes: { files: { added: 1, modified: 2, deleted: 0 }, leftOut: [], notCollected: null },
      });
      expect(JSON.parse(layers["verification.json"]!.toString())).toEqual({ ...w.verification, reportedBy: "runtime" });

      // The patch, applied by git to the revision's files, gives what the runtime wrote.
      const patch = layers["changes.patch"]!.toString("latin1");
      expect(patch).toContain("diff --git a/logo.png b/logo.png\n");
      expect(patch).toContain("\nGIT binary patch\n");
      const dir = mkdtempSync(join(tmpdir(), "berth-live-evidence-"));
      try {
        for (const [path, content] of Object.entries(FIXTURE_FILES)) {
          mkdirSync(join(dir, path, ".."), { recursive: true });
          writeFileSync(join(dir, path), content);
        }
        writeFileSync(join(dir, "..", `${w.id}.patch`), layers["changes.patch"]!);
        execFileSync("git", ["apply", join(dir, "..", `${w.id}.patch`)], { cwd: dir, stdio: "pipe" });
        for (const [path, text] of Object.entries(changes(w.id))) expect(readFileSync(join(dir, path), "utf8"), path).toBe(text);
        expect(readFileSync(join(dir, "src", "hello.txt"))).toEqual(FIXTURE_FILES["src/hello.txt"]);
        // git apply checked the binary file against the blob id the patch names; so does this.
        const logo = readFileSync(join(dir, "logo.png"));
        expect(logo.length).toBe(LOGO_BYTES);
        const postimage = /^diff --git a\/logo\.png b\/logo\.png\nindex [0-9a-f]{40}\.\.([0-9a-f]{40})/m.exec(patch)?.[1];
        expect(createHash("sha1").update(`blob ${logo.length}\0`).update(logo).digest("hex")).toBe(postimage);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        rmSync(join(dir, "..", `${w.id}.patch`), { force: true });
      }
      // The retention clean-up, withheld until now, is the Job's again.
      const job = await live.cluster.get("batch/v1", "Job", "workspace", w.ns);
      if (job) expect(job.spec.ttlSecondsAfterFinished).toBe(60);
    }
  });

  it("a registry that refuses leaves the workspace saying why with nothing deleted, and the workspace is not deleted until its evidence is recorded or an operator waives it", async () => {
    allowed(await probe(await runtimeOf(REFUSED.ns), ["finish", "0"]), "asking the runtime to finish");
    const xr = await waitFor(`${REFUSED.id}: the export's failure in status`, async () => {
      const x = await xrOf(REFUSED.id);
      return x?.status?.evidence?.state === "Failed" && x;
    }, 300_000, 1000);
    expect(xr.status.evidence).toMatchObject({ state: "Failed", reason: "Refused" });
    expect(xr.status.evidence.message).toContain("403");
    expect(xr.status.evidence.attempts).toBeGreaterThanOrEqual(1);
    expect([xr.status.phase, xr.status.reason]).toEqual(["Ready", "EvidenceExportFailed"]);
    expect(xr.status.outcome).toMatchObject({ result: "Succeeded", reason: "Completed" });
    expect(xr.status.outcome.evidence).toBeUndefined();
    const events = await live.cluster.request("GET", `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${REFUSED.id}-xr`);
    expect((events.body?.items ?? []).map((e: { message: string }) => e.message).join("\n")).toContain("the evidence export failed");
    say(`${REFUSED.id}: ${xr.status.message}`);

    // Deleting it now is refused, administrators included, and nothing is deleted.
    const path = `/apis/workspaces.berth.dev/v1alpha1/developerworkspaces/${REFUSED.id}-xr`;
    const refusedDelete = await live.cluster.request("DELETE", path);
    expect(refusedDelete.status, refusedDelete.text).toBe(403);
    expect(refusedDelete.body.message).toContain("berth-evidence-before-cleanup");
    expect((await xrOf(REFUSED.id))?.metadata?.deletionTimestamp).toBeUndefined();
    expect(await live.cluster.get("v1", "PersistentVolumeClaim", "workspace", REFUSED.ns)).toBeDefined();
    const job = await live.cluster.get("batch/v1", "Job", "workspace", REFUSED.ns);
    expect(job, "the run's Job is kept").toBeDefined();
    expect(job!.spec.ttlSecondsAfterFinished, "no retention clean-up while the evidence is not recorded").toBeUndefined();

    // An operator waives it, with the reason: recorded, and the deletion goes through.
    await live.cluster.mergePatch({ apiVersion: API, kind: "DeveloperWorkspace", metadata: { name: `${REFUSED.id}-xr`, annotations: { "workspaces.berth.dev/evidence-waived": "the live suite's refusing registry" } } });
    const waived = await waitFor(`${REFUSED.id}: the waiver in status`, async () => {
      const x = await xrOf(REFUSED.id);
      return x?.status?.evidence?.state === "Waived" && x;
    }, 120_000, 1000);
    expect(waived.status.evidence.message).toBe("the export was waived: the live suite's refusing registry");
    const deleted = await live.cluster.request("DELETE", path);
    expect(deleted.status, deleted.text).toBe(200);
  });

  it("a workspace whose evidence is recorded is deleted, and its volume and Namespace go with it", async () => {
    for (const w of EXPORTING) {
      const res = await live.cluster.request("DELETE", `/apis/workspaces.berth.dev/v1alpha1/developerworkspaces/${w.id}-xr`);
      expect(res.status, res.text).toBe(200);
    }
    for (const w of EXPORTING) await waitFor(`namespace ${w.ns} gone`, async () => (await live.cluster.get("v1", "Namespace", w.ns)) === undefined, 240_000, 1000);
  });
});

describe(`an ExecutionWorkspace on the agent-sandbox class, run by the agent-sandbox controller ${AGENT_SANDBOX_VERSION}`, () => {
  it("the pod the controller makes from Berth's podTemplate is admitted, hardened, has its volume and the declared egress", async () => {
    const p = (await pod(SESSION.ns, "workspace"))!;
    expect(p.metadata!.ownerReferences?.map((o: any) => [o.kind, o.name, o.controller])).toEqual([["Sandbox", "workspace", true]]);
    expect(p.spec.hostUsers).toBe(false);
    const [inside, outside] = readFileSync(`/proc/${await live.node.containerPid(SESSION.ns, "workspace", "runtime")}/uid_map`, "utf8").trim().split(/\s+/).map(Number);
    expect([inside, outside! > 0]).toEqual([0, true]);
    const inspect = await probe(sessionPod, ["inspect"]);
    // Its runtime is granted edit: the projected token is the capability's (DEV proves none without one).
    expect(inspect.out.serviceAccountToken).toBe(true);
    expect(inspect.out.writable["/"]).toMatchObject({ ok: false, reason: "read-only file system" });
    expect(inspect.out.writable["/workspace"]).toMatchObject({ ok: true });
    allowed(await probe(sessionPod, ["tcp", `gateway.${FIXTURES_NS}.svc.cluster.local:80`]), "the declared gateway");
    refused(await probe(sessionPod, ["tcp", `${ip(FIXTURES_NS, "stranger")}:${PROBE_PORT}`]), "the stranger pod");
    refused(await probe(sessionPod, ["tcp", `${addresses.hostIP}:${addresses.declaredHostPort}`]), "a destination the session did not ask for");
    allowed(await probe(control, ["tcp", `${addresses.hostIP}:${addresses.declaredHostPort}`]), "control: the same destination");
    expect((await sessionPhase("Ready")).xr.status.reason).toBe("Available");
  });

  it("suspend removes the pod and every pod its runtime made, and keeps the volume, and says Suspended only once the pod is gone; resume runs a new pod that reads the files written before, under a new lease", async () => {
    allowed(await probe(sessionPod, ["write", "/workspace/kept", "1Mi"]), "writing before suspend");
    const first = await probe(sessionPod, ["read", "/workspace/kept"]);
    const uidBefore = (await pod(SESSION.ns, "workspace"))!.metadata!.uid;
    const pvc = (await live.cluster.get("v1", "PersistentVolumeClaim", "workspace", SESSION.ns))!.metadata!.uid;
    // A pod of the runtime's making that would run until stopped (issue 44, finding 2).
    const lease = await sessionLease();
    expect(lease, "the runtime lease").toBeDefined();
    allowed(await asSessionRuntime(sessionPods, "POST", runtimeMadePod(SESSION.ns, "made-running", lease, ["listen", "8081"])), "the runtime making a pod that runs until stopped");
    await containerRunning(SESSION.ns, "made-running", "made");

    await live.cluster.apply(sessionDocument("Suspended"));
    const suspended = await sessionPhase("Suspended");
    expect(suspended.podThen, "the pod, when the workspace said Suspended").toBeUndefined();
    expect((await live.cluster.get("v1", "PersistentVolumeClaim", "workspace", SESSION.ns))!.metadata!.uid, "the same volume").toBe(pvc);
    // Crossplane deleted the lease with the suspend; the garbage collector, everything it owns.
    await waitFor("the runtime's pod gone with its lease", async () => (await pod(SESSION.ns, "made-running")) === undefined, 60_000, 500);
    expect(await live.cluster.get("v1", "ConfigMap", "runtime-lease", SESSION.ns), "no lease while suspended").toBeUndefined();

    await live.cluster.apply(sessionDocument("Ready"));
    await sessionPhase("Ready");
    await containerRunning(SESSION.ns, "workspace", "runtime");
    expect((await pod(SESSION.ns, "workspace"))!.metadata!.uid).not.toBe(uidBefore);
    const after = await probe(sessionPod, ["read", "/workspace/kept"]);
    allowed(after, "reading after resume");
    expect(after.out.content).toBe(first.out.content);
    const renewed = await waitFor("a new lease", sessionLease, 60_000);
    expect(renewed.uid, "the resumed runtime's lease is a new one").not.toBe(lease!.uid);
  });

  it("Berth's lifecycle Operation suspends it when idle; activity resumes it at once, a new pod reading the same files", async () => {
    // The shipped CronOperation came in the Configuration package and runs Berth's function,
    // pulled from the registry, with the operation capability its package declares.
    const shipped = await waitFor("an Operation of berth-lifecycle Succeeded", async () => (await operationsOf(live.cluster, "berth-lifecycle")).find((o) => condition(o, "Succeeded")?.status === "True"), 150_000, 2000);
    expect(shipped.status.pipeline?.[0]?.step).toBe("lifecycle");
    const before = await probe(sessionPod, ["read", "/workspace/kept"]);
    const uidBefore = (await pod(SESSION.ns, "workspace"))!.metadata!.uid;
    const pvc = (await live.cluster.get("v1", "PersistentVolumeClaim", "workspace", SESSION.ns))!.metadata!.uid;
    const annotate = (annotations: Record<string, string | null>) => live.cluster.mergePatch({ apiVersion: "workspaces.berth.dev/v1alpha1", kind: "ExecutionWorkspace", metadata: { name: SESSION.name, annotations } });
    const signal = (at = rfc3339(new Date())) => annotate({ [LAST_ACTIVITY]: at });
    // Only a running workspace is judged idle.
    await sessionPhase("Ready");

    // The class allows 15 idle minutes; a minute lasts a second here, for this workspace alone.
    const cron = compressedLifecycle("berth-lifecycle-live", 1, { name: SESSION.name });
    await signal();
    await live.cluster.apply(cron);
    let suspendedAt: string;
    try {
      try {
        const t = Date.now();
        const { xr: suspended, podThen } = await sessionPhase("Suspended", 180_000);
        expect(podThen, "the pod, when the workspace said Suspended").toBeUndefined();
        expect(suspended.status.reason).toBe("IdleTimeout");
        suspendedAt = suspended.metadata!.annotations![SUSPENDED_AT]!;
        say(`idle rule: ${SESSION.name} suspended at ${suspendedAt}, Suspended ${((Date.now() - t) / 1000).toFixed(1)} s after the compressed CronOperation was applied; pod gone, PVC kept`);
      } finally {
        await live.cluster.delete("ops.crossplane.io/v1alpha1", "CronOperation", cron.metadata!.name!);
      }

      // Activity stamped in the suspension's own second: a driver resuming at once, with times in
      // whole seconds (CI 2026-12-05 sent it so by chance, and the workspace stayed suspended).
      const t = Date.now();
      await signal(suspendedAt);
      await waitFor("Sandbox Running", async () => (await live.cluster.get("agents.x-k8s.io/v1beta1", "Sandbox", "workspace", SESSION.ns))?.spec.operatingMode === "Running", 60_000, 250);
      const resumedIn = (Date.now() - t) / 1000;
      await sessionPhase("Ready");
      const readyIn = (Date.now() - t) / 1000;
      await containerRunning(SESSION.ns, "workspace", "runtime");
      expect((await pod(SESSION.ns, "workspace"))!.metadata!.uid).not.toBe(uidBefore);
      expect((await live.cluster.get("v1", "PersistentVolumeClaim", "workspace", SESSION.ns))!.metadata!.uid, "the same volume").toBe(pvc);
      const after = await probe(sessionPod, ["read", "/workspace/kept"]);
      allowed(after, "reading after the idle rule's suspend and the resume");
      expect(after.out.content).toBe(before.out.content);
      say(`activity resumed ${SESSION.name}: Sandbox Running ${resumedIn.toFixed(1)} s after the annotation (stamped ${suspendedAt}, the suspension's second), the workspace Ready ${readyIn.toFixed(1)} s after it, with the same files`);
      expect(resumedIn, "reconciled by the annotation change, not by a requeue").toBeLessThan(15);
    } finally {
      // Whatever failed above, the tests after this one need the session running: lift the rule's
      // suspension by removing its annotations (what it wrote), then signal activity.
      if ((await sessionXR())?.status?.phase !== "Ready") {
        await annotate({ [SUSPENDED_AT]: null, [SUSPENDED_BY]: null });
        await signal();
        await sessionPhase("Ready").then(
          () => say(`the idle test's suspension undone: ${SESSION.name} Ready again`),
          (e) => say(`the idle test's suspension could not be undone: ${e instanceof Error ? e.message : e}`),
        );
      }
    }
  }, 420_000);
});

describe("upgrades", () => {
  /** True once Crossplane holds a connection to the function's current pod (gRPC dials on the first call). */
  async function crossplaneCalls(ref: string): Promise<boolean> {
    const pods = await live.cp.kube.list<any>("v1", "Pod", CROSSPLANE_NAMESPACE, `pkg.crossplane.io/function=${FUNCTION_NAME}`);
    if (pods.length !== 1 || pods[0].spec.containers[0].image !== ref) return false;
    const pid = await live.node.containerPid(CROSSPLANE_NAMESPACE, pods[0].metadata.name, "package-runtime");
    // /proc/<pid>/net/tcp lists the pod's sockets: state 01 (established) on local port 9443 (0x24E3).
    return readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").some((l) => /^\s*\d+: [0-9A-F]+:24E3 [0-9A-F]+:[0-9A-F]+ 01 /.test(l));
  }

  it("the next release rolls out under running workspaces and re-creates or changes nothing they own; so does rolling back", async () => {
    const first = live.release;
    const before = await owned();
    const [major, minor, patch] = first.version.slice(1).split(".").map(Number);
    const next = await live.publishRelease(`v${major}.${minor}.${patch! + 1}`);
    expect(next.digest).not.toBe(first.digest);

    for (const pkg of [next, first]) {
      const t = Date.now();
      await rollOutFunction(live.cp, pkg);
      // Every workspace is reconciled again within the function's response TTL (60 s), through
      // the only function pod left: wait until Crossplane has called it, and then a full TTL.
      await waitFor(`Crossplane calling ${pkg.ref}`, () => crossplaneCalls(pkg.ref), 120_000);
      await sleep(65_000);
      const after = await owned();
      expect(after.uids, `composed objects after rolling out ${pkg.publicRef}`).toEqual(before.uids);
      expect(after.versions, `Namespaces and PVCs after rolling out ${pkg.publicRef}`).toEqual(before.versions);
      say(`rolled out ${pkg.publicRef} (${pkg.digest}) in ${((Date.now() - t) / 1000).toFixed(0)} s: ${Object.keys(after.uids).length} composed objects kept`);
    }
  }, 480_000);
});

describe("faults on a live node", () => {
  const WORKSPACES = [
    ["DeveloperWorkspace", `${DEV.id}-xr`],
    ["DeveloperWorkspace", `${KUBE.id}-xr`],
    ["ExecutionWorkspace", SESSION.name],
  ] as const;
  const KEPT = "/workspace/kept-through-faults";
  const rows: { fault: string; during: string; convergeS: number }[] = [];

  /** The workloads running now: each pod's uid, its runtime container's id and restart count. */
  async function workloads(): Promise<Record<string, { uid: string; container: string; restarts: number }>> {
    const out: Record<string, { uid: string; container: string; restarts: number }> = {};
    for (const w of [sessionPod, await kubePod()]) {
      const p = (await pod(w.ns, w.pod))!;
      const status = p.status.containerStatuses.find((c: any) => c.name === w.container);
      out[`${w.ns}/${w.pod}`] = { uid: p.metadata!.uid!, container: await live.node.containerID(w.ns, w.pod, w.container), restarts: status.restartCount };
    }
    return out;
  }

  /** Each workspace's Synced and Ready, as `kind/name Synced=… Ready=…`. */
  async function statusLine(): Promise<string> {
    const parts: string[] = [];
    for (const [kind, name] of WORKSPACES) {
      const xr = await live.cluster.get("workspaces.berth.dev/v1alpha1", kind, name);
      const c = (type: string) => condition(xr!, type);
      parts.push(`${name} Synced=${c("Synced")?.status}${c("Synced")?.status === "True" ? "" : ` (${c("Synced")?.reason}: ${c("Synced")?.message})`} Ready=${c("Ready")?.status}`);
    }
    return parts.join("; ");
  }

  /**
   * The ExecutionWorkspace's ResourceQuota is edited behind Crossplane's back (a field Berth
   * owns); converged means the whole loop answers again (watch, Crossplane, the function, the
   * API server) and restores it in place, uid unchanged.
   */
  async function drift(): Promise<() => Promise<void>> {
    const xr = (await live.cluster.get("workspaces.berth.dev/v1alpha1", "ExecutionWorkspace", SESSION.name)) as any;
    const ref = xr.spec.crossplane.resourceRefs.find((r: any) => r.kind === "ResourceQuota");
    const quota = (await live.cluster.get("v1", "ResourceQuota", ref.name, ref.namespace))!;
    const [key, value] = Object.entries(quota.spec.hard as Record<string, string>)[0]!;
    await live.cluster.mergePatch({ apiVersion: "v1", kind: "ResourceQuota", metadata: { name: ref.name, namespace: ref.namespace }, spec: { hard: { [key]: "999" } } });
    return () =>
      undoneByCrossplane(live.cluster, { apiVersion: "workspaces.berth.dev/v1alpha1", kind: "ExecutionWorkspace", name: SESSION.name }, `ResourceQuota ${ref.name} hard.${key} restored to ${value}`, async () => {
        const now = (await live.cluster.get("v1", "ResourceQuota", ref.name, ref.namespace))!;
        return now.spec.hard[key] === value && now.metadata!.uid === quota.metadata!.uid;
      }, 240_000);
  }

  let baseline: Awaited<ReturnType<typeof owned>>;
  let running: Awaited<ReturnType<typeof workloads>>;
  let content: string;

  beforeAll(async () => {
    // The faults start from every workspace running: say so if an earlier test left one otherwise.
    const session = await sessionXR();
    if (session?.status?.phase !== "Ready" || !(await pod(SESSION.ns, "workspace"))) {
      throw new Error(`the faults need ${SESSION.name} running; it is not (phase ${session?.status?.phase}: ${session?.status?.message}; pod ${(await pod(SESSION.ns, "workspace"))?.status?.phase ?? "absent"}): an earlier test left it so`);
    }
    allowed(await probe(sessionPod, ["write", KEPT, "64Ki"]), "writing the file the faults must not lose");
    content = (await probe(sessionPod, ["read", KEPT])).out.content;
    baseline = await owned();
    running = await workloads();
  }, 120_000);

  afterAll(() => {
    if (rows.length > 0) say(`faults on the live node:\n${rows.map((r) => `  ${r.fault}: converged ${r.convergeS.toFixed(1)} s after it ended; during: ${r.during}`).join("\n")}`);
  });

  /**
   * Injects a fault (`inject` returns, once the fault has ended, what status said during it, and
   * when it ended if that was before it returned),
   * then checks the invariant: the drift made during the fault undone, every workspace Synced,
   * every owned object the same (uid; Namespaces' and PVCs' resourceVersions), the running pods
   * the same pods with the same containers, and the file on the volume the same bytes.
   */
  async function survives(fault: string, inject: (driftNow: () => Promise<void>) => Promise<string | { during: string; endedAt: number }>): Promise<void> {
    let undone: (() => Promise<void>) | undefined;
    const injected = await inject(async () => void (undone = await drift()));
    const { during, endedAt: t } = typeof injected === "string" ? { during: injected, endedAt: Date.now() } : injected;
    undone ??= await drift();
    await undone();
    await waitFor("every workspace Synced", async () => {
      for (const [kind, name] of WORKSPACES) if (condition((await live.cluster.get("workspaces.berth.dev/v1alpha1", kind, name))!, "Synced")?.status !== "True") return false;
      return true;
    }, 240_000, 1000);
    const convergeS = (Date.now() - t) / 1000;
    const after = await owned();
    expect(after.uids, `composed objects after: ${fault}`).toEqual(baseline.uids);
    expect(after.versions, `Namespaces and PVCs after: ${fault}`).toEqual(baseline.versions);
    expect(await workloads(), `the running pods and containers after: ${fault}`).toEqual(running);
    const read = await probe(sessionPod, ["read", KEPT]);
    allowed(read, `reading the file after: ${fault}`);
    expect(read.out.content === content, `the file's bytes after: ${fault}`).toBe(true);
    rows.push({ fault, during, convergeS });
    say(`${fault}: ${Object.keys(after.uids).length} owned objects kept, the file intact, converged ${convergeS.toFixed(1)} s after the fault ended`);
  }

  /** Kills a pod's container process on the host, makes the drift while it is down; kubelet restarts it. */
  async function killContainer(selector: string, container: string, whileDown: () => Promise<void>): Promise<string> {
    const [p] = await live.cp.kube.list<any>("v1", "Pod", CROSSPLANE_NAMESPACE, selector);
    const state = async () => ((await live.cluster.get("v1", "Pod", p.metadata.name, CROSSPLANE_NAMESPACE)) as any)?.status?.containerStatuses?.find((c: any) => c.name === container);
    const before = (await state()).restartCount;
    process.kill(await live.node.containerPid(CROSSPLANE_NAMESPACE, p.metadata.name, container), "SIGKILL");
    await whileDown();
    const during = await statusLine();
    await waitFor(`${container} restarted by kubelet and ready`, async () => {
      const s = await state();
      return s.restartCount === before + 1 && s.ready === true;
    }, 180_000, 500);
    return during;
  }

  it("the function's container is SIGKILLed while the workspaces reconcile: kubelet restarts it; nothing owned changes, the file stays", async () => {
    await survives("function container SIGKILL", async (driftNow) => {
      for (const [kind, name] of WORKSPACES) await live.cluster.mergePatch({ apiVersion: "workspaces.berth.dev/v1alpha1", kind, metadata: { name, annotations: { "crossplane.io/reconcile-requested-at": new Date().toISOString() } } });
      return killContainer(`pkg.crossplane.io/function=${FUNCTION_NAME}`, "package-runtime", driftNow);
    });
  }, 600_000);

  it("Crossplane's container is SIGKILLed: kubelet restarts it, and it corrects the drift made while it was down", async () => {
    await survives("Crossplane container SIGKILL", (driftNow) => killContainer("app=crossplane", "crossplane", driftNow));
  }, 600_000);

  it("Crossplane's pod is deleted, as a rolling restart does: the Deployment's next pod takes over and corrects the drift", async () => {
    await survives("Crossplane pod deleted (graceful)", async (driftNow) => {
      const [old] = await live.cp.kube.list<any>("v1", "Pod", CROSSPLANE_NAMESPACE, "app=crossplane");
      await live.cluster.delete("v1", "Pod", old.metadata.name, CROSSPLANE_NAMESPACE);
      await driftNow();
      const during = await statusLine();
      await waitFor("the Deployment's next Crossplane pod ready", async () => {
        const pods = await live.cp.kube.list<any>("v1", "Pod", CROSSPLANE_NAMESPACE, "app=crossplane");
        return pods.length === 1 && pods[0].metadata.name !== old.metadata.name && pods[0].status?.containerStatuses?.every((c: any) => c.ready);
      }, 180_000, 500);
      return during;
    });
  }, 600_000);

  it("containerd is SIGKILLed and restarted: the pods' containers run on under their shims, the same containers", async () => {
    await survives("containerd SIGKILL, restarted after 5 s", async (driftNow) => {
      const pid = await live.node.containerPid(sessionPod.ns, sessionPod.pod, sessionPod.container);
      await live.node.kill("containerd");
      try {
        await driftNow();
        await sleep(5000);
        process.kill(pid, 0); // throws if the runtime died with containerd
        return `runtime pid ${pid} still running; ${await statusLine()}`;
      } finally {
        await live.node.restore("containerd");
      }
    });
  }, 600_000);

  it("kubelet is SIGKILLed and restarted: it adopts the running pods and restarts none", async () => {
    await survives("kubelet SIGKILL, restarted after 10 s", async (driftNow) => {
      await live.node.kill("kubelet");
      try {
        await driftNow();
        await sleep(10_000);
        return await statusLine();
      } finally {
        await live.node.restore("kubelet");
      }
    });
  }, 600_000);

  it("the API server and etcd are restarted: Crossplane on the node re-lists through the Service; nothing owned changes", async () => {
    await survives("API server and etcd SIGTERM, restarted after 5 s", async () => {
      try {
        await live.cp.kill("kube-apiserver", "SIGTERM");
        await live.cp.kill("etcd", "SIGTERM");
        await sleep(5000);
      } finally {
        await live.cp.restore("etcd");
        await live.cp.restore("kube-apiserver");
      }
      const endedAt = Date.now();
      await classPermitsInEffect(live.cluster, SANDBOX_CLASS);
      return { during: `API server down 5 s; ExecutionWorkspace writes refused by berth-class-permits for ${((Date.now() - endedAt) / 1000).toFixed(1)} s after the restart; ${await statusLine()}`, endedAt };
    });
  }, 600_000);
});

describe("the machine", () => {
  it("stops leaving the machine as it found it: processes, netns, links, iptables, ipsets, mounts, cgroups, loop devices, sysctls, host folders", async () => {
    for (const s of hostListeners) s.close();
    stopped = true;
    await live.stop();
    expect(hostStateDiff(before, await readHostState())).toEqual([]);
  });

  it("a second start on the same machine starts from the same state, and stops clean again", async () => {
    const again = await startLiveCluster({ log: say });
    try {
      const node = await again.cluster.get("v1", "Node", again.node.name);
      expect(condition(node, "Ready")?.status).toBe("True");
    } finally {
      await again.stop();
    }
    expect(hostStateDiff(before, await readHostState())).toEqual([]);
  });
});
