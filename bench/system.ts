// npm run bench:system [-- --n 50,200,1000] [--idle-minutes 10] [--json <file>] [--keep-going]
//
// What the whole system pays for Berth, measured as operators meet it: on the local control
// plane (etcd, kube-apiserver, kube-controller-manager and Crossplane core as processes,
// function-berth as its shipped bundle over TLS), N DeveloperWorkspaces and N
// ExecutionWorkspaces are created at once, and the run reports
//   converge  time to every XR Synced, and to every composed object applied (each XR's
//             resourceRefs complete);
//   cost      RunFunction calls and Crossplane reconciles per workspace, API requests, and the
//             CPU seconds and peak RSS of the function, Crossplane, the API server and etcd;
//   idle      the same over --idle-minutes with nothing changing, per workspace per hour, and
//             whether any composed object's resourceVersion moved or any event was written.
// In the same run, the floor: a fresh control plane without Crossplane where the same converged
// objects (read back from the cluster) are applied directly with server-side apply, at the same
// concurrency. Ratios are Berth's figure over the floor's. Needs the control-plane build
// (npm run controlplane:build) and the upstream CRDs (BERTH_UPSTREAM_CRDS or a download).
//
// Counting: RunFunction calls are the function's per-call debug lines ("rendered"), reconciles
// controller-runtime's controller_runtime_reconcile_total for the XR controllers, API requests
// the API server's apiserver_request_total, CPU utime+stime from /proc of each process.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startControlPlane, type ControlPlane } from "../test/conformance/controlplane/controlplane.js";
import type { Kube } from "../test/conformance/controlplane/kube.js";
import { Cluster, installBerth, installUpstreamCRDs, load, loadOne, REPO, type Obj } from "../test/conformance/setup.js";
import { installedFunction } from "../test/support/function-name.js";
import { SHIPPED_ENTRY, shippedNodeFlags } from "../image/shipped.js";

const { values: opts } = parseArgs({
  options: {
    n: { type: "string", default: "50,200,1000" },
    "idle-minutes": { type: "string", default: "10" },
    json: { type: "string" },
    concurrency: { type: "string", default: "32" },
  },
  allowPositionals: false,
});
const SIZES = opts.n!.split(",").map(Number);
const IDLE_MS = Number(opts["idle-minutes"]) * 60_000;
const CONCURRENCY = Number(opts.concurrency);
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

/** Peak resident set (VmHWM) in MB. */
function peakRssMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
}

/** Sums a Prometheus counter's samples whose labels match. */
function sumCounter(text: string, name: string, labels: (l: string) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const l = line.slice(name.length, line.lastIndexOf(" "));
    if (labels(l)) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

interface Sample {
  at: number;
  cpu: Record<Component, number>;
  calls: number;
  reconciles: number;
  apiRequests: number;
}

async function sample(cp: ControlPlane, functionLog: string | undefined): Promise<Sample> {
  const pids = cp.pids();
  const cpu = Object.fromEntries(Object.entries(COMPONENTS).map(([k, name]) => [k, pids[name] ? cpuSeconds(pids[name]!) : 0])) as Record<Component, number>;
  const metrics = (await cp.kube.raw("GET", "/metrics")).body as unknown;
  const apiRequests = sumCounter(typeof metrics === "string" ? metrics : "", "apiserver_request_total");
  let reconciles = 0;
  if (cp.crossplaneMetricsPort) {
    const text = await (await fetch(`http://127.0.0.1:${cp.crossplaneMetricsPort}/metrics`)).text();
    reconciles = sumCounter(text, "controller_runtime_reconcile_total", (l) => /controller="[^"]*workspaces\.berth\.dev/.test(l) && !/WorkspaceProfile|profiles|classes/.test(l));
  }
  const calls = functionLog ? readFileSync(functionLog, "utf8").split("\n").filter((l) => l.includes('"msg":"rendered"') && /(Developer|Execution)Workspace /.test(l)).length : 0;
  return { at: Date.now(), cpu, calls, reconciles, apiRequests };
}

const delta = (a: Sample, b: Sample) => ({
  seconds: (b.at - a.at) / 1000,
  cpu: Object.fromEntries(Object.keys(a.cpu).map((k) => [k, b.cpu[k as Component] - a.cpu[k as Component]])) as Record<Component, number>,
  calls: b.calls - a.calls,
  reconciles: b.reconciles - a.reconciles,
  apiRequests: b.apiRequests - a.apiRequests,
});

/** Runs fn over items with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
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

/** What each XR kind composes when converged: the count of its resourceRefs. */
async function expectedRefs(kube: Kube, kind: string, name: string): Promise<number> {
  return kube.waitFor(`${kind} ${name} converged (one reference workspace)`, async () => {
    const xr = await kube.get(API, kind, name);
    const synced = (xr?.status?.conditions ?? []).some((c: any) => c.type === "Synced" && c.status === "True");
    return synced && (xr.spec?.crossplane?.resourceRefs ?? []).length > 0 ? (xr.spec.crossplane.resourceRefs.length as number) : undefined;
  }, 180_000, 500);
}

interface XRState {
  synced: number;
  applied: number;
}

async function xrStates(kube: Kube, want: Record<string, number>): Promise<XRState> {
  let synced = 0;
  let applied = 0;
  for (const kind of KINDS) {
    for (const xr of await kube.list<any>(API, kind)) {
      if (!xr.metadata.name.startsWith("sys-")) continue;
      if ((xr.status?.conditions ?? []).some((c: any) => c.type === "Synced" && c.status === "True")) synced++;
      if ((xr.spec?.crossplane?.resourceRefs ?? []).length >= want[kind]!) applied++;
    }
  }
  return { synced, applied };
}

/** Every composed object of the sys-* XRs, as the cluster holds it, keyed kind/namespace/name, with its resourceVersion. */
async function composed(kube: Kube): Promise<Map<string, Obj>> {
  const out = new Map<string, Obj>();
  const refs: any[] = [];
  for (const kind of KINDS) for (const xr of await kube.list<any>(API, kind)) if (xr.metadata.name.startsWith("sys-")) refs.push(...(xr.spec?.crossplane?.resourceRefs ?? []));
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

/** What the examples need that is not Berth's: the reviewed Services' namespaces, the StorageClass, the Services. */
async function clusterPrerequisites(c: Cluster): Promise<void> {
  for (const ns of ["ai-gateway", "mcp", "team-payments"]) await c.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  for (const o of [...load("examples/cluster/storageclass.yaml"), ...load("examples/cluster/services.yaml")]) await c.apply(o);
}

interface Result {
  n: number;
  workspaces: number;
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
  floor_api_requests: number;
  idle_minutes: number;
  idle_calls_per_workspace_hour: number;
  idle_reconciles_per_workspace_hour: number;
  idle_cpu_s_per_workspace_hour: number;
  idle_resource_versions_changed: number;
  idle_events_written: number;
}

async function measure(n: number): Promise<Result> {
  const total = 2 * n;
  say(`N=${n}: ${n} DeveloperWorkspaces and ${n} ExecutionWorkspaces`);
  const cp = await startControlPlane({ log: () => {} });
  let floorCp: ControlPlane | undefined;
  try {
    const fn = await cp.startFunction({ name: installedFunction().name, command: process.execPath, args: [...shippedNodeFlags(), SHIPPED_ENTRY, "--debug"], cwd: REPO });
    const c = new Cluster(cp.kubeconfig);
    await installBerth(c, () => {});
    await clusterPrerequisites(c);
    for (const o of [loadOne("examples/profile.yaml"), loadOne("examples/class-sandbox.yaml")]) await c.apply(o);
    await cp.kube.waitFor("class sandbox-session Ready", async () => ((await cp.kube.get(API, "ExecutionWorkspaceClass", "sandbox-session"))?.status?.conditions ?? []).some((x: any) => x.type === "Ready" && x.status === "True"), 120_000);
    const docs = workspaces(n);
    // One workspace of each kind first, alone: how many objects a converged one composes.
    const want: Record<string, number> = {};
    for (const d of docs.slice(0, 2)) {
      await c.apply(d);
      want[d.kind!] = await expectedRefs(cp.kube, d.kind!, d.metadata!.name!);
    }
    say(`N=${n}: a converged DeveloperWorkspace composes ${want.DeveloperWorkspace} objects, an ExecutionWorkspace ${want.ExecutionWorkspace}`);

    const before = await sample(cp, fn.logFile);
    const t0 = Date.now();
    await pool(docs.slice(2), CONCURRENCY, (d) => c.apply(d));
    let syncedAt = 0;
    let appliedAt = 0;
    for (;;) {
      const s = await xrStates(cp.kube, want);
      if (!syncedAt && s.synced >= total) syncedAt = Date.now();
      if (!appliedAt && s.applied >= total) appliedAt = Date.now();
      if (syncedAt && appliedAt) break;
      if (Date.now() - t0 > 30 * 60_000) throw new Error(`N=${n}: not converged after 30 min (${JSON.stringify(s)})`);
      await sleep(500);
    }
    // Let the last reconciles finish before reading the counters (no new work arrives).
    await sleep(5_000);
    const converged = await sample(cp, fn.logFile);
    const burst = delta(before, converged);
    const pids = cp.pids();
    const peak = Object.fromEntries(Object.entries(COMPONENTS).map(([k, name]) => [k, pids[name] ? peakRssMb(pids[name]!) : 0])) as Record<Component, number>;
    say(`N=${n}: all Synced in ${((syncedAt - t0) / 1000).toFixed(1)} s, all objects in ${((appliedAt - t0) / 1000).toFixed(1)} s; ${burst.calls} calls, ${burst.reconciles} reconciles, ${burst.apiRequests} API requests`);

    // Idle: nothing changes; what does the system still do?
    const objects = await composed(cp.kube);
    const events0 = (await cp.kube.listAllNamespaces("v1", "Event")).length;
    const idle0 = await sample(cp, fn.logFile);
    if (IDLE_MS > 0) say(`N=${n}: idle for ${IDLE_MS / 60_000} min`);
    await sleep(IDLE_MS);
    const idle1 = await sample(cp, fn.logFile);
    const idle = delta(idle0, idle1);
    const after = await composed(cp.kube);
    let moved = 0;
    for (const [k, o] of objects) if (after.get(k)?.metadata?.resourceVersion !== o.metadata?.resourceVersion) moved++;
    const events = (await cp.kube.listAllNamespaces("v1", "Event")).length - events0;
    const perHour = (x: number) => (IDLE_MS > 0 ? (x / total) * (3_600_000 / (idle1.at - idle0.at)) : 0);
    await cp.stop();

    // The floor: the same objects applied directly, Namespaces first, on a control plane with no Crossplane.
    floorCp = await startControlPlane({ crossplane: false, log: () => {} });
    const fc = new Cluster(floorCp.kubeconfig);
    await installUpstreamCRDs(fc, () => {});
    await clusterPrerequisites(fc);
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

    const convergeS = (appliedAt - t0) / 1000;
    return {
      n,
      workspaces: total,
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
      floor_api_requests: floor.apiRequests,
      idle_minutes: IDLE_MS / 60_000,
      idle_calls_per_workspace_hour: perHour(idle.calls),
      idle_reconciles_per_workspace_hour: perHour(idle.reconciles),
      idle_cpu_s_per_workspace_hour: perHour(idle.cpu.function + idle.cpu.crossplane + idle.cpu.apiserver + idle.cpu.etcd),
      idle_resource_versions_changed: moved,
      idle_events_written: events,
    };
  } finally {
    await cp.stop();
    await floorCp?.stop();
  }
}

const f = (x: number, d = 1) => x.toFixed(d);
function print(r: Result): void {
  const cpu = (k: Component) => `${k} ${f(r.cpu_s[k])} s (peak ${f(r.peak_rss_mb[k], 0)} MB)`;
  process.stdout.write(
    [
      `N=${r.n} (${r.workspaces} workspaces, created at once)`,
      `  converge: all Synced ${f(r.converge_synced_s)} s, all objects ${f(r.converge_s)} s; floor (direct server-side apply) ${f(r.floor_s)} s; ratio ${f(r.converge_ratio, 2)}x`,
      `  API server CPU ${f(r.apiserver_cpu_s)} s vs floor ${f(r.floor_apiserver_cpu_s)} s: ${f(r.apiserver_cpu_ratio, 2)}x; API requests ${r.api_requests} vs ${r.floor_api_requests}`,
      `  per workspace: ${f(r.calls_per_workspace, 2)} RunFunction calls, ${f(r.reconciles_per_workspace, 2)} reconciles`,
      `  CPU: ${(Object.keys(COMPONENTS) as Component[]).map(cpu).join(", ")}`,
      `  idle ${r.idle_minutes} min: ${f(r.idle_calls_per_workspace_hour, 2)} calls, ${f(r.idle_reconciles_per_workspace_hour, 2)} reconciles, ${f(r.idle_cpu_s_per_workspace_hour, 3)} CPU s per workspace per hour; ${r.idle_resource_versions_changed} resourceVersions moved, ${r.idle_events_written} events written`,
      "",
    ].join("\n"),
  );
}

const results: Result[] = [];
say(`machine: ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores; sizes ${SIZES.join(", ")}; idle ${IDLE_MS / 60_000} min; concurrency ${CONCURRENCY}`);
execFileSync("npm", ["run", "-s", "bundle"], { cwd: REPO, stdio: "inherit" });
for (const n of SIZES) {
  const r = await measure(n);
  print(r);
  results.push(r);
}
if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ date: new Date().toISOString(), cores: Number(execFileSync("nproc", { encoding: "utf8" }).trim()), results }, null, 2)}\n`);
