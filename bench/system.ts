// npm run bench:system [-- --n 50,200,1000] [--idle-minutes 10] [--json <file>]
//                        [--ttl-provisioning 60s] [--ttl-at-rest 15m] [--concurrency 32]
//                        [--crossplane-steps 3 | 1,3 | --no-crossplane-floor]
//
// What the whole system pays for Berth, measured as operators meet it: on the local control
// plane (etcd, kube-apiserver, kube-controller-manager and Crossplane core as processes,
// function-berth as its shipped bundle over TLS), N DeveloperWorkspaces and N
// ExecutionWorkspaces are created at once, and the run reports
//   converge  time to every XR Synced, and to every composed object applied (each XR's
//             resourceRefs complete);
//   cost      RunFunction calls and Crossplane reconciles per workspace, API requests, and the
//             CPU seconds and peak RSS of the function, Crossplane, the API server and etcd;
//   ready     the control plane has no node and no runtime controllers, so a stand-in then
//             marks each runtime object ready as they would (PVC Bound, Job ready 1, Sandbox
//             Ready) and the run reports the time and calls until every workspace says Ready;
//             this is the function and Crossplane reacting, not pods starting;
//   idle      the same over --idle-minutes with nothing changing, per workspace per hour, and
//             which composed objects' and XRs' resourceVersions moved and which events were
//             written (new ones and repeats of old ones), by kind and reason.
// In the same run, the ladder: the same converged objects (read back from the cluster) made for the
// same workspaces by cheaper means, each on a fresh control plane: applied directly with
// server-side apply, at the same concurrency (the floor; ratios are Berth's figure over it), and
// composed by Crossplane with a function that only returns them (bench/go-noop), in one step and
// in Berth's three. Needs the control-plane build (npm run controlplane:build), the upstream CRDs
// (BERTH_UPSTREAM_CRDS or a download) and, for the Crossplane rungs, Go.
//
// Counting: RunFunction calls are the function's per-call debug lines ("rendered"), reconciles
// controller-runtime's controller_runtime_reconcile_total for the XR controllers, API requests
// the API server's apiserver_request_total, CPU utime+stime from /proc of each process.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startControlPlane, type ControlPlane } from "../test/conformance/controlplane/controlplane.js";
import { KubeError, type Kube } from "../test/conformance/controlplane/kube.js";
import { applyExampleCluster, applyExampleProfileAndClass, Cluster, hasRunningStatus, installBerth, installUpstreamCRDs, loadOne, REPO, standInRunning, type Obj } from "../test/conformance/setup.js";
import { peakRssMb, pool } from "../test/support/processes.js";
import { installedFunction } from "../test/support/function-name.js";
import { sumSamples, workspaceControllers } from "../test/support/prometheus.js";
import { SHIPPED_ENTRY, shippedNodeFlags } from "../image/shipped.js";
import { median, quantile } from "./stats.js";
import { TTL_ENV, ttlsFromEnvironment } from "../functions/berth/respond/ttl.js";
import { DEVELOPER_WORKLOAD } from "../functions/berth/kinds/developer-workspace.js";
import { RUNTIME_OBJECTS } from "../functions/berth/kinds/execution-workspace.js";

const { values: opts } = parseArgs({
  options: {
    n: { type: "string", default: "50,200,1000" },
    "idle-minutes": { type: "string", default: "10" },
    json: { type: "string" },
    concurrency: { type: "string", default: "32" },
    "ttl-provisioning": { type: "string" },
    "ttl-at-rest": { type: "string" },
    "no-crossplane-floor": { type: "boolean", default: false },
    // One step is slow (a Namespace and its contents race: 229 s at N = 50), so not by default.
    "crossplane-steps": { type: "string", default: "3" },
  },
  allowPositionals: false,
});
const SIZES = opts.n!.split(",").map(Number);
const IDLE_MS = Number(opts["idle-minutes"]) * 60_000;
const CONCURRENCY = Number(opts.concurrency);
/** Which Crossplane floors to run: 1 (every object in one step), 3 (Berth's creation order). */
const CROSSPLANE_STEPS = opts["crossplane-steps"]!.split(",").map((s) => {
  if (s !== "1" && s !== "3") throw new Error(`--crossplane-steps: 1, 3 or 1,3, not ${opts["crossplane-steps"]}`);
  return Number(s) as 1 | 3;
});
/** How long no reconcile may run before the system counts as settled. */
const QUIET_MS = 60_000;
/** How long to wait for that before measuring idle anyway. */
const SETTLE_MAX_MS = 5 * 60_000;
/** The function's response TTLs for this run: its defaults unless overridden, set through its own environment variables. */
const TTL_OVERRIDES = { [TTL_ENV.provisioning]: opts["ttl-provisioning"], [TTL_ENV.atRest]: opts["ttl-at-rest"] };
const TTLS = ttlsFromEnvironment(TTL_OVERRIDES);
const API = "workspaces.berth.dev/v1alpha1";
const KINDS = ["DeveloperWorkspace", "ExecutionWorkspace"] as const;
/** The processes measured, by their names in the control plane's process set. */
const COMPONENTS = { function: `function-${installedFunction().name}`, crossplane: "crossplane", apiserver: "kube-apiserver", etcd: "etcd" };
type Component = keyof typeof COMPONENTS;

const say = (m: string) => process.stderr.write(`[bench:system ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS; // utime, stime (fields 14 and 15)
}

/** A counter's samples summed by a key made from their labels (samples whose key is undefined are left out). */
function countsBy(text: string, metric: string, key: (label: (k: string) => string) => string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${metric}{`)) continue;
    const k = key((name) => new RegExp(`[{,]${name}="([^"]*)"`).exec(line)?.[1] ?? "");
    if (k !== undefined) out[k] = (out[k] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return out;
}

/** apiserver_request_total by "VERB resource" (subresource appended), e.g. "PATCH jobs/status"; server-side applies are "APPLY". */
const requestsByVerbAndResource = (text: string) =>
  countsBy(text, "apiserver_request_total", (l) => `${l("verb")} ${l("resource")}${l("subresource") ? `/${l("subresource")}` : ""}`);

/**
 * Writes that reached etcd, by resource: etcd_requests_total's creates and updates. An apply that
 * changes nothing never gets there (the API server compares the encoded object before it writes),
 * so the difference between applies and writes is how many applies were no-ops.
 */
const etcdWritesByResource = (text: string) =>
  countsBy(text, "etcd_requests_total", (l) => (l("operation") === "create" || l("operation") === "update" ? l("resource") || l("type") : undefined));

/** The largest differences between two by-key counts, most first. */
function topIncreases(a: Record<string, number>, b: Record<string, number>, limit = 12): Record<string, number> {
  return Object.fromEntries(
    Object.entries(increases(a, b, (k) => k))
      .sort((x, y) => y[1] - x[1])
      .slice(0, limit),
  );
}

interface Sample {
  at: number;
  cpu: Record<Component, number>;
  calls: number;
  reconciles: number;
  apiRequests: number;
  /** Requests the API server refused with 429 (e.g. while a watch cache re-initializes). */
  apiThrottled: number;
  requestsBy: Record<string, number>;
  writesBy: Record<string, number>;
  /**
   * XR watches the API server closed because their client fell behind (apiserver_terminated_watchers_total),
   * and XR writes it refused as conflicts (409: written from a stale cache). After a closed watch the
   * client lists every XR again and works from a stale cache until it has; both measure that.
   */
  xrWatchesClosed: number;
  xrConflicts: number;
  /** Crossplane's per-XR watch circuit breaker: times one opened, and watch events it dropped. */
  circuitOpens: number;
  watchEventsDropped: number;
  /** The lifecycle Operation's runs the function answered (its "judged" lines with a decision). */
  lifecycleRuns: LifecycleRun[];
}

interface LifecycleRun {
  workspaces: number;
  durationMs: number;
}

function lifecycleRuns(log: string): LifecycleRun[] {
  return log
    .split("\n")
    .filter((l) => l.includes('"msg":"judged"') && l.includes('"verdict":"decided"'))
    .map((l) => JSON.parse(l) as LifecycleRun);
}

/** A metric sample's labels name one of Berth's workspace XR resources. */
const isWorkspaceXR = (l: string) => /resource="(developer|execution)workspaces"/.test(l);

/** Which lines of a function's log are one RunFunction call for a workspace. */
type CallLine = (line: string) => boolean;
/** Berth's per-call debug line. */
const berthCall: CallLine = (l) => l.includes('"msg":"rendered"') && /(Developer|Execution)Workspace /.test(l);
/** bench/go-noop's line in its --compose-from mode. */
const floorCall: CallLine = (l) => l.startsWith("composed sys-");

async function sample(cp: ControlPlane, functionLog: string | undefined, isCall: CallLine = berthCall): Promise<Sample> {
  const pids = cp.pids();
  const cpu = Object.fromEntries(Object.entries(COMPONENTS).map(([k, name]) => [k, pids[name] ? cpuSeconds(pids[name]!) : 0])) as Record<Component, number>;
  const metrics = (await cp.kube.raw("GET", "/metrics")).body as unknown;
  const text = typeof metrics === "string" ? metrics : "";
  const apiRequests = sumSamples(text, "apiserver_request_total");
  const apiThrottled = sumSamples(text, "apiserver_request_total", (l) => l.includes('code="429"'));
  const requestsBy = requestsByVerbAndResource(text);
  const writesBy = etcdWritesByResource(text);
  const xrWatchesClosed = sumSamples(text, "apiserver_terminated_watchers_total", isWorkspaceXR);
  const xrConflicts = sumSamples(text, "apiserver_request_total", (l) => l.includes('code="409"') && isWorkspaceXR(l));
  let reconciles = 0;
  let circuitOpens = 0;
  let watchEventsDropped = 0;
  if (cp.crossplaneMetricsPort) {
    const text = await (await fetch(`http://127.0.0.1:${cp.crossplaneMetricsPort}/metrics`)).text();
    reconciles = sumSamples(text, "controller_runtime_reconcile_total", workspaceControllers);
    circuitOpens = sumSamples(text, "circuit_breaker_opens_total");
    watchEventsDropped = sumSamples(text, "circuit_breaker_events_total", (l) => l.includes('result="Dropped"'));
  }
  const log = functionLog ? readFileSync(functionLog, "utf8") : "";
  const calls = log.split("\n").filter(isCall).length;
  return { at: Date.now(), cpu, calls, reconciles, apiRequests, apiThrottled, requestsBy, writesBy, xrWatchesClosed, xrConflicts, circuitOpens, watchEventsDropped, lifecycleRuns: lifecycleRuns(log) };
}

const delta = (a: Sample, b: Sample) => ({
  seconds: (b.at - a.at) / 1000,
  cpu: Object.fromEntries(Object.keys(a.cpu).map((k) => [k, b.cpu[k as Component] - a.cpu[k as Component]])) as Record<Component, number>,
  calls: b.calls - a.calls,
  reconciles: b.reconciles - a.reconciles,
  apiRequests: b.apiRequests - a.apiRequests,
  apiThrottled: b.apiThrottled - a.apiThrottled,
  xrWatchesClosed: b.xrWatchesClosed - a.xrWatchesClosed,
  xrConflicts: b.xrConflicts - a.xrConflicts,
  requestsBy: topIncreases(a.requestsBy, b.requestsBy),
  applies: increases(a.requestsBy, b.requestsBy, (k) => k.startsWith("APPLY ") ? k.slice("APPLY ".length) : undefined),
  writes: increases(a.writesBy, b.writesBy, (k) => k),
});

/** Every increase between two by-key counts, re-keyed (keys mapped to undefined are left out). */
function increases(a: Record<string, number>, b: Record<string, number>, rekey: (k: string) => string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) {
    const key = rekey(k);
    const d = v - (a[k] ?? 0);
    if (key !== undefined && d > 0) out[key] = (out[key] ?? 0) + d;
  }
  return out;
}

function workspaces(n: number): Obj[] {
  const dev = loadOne("examples/developerworkspace-ephemeral.yaml");
  const exec = loadOne("examples/executionworkspace-sandbox.yaml");
  const out: Obj[] = [];
  for (let i = 0; i < n; i++) {
    const id = `sys-${String(i).padStart(4, "0")}`;
    out.push({ ...structuredClone(dev), metadata: { name: `${id}-xr` }, spec: { ...structuredClone(dev.spec), workspaceID: id } });
    out.push({ ...structuredClone(exec), metadata: { name: `${id}-session` }, spec: { ...structuredClone(exec.spec), sessionRef: { name: `${id}-session`, namespace: "team-payments" } } });
  }
  return out;
}

/**
 * What each XR kind composes when converged: the count of its resourceRefs once the XR is Synced
 * and the count has held for 5 s. Synced alone is not enough: the first reconcile composes the
 * Namespace alone and is Synced too, so a probe that took the first Synced count could read 1 and
 * call a workspace converged with one object of ten.
 */
async function expectedRefs(kube: Kube, kind: string, name: string): Promise<number> {
  let seen = 0;
  let since = Date.now();
  return kube.waitFor(`${kind} ${name} converged (one reference workspace)`, async () => {
    const xr = await kube.get(API, kind, name);
    const synced = (xr?.status?.conditions ?? []).some((c: any) => c.type === "Synced" && c.status === "True");
    const count: number = synced ? (xr.spec?.crossplane?.resourceRefs ?? []).length : 0;
    if (count !== seen) [seen, since] = [count, Date.now()];
    return count > 0 && Date.now() - since >= 5_000 ? count : undefined;
  }, 180_000, 500);
}

interface XRState {
  synced: number;
  applied: number;
  ready: number;
  /** The XRs still short of their objects, by kind and how many they have: "ExecutionWorkspace 1/10" → count. */
  behind: Map<string, number>;
  /** resourceVersion of every sys-* XR, keyed kind/name. */
  versions: Map<string, string>;
  /** The sys-* XRs Synced with all their objects, keyed kind/name. */
  done: Set<string>;
}

/**
 * Every XR of a kind, read from the API server's watch cache (resourceVersion=0): the bench's own
 * polling must not load etcd under the burst it measures. A saturated API server can leave a
 * list unanswered past the client's 30 s timeout, or answer 429 while it re-initializes that
 * cache (its watch on etcd fell behind): both are the burst's doing, and the list is retried.
 */
async function listXRs(kube: Kube, kind: string): Promise<any[]> {
  const path = `${await kube.path(API, kind)}?resourceVersion=0`;
  const giveUpAt = Date.now() + LIST_PATIENCE_MS;
  for (;;) {
    try {
      return (await kube.call<{ items: any[] }>("GET", path)).body.items;
    } catch (e) {
      const transient = /timed out/.test(String(e)) || (e instanceof KubeError && (e.status === 429 || e.status >= 500));
      if (!transient || Date.now() > giveUpAt) throw e;
      say(`list ${kind}: ${String(e).slice(0, 160)}; retrying`);
      await sleep(5_000);
    }
  }
}

/** How long the bench waits out an API server that cannot list the XRs before it gives up. */
const LIST_PATIENCE_MS = 5 * 60_000;

/** How often to poll the XRs: a list of every XR costs the API server in proportion to N. */
const pollMs = (total: number) => Math.max(500, total);

async function xrStates(kube: Kube, want: Record<string, number>): Promise<XRState> {
  const state: XRState = { synced: 0, applied: 0, ready: 0, behind: new Map(), versions: new Map(), done: new Set() };
  for (const kind of KINDS) {
    for (const xr of await listXRs(kube, kind)) {
      if (!xr.metadata.name.startsWith("sys-")) continue;
      const synced = (xr.status?.conditions ?? []).some((c: any) => c.type === "Synced" && c.status === "True");
      if (synced) state.synced++;
      const refs = (xr.spec?.crossplane?.resourceRefs ?? []).length;
      if (synced && refs >= want[kind]!) state.done.add(`${kind}/${xr.metadata.name}`);
      if (refs >= want[kind]!) state.applied++;
      else {
        const shortfall = `${kind} ${refs}/${want[kind]}`;
        state.behind.set(shortfall, (state.behind.get(shortfall) ?? 0) + 1);
      }
      if (xr.status?.phase === "Ready") state.ready++;
      state.versions.set(`${kind}/${xr.metadata.name}`, xr.metadata.resourceVersion);
    }
  }
  return state;
}

/** How big a workspace XR is on the wire: every watch event and list carries it whole. */
async function xrSizes(kube: Kube): Promise<{ xr_bytes: number; xr_managed_fields_bytes: number }> {
  const xrs = (await Promise.all(KINDS.map((kind) => listXRs(kube, kind)))).flat().filter((xr) => xr.metadata.name.startsWith("sys-"));
  return {
    xr_bytes: xrs.length > 0 ? median(xrs.map((xr) => JSON.stringify(xr).length)) : NaN,
    xr_managed_fields_bytes: xrs.length > 0 ? median(xrs.map((xr) => JSON.stringify(xr.metadata.managedFields ?? []).length)) : NaN,
  };
}

/** The stand-in for the node: every runtime object of the workspaces marked running; how many. */
async function standInForTheNode(c: Cluster, objects: Map<string, Obj>): Promise<number> {
  const targets = [...objects.values()].filter(hasRunningStatus);
  await pool(targets, CONCURRENCY, (o) => standInRunning(c, o));
  return targets.length;
}

/** Counts, by "Kind" or "Kind Reason", of what differs between two snapshots. */
function tally(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys.sort()) out[k] = (out[k] ?? 0) + 1;
  return out;
}

/** Every Event in the cluster with how many times it has happened (repeats bump the count, not the list). */
interface EventSeen {
  count: number;
  what: string;
  message: string;
}

async function eventCounts(kube: Kube): Promise<Map<string, EventSeen>> {
  const out = new Map<string, EventSeen>();
  for (const e of await kube.listAllNamespaces<any>("v1", "Event")) {
    out.set(`${e.metadata.namespace}/${e.metadata.name}`, { count: e.count ?? e.series?.count ?? 1, what: `${e.involvedObject?.kind} ${e.reason}`, message: `${e.type}: ${e.message}` });
  }
  return out;
}

/** Events written between two snapshots, new ones and repeats, by involved kind and reason, with one message of each. */
function eventsWritten(before: Map<string, EventSeen>, after: Map<string, EventSeen>): { counts: Record<string, number>; examples: Record<string, string> } {
  const keys: string[] = [];
  const examples: Record<string, string> = {};
  for (const [k, e] of after) {
    for (let i = before.get(k)?.count ?? 0; i < e.count; i++) keys.push(e.what);
    if ((before.get(k)?.count ?? 0) < e.count) examples[e.what] ??= e.message.slice(0, 300);
  }
  return { counts: tally(keys), examples };
}

/** Every composed object of the sys-* XRs, as the cluster holds it, keyed kind/namespace/name, with its resourceVersion. */
async function composed(kube: Kube): Promise<Map<string, Obj>> {
  const refs: any[] = [];
  for (const kind of KINDS) for (const xr of await listXRs(kube, kind)) if (xr.metadata.name.startsWith("sys-")) refs.push(...(xr.spec?.crossplane?.resourceRefs ?? []));
  return referenced(kube, refs);
}

/** The objects these resourceRefs name, as the cluster holds them, keyed kind/namespace/name. */
async function referenced(kube: Kube, refs: any[]): Promise<Map<string, Obj>> {
  const out = new Map<string, Obj>();
  await pool(refs, CONCURRENCY, async (r) => {
    const o = await kube.get(r.apiVersion, r.kind, r.name, r.namespace);
    if (o) out.set(`${r.kind}/${r.namespace ?? ""}/${r.name}`, o);
  });
  return out;
}

/** The object as a manifest: what was applied, without what the API server and controllers add. */
function manifest(o: Obj): Obj {
  const { metadata, status: _s, ...rest } = o as any;
  const keep = { name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}), ...(metadata.labels ? { labels: metadata.labels } : {}), ...(metadata.annotations ? { annotations: metadata.annotations } : {}) };
  const out = { ...rest, metadata: keep } as any;
  if (out.kind === "Job") {
    // The selector and these pod labels are the Job API's own, set from the Job's uid.
    delete out.spec.selector;
    const labels = out.spec.template?.metadata?.labels ?? {};
    for (const l of ["controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"]) delete labels[l];
  }
  return out;
}

interface Result {
  n: number;
  workspaces: number;
  /** The same burst composed four ways, cheapest first: see Ladder. */
  ladder: Ladder;
  converge_synced_s: number;
  converge_s: number;
  floor_s: number;
  converge_ratio: number;
  apiserver_cpu_s: number;
  floor_apiserver_cpu_s: number;
  apiserver_cpu_ratio: number;
  cpu_s: Record<Component, number>;
  floor_cpu_s: Record<"apiserver" | "etcd", number>;
  peak_rss_mb: Record<Component, number>;
  calls_per_workspace: number;
  reconciles_per_workspace: number;
  api_requests: number;
  /** Of api_requests, how many the API server answered 429. */
  api_requests_throttled: number;
  /** During the burst: XR watches the API server closed as unresponsive, and XR writes refused with 409. */
  xr_watches_closed: number;
  xr_conflicts: number;
  /** Median size of one workspace XR as the API server returns it, and of its managedFields, once all have their objects (bytes of JSON). */
  xr_bytes: number;
  xr_managed_fields_bytes: number;
  floor_api_requests: number;
  api_requests_by_verb_and_resource: Record<string, number>;
  floor_api_requests_by_verb_and_resource: Record<string, number>;
  idle_api_requests_by_verb_and_resource: Record<string, number>;
  idle_minutes: number;
  idle_calls_per_workspace_hour: number;
  idle_reconciles_per_workspace_hour: number;
  idle_cpu_s_per_workspace_hour: number;
  idle_resource_versions_changed: number;
  idle_events_written: number;
  idle_resource_versions_changed_by_kind: Record<string, number>;
  idle_events_by_kind_and_reason: Record<string, number>;
  idle_event_examples: Record<string, string>;
  ready_after_stand_in_s: number;
  /** null when no minute without a reconcile came within 15 min of Ready. */
  quiet_after_stand_in_s: number | null;
  idle_calls_by_minute: number[];
  ready_calls_per_workspace: number;
  ready_reconciles_per_workspace: number;
  ttl_provisioning_s: number;
  ttl_at_rest_s: number;
  /** Over the whole run (burst, ready, idle): a dropped watch event waits for the next requeue. */
  circuit_breaker_opens: number;
  watch_events_dropped: number;
  /** The berth-lifecycle CronOperation's runs the function answered in the idle minutes (one a minute when it works), and the median time the function took for one, with how many ExecutionWorkspaces it carried. */
  idle_lifecycle_runs: number;
  idle_lifecycle_run_ms: number | null;
  idle_lifecycle_run_workspaces: number | null;
}

/**
 * One rung of the ladder: one way of making the same objects for the same workspaces, measured
 * over the burst: from the first create until every XR is Synced and references all its objects
 * (Crossplane references an object before it applies it, and an XR whose apply failed is not
 * Synced), plus 5 s for the last reconciles. Per-workspace figures divide by the workspaces
 * created in the burst.
 */
interface Rung {
  converge_s: number;
  /**
   * Median and 90th percentile of the time each workspace took to be Synced with all its
   * objects: steadier than converge_s, which is the slowest straggler's and moves with when its
   * next requeue happens to come. null for the direct floor, which has no XRs.
   */
  workspace_converge_p50_s: number | null;
  workspace_converge_p90_s: number | null;
  cpu_s: Record<Component, number>;
  api_requests: number;
  /** null where there is no function or no Crossplane (the direct floor). */
  calls_per_workspace: number | null;
  reconciles_per_workspace: number | null;
  /** Server-side applies (apiserver_request_total verb APPLY) per workspace, by resource. */
  applies_per_workspace: Record<string, number>;
  /** Of all requests, the creates and updates that reached etcd per workspace, by resource: an apply that wrote nothing is not one. */
  writes_per_workspace: Record<string, number>;
  /** Events written (new ones and repeats) per workspace during the burst, by involved kind and reason: the writes that are not objects. */
  events_per_workspace: Record<string, number>;
}

/**
 * The burst, composed four ways on fresh control planes of the same build, so that each figure
 * says whose it is:
 *   direct              the converged objects server-side-applied by a client, Namespaces first: no Crossplane;
 *   crossplane          Crossplane and a function (bench/go-noop, function-sdk-go) that returns the
 *                       same objects, all at once and each ready: what Crossplane itself costs;
 *   crossplane_3_steps  the same in Berth's creation order (Namespace, boundary, workload);
 *   berth               Berth.
 */
interface Ladder {
  direct: Rung;
  crossplane?: Rung;
  crossplane_3_steps?: Rung;
  berth: Rung;
}

/** bench/stats.ts's q-quantile of some numbers, null if there are none. */
const quantileOrNull = (xs: number[], q: number): number | null => (xs.length > 0 ? quantile(xs, q) : null);

function rungOf(seconds: number, d: ReturnType<typeof delta>, workspaces: number, workspaceSeconds: number[] = [], events: Record<string, number> = {}): Rung {
  const perWorkspace = (r: Record<string, number>) => Object.fromEntries(Object.entries(r).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / workspaces]));
  const crossplane = d.reconciles > 0;
  return {
    converge_s: seconds,
    workspace_converge_p50_s: quantileOrNull(workspaceSeconds, 0.5),
    workspace_converge_p90_s: quantileOrNull(workspaceSeconds, 0.9),
    cpu_s: d.cpu,
    api_requests: d.apiRequests,
    calls_per_workspace: crossplane ? d.calls / workspaces : null,
    reconciles_per_workspace: crossplane ? d.reconciles / workspaces : null,
    applies_per_workspace: perWorkspace(d.applies),
    writes_per_workspace: perWorkspace(d.writes),
    events_per_workspace: perWorkspace(events),
  };
}

/** The example WorkspaceProfile and ExecutionWorkspaceClass, composed in every Crossplane rung. */
const PROFILE_AND_CLASS = [loadOne("examples/profile.yaml"), loadOne("examples/class-sandbox.yaml")];

/** The composed objects of these XRs, keyed kind/namespace/name. */
async function composedBy(kube: Kube, xrs: Obj[]): Promise<Map<string, Obj>> {
  const refs: any[] = [];
  for (const x of xrs) refs.push(...((await kube.get(x.apiVersion!, x.kind!, x.metadata!.name!))?.spec?.crossplane?.resourceRefs ?? []));
  return referenced(kube, refs);
}

/** Composition resource names of the objects that run code: the step Berth creates last (workloadLast). */
const WORKLOAD_RESOURCES = new Set([...DEVELOPER_WORKLOAD, ...RUNTIME_OBJECTS]);

/**
 * bench/go-noop's --compose-from file: each XR's converged objects as manifests, with the
 * composition resource name Berth gave each and its creation step (1 cluster-scoped, 2 the
 * boundary, 3 the workload).
 */
function writeComposeFile(n: number, objects: Obj[]): string {
  const byXR: Record<string, { name: string; step: number; resource: Obj }[]> = {};
  for (const o of objects) {
    const xr = o.metadata?.labels?.["crossplane.io/composite"];
    const name = o.metadata?.annotations?.["crossplane.io/composition-resource-name"];
    if (!xr || !name) throw new Error(`${o.kind} ${o.metadata?.name}: no crossplane.io/composite label or composition-resource-name annotation`);
    const step = o.metadata?.namespace === undefined ? 1 : WORKLOAD_RESOURCES.has(name) ? 3 : 2;
    (byXR[xr] ??= []).push({ name, step, resource: manifest(o) });
  }
  const file = join(tmpdir(), `berth-bench-system-compose-${process.pid}-n${n}.json`);
  writeFileSync(file, JSON.stringify(byXR));
  return file;
}

/**
 * A Crossplane rung: a fresh control plane with Berth installed as an operator installs it, but
 * with bench/go-noop serving under the function's name, composing `composeFile` in `steps`
 * steps; then the same two reference workspaces and the same burst as Berth's.
 */
async function crossplaneFloor(n: number, steps: 1 | 3, composeFile: string, docs: Obj[], want: Record<string, number>): Promise<Rung> {
  const label = `N=${n} crossplane floor, ${steps} step${steps === 1 ? "" : "s"}`;
  const cp = await startControlPlane({ log: () => {} });
  try {
    const fn = await cp.startFunction({ name: installedFunction().name, command: GO_FLOOR_BIN!, args: ["--compose-from", composeFile, "--steps", String(steps), "--metrics-address", "127.0.0.1:0"] });
    const c = new Cluster(cp.kubeconfig);
    await installBerth(c, () => {});
    await applyExampleCluster(c);
    await applyExampleProfileAndClass(c, (cls) => (cls.spec.lifecycle.idleTimeoutMinutes = 1440));
    for (const d of docs.slice(0, 2)) {
      await c.apply(d);
      const got = await expectedRefs(cp.kube, d.kind!, d.metadata!.name!);
      if (got !== want[d.kind!]) throw new Error(`${label}: ${d.kind} ${d.metadata!.name} composes ${got} objects, Berth's ${want[d.kind!]}`);
    }
    const b = await runBurst(cp, c, docs.slice(2), want, fn.logFile, floorCall, label);
    const d = delta(b.before, b.converged);
    const seconds = (Math.max(b.syncedAt, b.appliedAt) - b.t0) / 1000;
    say(`${label}: every XR Synced with all its objects in ${seconds.toFixed(1)} s (all objects referenced in ${((b.appliedAt - b.t0) / 1000).toFixed(1)} s); ${d.calls} calls, ${d.reconciles} reconciles, ${d.apiRequests} API requests`);
    return rungOf(seconds, d, docs.length - 2, b.workspaceSeconds, b.events);
  } finally {
    await cp.stop();
  }
}

interface Burst {
  t0: number;
  syncedAt: number;
  appliedAt: number;
  before: Sample;
  converged: Sample;
  /** Seconds from the first create until each XR of the burst was first seen Synced with all its objects (to the polling interval). */
  workspaceSeconds: number[];
  /** Events written from the first create until every XR converged, by involved kind and reason. */
  events: Record<string, number>;
}

/** Creates the documents at once and waits until every XR is Synced and has all its objects (`want`, by kind). */
async function runBurst(cp: ControlPlane, c: Cluster, docs: Obj[], want: Record<string, number>, functionLog: string, isCall: CallLine, label: string): Promise<Burst> {
  const total = docs.length + 2;
  const before = await sample(cp, functionLog, isCall);
  const events0 = await eventCounts(cp.kube);
  const t0 = Date.now();
  await pool(docs, CONCURRENCY, (d) => c.apply(d));
  let syncedAt = 0;
  let appliedAt = 0;
  let progressAt = t0;
  const doneAt = new Map<string, number>();
  for (;;) {
    const s = await xrStates(cp.kube, want);
    for (const k of s.done) if (!doneAt.has(k)) doneAt.set(k, Date.now());
    if (!syncedAt && s.synced >= total) syncedAt = Date.now();
    if (!appliedAt && s.applied >= total) appliedAt = Date.now();
    if (syncedAt && appliedAt) break;
    if (Date.now() - t0 > 30 * 60_000) throw new Error(`${label}: not converged after 30 min (${JSON.stringify({ synced: s.synced, applied: s.applied, ready: s.ready })})`);
    // A large burst takes minutes: say how far it has got, and what the API server refused.
    if (Date.now() - progressAt >= 60_000) {
      progressAt = Date.now();
      const now = await sample(cp, functionLog, isCall);
      say(`${label}: ${((progressAt - t0) / 1000).toFixed(0)} s: ${s.synced} of ${total} Synced, ${s.applied} with all their objects; ${now.calls - before.calls} calls, ${now.reconciles - before.reconciles} reconciles, ${now.apiThrottled - before.apiThrottled} requests refused with 429, ${now.xrWatchesClosed - before.xrWatchesClosed} XR watches closed; short of objects: ${[...s.behind].map(([k, v]) => `${k} ×${v}`).join(", ") || "none"}`);
    }
    await sleep(pollMs(total));
  }
  // Let the last reconciles finish before reading the counters (no new work arrives).
  await sleep(5_000);
  const burst = new Set(docs.map((d) => `${d.kind}/${d.metadata!.name}`));
  const workspaceSeconds = [...doneAt].filter(([k]) => burst.has(k)).map(([, at]) => (at - t0) / 1000);
  const converged = await sample(cp, functionLog, isCall);
  return { t0, syncedAt, appliedAt, before, converged, workspaceSeconds, events: eventsWritten(events0, await eventCounts(cp.kube)).counts };
}

async function measure(n: number): Promise<Result> {
  const total = 2 * n;
  say(`N=${n}: ${n} DeveloperWorkspaces and ${n} ExecutionWorkspaces`);
  const cp = await startControlPlane({ log: () => {} });
  let floorCp: ControlPlane | undefined;
  try {
    const fn = await cp.startFunction({ name: installedFunction().name, command: process.execPath, args: [...shippedNodeFlags(), SHIPPED_ENTRY, "--debug"], cwd: REPO, env: TTL_OVERRIDES });
    const c = new Cluster(cp.kubeconfig);
    await installBerth(c, () => {});
    await applyExampleCluster(c);
    // The shipped lifecycle CronOperation runs throughout and judges every ExecutionWorkspace each
    // minute, but with the example's 15 idle minutes it would suspend them all in the middle of
    // the run (none signals activity), and "idle" would measure suspensions: a day instead.
    await applyExampleProfileAndClass(c, (cls) => (cls.spec.lifecycle.idleTimeoutMinutes = 1440));
    const docs = workspaces(n);
    // One workspace of each kind first, alone: how many objects a converged one composes.
    const want: Record<string, number> = {};
    for (const d of docs.slice(0, 2)) {
      await c.apply(d);
      want[d.kind!] = await expectedRefs(cp.kube, d.kind!, d.metadata!.name!);
    }
    say(`N=${n}: a converged DeveloperWorkspace composes ${want.DeveloperWorkspace} objects, an ExecutionWorkspace ${want.ExecutionWorkspace}`);

    const { t0, syncedAt, appliedAt, before, converged, workspaceSeconds, events: burstEvents } = await runBurst(cp, c, docs.slice(2), want, fn.logFile, berthCall, `N=${n}`);
    const burst = delta(before, converged);
    const xrSize = await xrSizes(cp.kube);
    const pids = cp.pids();
    const peak = Object.fromEntries(Object.entries(COMPONENTS).map(([k, name]) => [k, pids[name] ? peakRssMb(pids[name]!) : 0])) as Record<Component, number>;
    say(`N=${n}: all Synced in ${((syncedAt - t0) / 1000).toFixed(1)} s, all objects in ${((appliedAt - t0) / 1000).toFixed(1)} s; ${burst.calls} calls, ${burst.reconciles} reconciles, ${burst.apiRequests} API requests`);

    // Ready: the stand-in marks the runtime objects ready; the function then reports each workspace Ready.
    const objects = await composed(cp.kube);
    const tr = Date.now();
    const marked = await standInForTheNode(c, objects);
    for (;;) {
      const s = await xrStates(cp.kube, want);
      if (s.ready >= total) break;
      if (Date.now() - tr > 15 * 60_000) throw new Error(`N=${n}: ${s.ready} of ${total} workspaces Ready 15 min after the stand-in`);
      await sleep(pollMs(total));
    }
    const readyAt = Date.now();
    // Every workspace says Ready, but what the status writes enqueued may still be queued in
    // Crossplane (reconciles) and in its event recorder (events drain at its client's rate):
    // settle until no reconcile has run for QUIET_MS, so that idle measures rest, not backlog.
    let last = await sample(cp, fn.logFile);
    let quietSince = Date.now();
    while (Date.now() - quietSince < QUIET_MS && Date.now() - readyAt < SETTLE_MAX_MS) {
      await sleep(5_000);
      const now = await sample(cp, fn.logFile);
      if (now.reconciles !== last.reconciles || now.calls !== last.calls) quietSince = Date.now();
      last = now;
    }
    // With a short TTL at rest the system is never quiet for a minute: the requeues are the idle cost itself.
    const settledAt = Date.now() - quietSince >= QUIET_MS ? quietSince : undefined;
    const readying = delta(converged, last);
    say(`N=${n}: stand-in marked ${marked} runtime objects ready; every workspace Ready ${((readyAt - tr) / 1000).toFixed(1)} s later, ${settledAt ? `quiet ${((settledAt - tr) / 1000).toFixed(1)} s later` : "never a quiet minute"}; ${readying.calls} calls, ${readying.reconciles} reconciles`);

    // Idle: nothing changes; what does the system still do?
    const atRest = await composed(cp.kube);
    const xrs0 = (await xrStates(cp.kube, want)).versions;
    const events0 = await eventCounts(cp.kube);
    const idle0 = await sample(cp, fn.logFile);
    if (IDLE_MS > 0) say(`N=${n}: idle for ${IDLE_MS / 60_000} min`);
    // Calls per idle minute, to tell a steady cost from a tail.
    const idleCallsByMinute: number[] = [];
    let minuteStart = idle0;
    for (let m = 0; m < IDLE_MS / 60_000; m++) {
      await sleep(60_000);
      const end = await sample(cp, fn.logFile);
      idleCallsByMinute.push(end.calls - minuteStart.calls);
      minuteStart = end;
    }
    const idle1 = await sample(cp, fn.logFile);
    const idle = delta(idle0, idle1);
    const idleRuns = idle1.lifecycleRuns.slice(idle0.lifecycleRuns.length);
    const after = await composed(cp.kube);
    const movedObjects = tally([...atRest].filter(([k, o]) => after.get(k)?.metadata?.resourceVersion !== o.metadata?.resourceVersion).map(([, o]) => o.kind!));
    const xrs1 = (await xrStates(cp.kube, want)).versions;
    const movedXRs = tally([...xrs0].filter(([k, v]) => xrs1.get(k) !== v).map(([k]) => k.split("/")[0]!));
    const events = eventsWritten(events0, await eventCounts(cp.kube));
    const perHour = (x: number) => (IDLE_MS > 0 ? (x / total) * (3_600_000 / (idle1.at - idle0.at)) : 0);
    const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
    const profileAndClass = await composedBy(cp.kube, PROFILE_AND_CLASS);
    await cp.stop();

    // The floor: the same objects applied directly, Namespaces first, on a control plane with no Crossplane.
    floorCp = await startControlPlane({ crossplane: false, log: () => {} });
    const fc = new Cluster(floorCp.kubeconfig);
    await installUpstreamCRDs(fc, () => {});
    await applyExampleCluster(fc);
    const manifests = [...objects.values()].map(manifest);
    const namespaces = manifests.filter((o) => o.kind === "Namespace");
    const rest = manifests.filter((o) => o.kind !== "Namespace");
    const f0 = await sample(floorCp, undefined);
    const tf = Date.now();
    await pool(namespaces, CONCURRENCY, (o) => fc.apply(o));
    await pool(rest, CONCURRENCY, (o) => fc.apply(o));
    const floorS = (Date.now() - tf) / 1000;
    await sleep(5_000);
    const floor = delta(f0, await sample(floorCp, undefined));
    await floorCp.stop();
    floorCp = undefined;

    // The Crossplane floors: the same XRs composed by a function that returns these objects and computes nothing.
    const ladder: Ladder = { direct: rungOf(floorS, floor, total), berth: rungOf((Math.max(syncedAt, appliedAt) - t0) / 1000, burst, total - 2, workspaceSeconds, burstEvents) };
    if (GO_FLOOR_BIN) {
      const composeFile = writeComposeFile(n, [...objects.values(), ...profileAndClass.values()]);
      try {
        for (const steps of CROSSPLANE_STEPS) ladder[steps === 1 ? "crossplane" : "crossplane_3_steps"] = await crossplaneFloor(n, steps, composeFile, docs, want);
      } finally {
        rmSync(composeFile, { force: true });
      }
    }
    say(`N=${n}: ladder ${Object.entries(ladder).map(([k, r]) => `${k} ${r.converge_s.toFixed(1)} s`).join(", ")}`);

    const convergeS = (appliedAt - t0) / 1000;
    return {
      n,
      workspaces: total,
      ladder,
      converge_synced_s: (syncedAt - t0) / 1000,
      converge_s: convergeS,
      floor_s: floorS,
      converge_ratio: convergeS / floorS,
      apiserver_cpu_s: burst.cpu.apiserver,
      floor_apiserver_cpu_s: floor.cpu.apiserver,
      apiserver_cpu_ratio: burst.cpu.apiserver / floor.cpu.apiserver,
      cpu_s: burst.cpu,
      floor_cpu_s: { apiserver: floor.cpu.apiserver, etcd: floor.cpu.etcd },
      peak_rss_mb: peak,
      // The two reference workspaces converged before the burst; the burst is the other total - 2.
      calls_per_workspace: burst.calls / (total - 2),
      reconciles_per_workspace: burst.reconciles / (total - 2),
      api_requests: burst.apiRequests,
      api_requests_throttled: burst.apiThrottled,
      xr_watches_closed: burst.xrWatchesClosed,
      xr_conflicts: burst.xrConflicts,
      ...xrSize,
      floor_api_requests: floor.apiRequests,
      api_requests_by_verb_and_resource: burst.requestsBy,
      floor_api_requests_by_verb_and_resource: floor.requestsBy,
      idle_api_requests_by_verb_and_resource: idle.requestsBy,
      idle_minutes: IDLE_MS / 60_000,
      idle_calls_per_workspace_hour: perHour(idle.calls),
      idle_reconciles_per_workspace_hour: perHour(idle.reconciles),
      idle_cpu_s_per_workspace_hour: perHour(idle.cpu.function + idle.cpu.crossplane + idle.cpu.apiserver + idle.cpu.etcd),
      idle_resource_versions_changed: sum(movedObjects) + sum(movedXRs),
      idle_events_written: sum(events.counts),
      idle_resource_versions_changed_by_kind: { ...movedObjects, ...Object.fromEntries(Object.entries(movedXRs).map(([k, v]) => [`${k} (XR)`, v])) },
      idle_events_by_kind_and_reason: events.counts,
      idle_event_examples: events.examples,
      ready_after_stand_in_s: (readyAt - tr) / 1000,
      quiet_after_stand_in_s: settledAt ? (settledAt - tr) / 1000 : null,
      idle_calls_by_minute: idleCallsByMinute,
      ready_calls_per_workspace: readying.calls / total,
      ready_reconciles_per_workspace: readying.reconciles / total,
      ttl_provisioning_s: TTLS.provisioning,
      ttl_at_rest_s: TTLS.atRest,
      circuit_breaker_opens: idle1.circuitOpens - before.circuitOpens,
      watch_events_dropped: idle1.watchEventsDropped - before.watchEventsDropped,
      idle_lifecycle_runs: idleRuns.length,
      idle_lifecycle_run_ms: idleRuns.length > 0 ? median(idleRuns.map((r) => r.durationMs)) : null,
      idle_lifecycle_run_workspaces: idleRuns.at(-1)?.workspaces ?? null,
    };
  } finally {
    await cp.stop();
    await floorCp?.stop();
  }
}

const f = (x: number, d = 1) => x.toFixed(d);
const top = (r: Record<string, number>) => Object.entries(r).slice(0, 6).map(([k, v]) => `${k} ${v}`).join(", ") || "none";
/** The ladder, one line per rung and one for its applies and writes, each rung's time also as a ratio to the direct floor's and the Crossplane floor's. */
function ladderLines(l: Ladder): string[] {
  const sum = (x: Record<string, number>) => Object.values(x).reduce((a, b) => a + b, 0);
  const byResource = (x: Record<string, number>) => Object.entries(x).slice(0, 6).map(([k, v]) => `${k} ${f(v, 2)}`).join(", ") || "none";
  // Crossplane's floor is the cheaper of its two rungs: in one step, a Namespace and its contents race.
  const crossplane = [l.crossplane, l.crossplane_3_steps].filter((r): r is Rung => r !== undefined).sort((a, b) => a.converge_s - b.converge_s)[0];
  const lines = ["  ladder (the same objects for the same workspaces; ratios to direct / to the faster Crossplane rung):"];
  for (const [name, r] of Object.entries(l) as [string, Rung][]) {
    const ratio = (floor?: Rung) => (floor ? `${f(r.converge_s / floor.converge_s, 2)}x` : "-");
    lines.push(
      `    ${name.padEnd(18)} ${f(r.converge_s).padStart(6)} s (${ratio(l.direct)} / ${ratio(crossplane)}${r.workspace_converge_p50_s === null ? "" : `; each workspace p50 ${f(r.workspace_converge_p50_s)} s, p90 ${f(r.workspace_converge_p90_s!)} s`}); CPU s API server ${f(r.cpu_s.apiserver)}, etcd ${f(r.cpu_s.etcd)}, Crossplane ${f(r.cpu_s.crossplane)}, function ${f(r.cpu_s.function)}; per workspace ${r.calls_per_workspace === null ? "no" : f(r.calls_per_workspace, 2)} calls, ${r.reconciles_per_workspace === null ? "no" : f(r.reconciles_per_workspace, 2)} reconciles, ${f(sum(r.applies_per_workspace), 1)} applies, ${f(sum(r.writes_per_workspace), 1)} writes`,
      `    ${"".padEnd(18)} applies: ${byResource(r.applies_per_workspace)}; writes: ${byResource(r.writes_per_workspace)}`,
      ...(Object.keys(r.events_per_workspace).length ? [`    ${"".padEnd(18)} events: ${byResource(r.events_per_workspace)}`] : []),
    );
  }
  return lines;
}

function print(r: Result): void {
  const cpu = (k: Component) => `${k} ${f(r.cpu_s[k])} s (peak ${f(r.peak_rss_mb[k], 0)} MB)`;
  process.stdout.write(
    [
      `N=${r.n} (${r.workspaces} workspaces, created at once)`,
      ...ladderLines(r.ladder),
      `  converge: all Synced ${f(r.converge_synced_s)} s, all objects ${f(r.converge_s)} s; floor (direct server-side apply) ${f(r.floor_s)} s; ratio ${f(r.converge_ratio, 2)}x`,
      `  API server CPU ${f(r.apiserver_cpu_s)} s vs floor ${f(r.floor_apiserver_cpu_s)} s: ${f(r.apiserver_cpu_ratio, 2)}x; API requests ${r.api_requests} (${r.api_requests_throttled} refused with 429) vs ${r.floor_api_requests}`,
      `  XRs: the API server closed ${r.xr_watches_closed} XR watches as unresponsive and refused ${r.xr_conflicts} XR writes as conflicts (stale cache); one XR ${f(r.xr_bytes / 1024)} KB, ${f(r.xr_managed_fields_bytes / 1024)} KB of it managedFields`,
      `  per workspace: ${f(r.calls_per_workspace, 2)} RunFunction calls, ${f(r.reconciles_per_workspace, 2)} reconciles`,
      `  API requests, most frequent: ${top(r.api_requests_by_verb_and_resource)}; floor: ${top(r.floor_api_requests_by_verb_and_resource)}`,
      `  CPU: ${(Object.keys(COMPONENTS) as Component[]).map(cpu).join(", ")}`,
      `  ready (stand-in for the node): every workspace Ready ${f(r.ready_after_stand_in_s)} s after its runtime objects were marked ready, ${r.quiet_after_stand_in_s === null ? "never a minute without a reconcile in the 15 min after" : `no reconcile for a minute from ${f(r.quiet_after_stand_in_s)} s`}; ${f(r.ready_calls_per_workspace, 2)} calls, ${f(r.ready_reconciles_per_workspace, 2)} reconciles per workspace`,
      `  idle ${r.idle_minutes} min (response TTL ${r.ttl_provisioning_s} s provisioning, ${r.ttl_at_rest_s} s at rest): ${f(r.idle_calls_per_workspace_hour, 2)} calls, ${f(r.idle_reconciles_per_workspace_hour, 2)} reconciles, ${f(r.idle_cpu_s_per_workspace_hour, 3)} CPU s per workspace per hour; calls by minute ${r.idle_calls_by_minute.join(" ")}`,
      `  idle API requests, most frequent: ${top(r.idle_api_requests_by_verb_and_resource)}`,
      `  lifecycle CronOperation while idle: ${r.idle_lifecycle_runs} runs answered in ${r.idle_minutes} min${r.idle_lifecycle_run_ms === null ? "" : `, ${f(r.idle_lifecycle_run_ms, 0)} ms each (median) for ${r.idle_lifecycle_run_workspaces} ExecutionWorkspaces`}`,
      `  Crossplane's watch circuit breaker: opened ${r.circuit_breaker_opens} times, dropped ${r.watch_events_dropped} watch events over the run`,
      `  idle writes: ${r.idle_resource_versions_changed} resourceVersions moved ${JSON.stringify(r.idle_resource_versions_changed_by_kind)}, ${r.idle_events_written} events written ${JSON.stringify(r.idle_events_by_kind_and_reason)}`,
      "",
    ].join("\n"),
  );
}

const results: Result[] = [];
/** The Crossplane floors' function (bench/go-noop), built once, or undefined with --no-crossplane-floor. */
const GO_FLOOR_BIN = opts["no-crossplane-floor"] ? undefined : /^GO_FLOOR_BIN=(.+)$/m.exec(execFileSync("bash", ["bench/go-noop/build.sh"], { cwd: REPO, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }))![1];
say(`machine: ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores; sizes ${SIZES.join(", ")}; idle ${IDLE_MS / 60_000} min; concurrency ${CONCURRENCY}; response TTL ${TTLS.provisioning} s provisioning, ${TTLS.atRest} s at rest`);
execFileSync("npm", ["run", "-s", "bundle"], { cwd: REPO, stdio: "inherit" });
for (const n of SIZES) {
  const r = await measure(n);
  print(r);
  results.push(r);
  // Written after each size, so that a later size failing loses nothing measured.
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ date: new Date().toISOString(), cores: Number(execFileSync("nproc", { encoding: "utf8" }).trim()), results }, null, 2)}\n`);
}
