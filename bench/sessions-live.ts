// How fast an agent Session's ExecutionWorkspace starts, suspends and resumes on the live cluster
// with the real agent-sandbox controller, beside the floor of the same controller: the same
// Sandbox Berth converges to, applied directly into a namespace that already holds the rest of
// the workspace (its boundary and volume), then switched to Suspended and back by hand. So a
// figure beside its floor says how much of the time is Berth's (and Crossplane's).
//
// Each sample goes through three steps, timed from the request that starts it:
//   create   to the Sandbox's pod running its runtime, and to ready (Berth: the XR's phase
//            Ready; floor: the Sandbox's Ready condition for its current generation);
//   suspend  to the pod gone, and to suspended (Berth: phase Suspended; floor: the Sandbox's
//            Suspended condition for its current generation);
//   resume   to ready again with a file written before the suspend read back (1 MiB, compared).
// A batch runs its samples' steps at once (a step starts for every sample together and ends when
// the last is done), with `pause` seconds between steps: an agent's session rests between its
// steps (a suspend comes after at least the class's idle timeout, a minute or more), and Crossplane
// refills each XR's watch circuit breaker at one event a second meanwhile; with no pause the
// steps follow each other back to back. The watch events each XR causes are counted as Crossplane's per-XR watch
// circuit breaker charges them (an update 2 tokens, a create or delete 1; it opens after 100,
// refilled at 1 per second): the XR's own and its composed objects'.
import { Watch } from "@kubernetes/client-node";
import { type Obj, sleep, waitFor } from "../test/conformance/setup.js";
import type { LiveCluster } from "../test/live/cluster.js";
import { executionWorkspace, FIXTURES_NS, PROFILE, SANDBOX_CLASS } from "../test/live/fixtures.js";
import { renderConverged } from "../functions/berth/tooling/local-render.js";
import { quantile } from "./stats.js";

const API = "workspaces.berth.dev/v1alpha1";
const SANDBOX_API = "agents.x-k8s.io/v1beta1";
/** How long one step may take for a whole batch before the run gives up. */
const STEP_TIMEOUT_MS = 5 * 60_000;
const POLL_MS = 100;
const KEPT = "/workspace/kept";

export const STEPS = {
  create: ["pod_running", "ready"],
  suspend: ["pod_gone", "suspended"],
  resume: ["ready_with_files"],
} as const;
type Step = keyof typeof STEPS;
export type Mark = (typeof STEPS)[Step][number];
/** Seconds from each step's request to each mark, and the breaker's tokens an XR's watch events cost. */
/** Also whether Crossplane's watch circuit breaker opened for the XR (it said Responsive=False) at any poll of the batch. */
type MarkTimes = Partial<Record<`${Step}_${Mark}`, number>>;
export type SampleTimes = MarkTimes & { watch_tokens?: number; breaker_opened?: boolean };

/** What the cluster looked like at one poll. */
interface View {
  at: number;
  pods: Map<string, Obj>;
  sandboxes: Map<string, Obj>;
  xrs: Map<string, Obj>;
}

/** A Sandbox condition that speaks for the Sandbox as it is now (its generation), not as it was. */
function currentCondition(sandbox: Obj | undefined, type: string): boolean {
  const c = (sandbox?.status?.conditions ?? []).find((x: { type?: string }) => x.type === type);
  return c?.status === "True" && c.observedGeneration === sandbox?.metadata?.generation;
}

/** One session under test: Berth's ExecutionWorkspace, or the floor's bare Sandbox. */
interface Subject {
  name: string;
  namespace: string;
  create(): Promise<void>;
  suspend(): Promise<void>;
  resume(): Promise<void>;
  ready(v: View): boolean;
  suspended(v: View): boolean;
  cleanup(): Promise<void>;
}

function berthSubject(live: LiveCluster, name: string, cpu: string): Subject {
  const namespace = `ws-${name}`;
  const phase = (v: View) => v.xrs.get(name)?.status?.phase;
  return {
    name,
    namespace,
    create: async () => void (await live.cluster.apply(executionWorkspace(name, "Ready", cpu))),
    suspend: async () => void (await live.cluster.apply(executionWorkspace(name, "Suspended", cpu))),
    resume: async () => void (await live.cluster.apply(executionWorkspace(name, "Ready", cpu))),
    ready: (v) => phase(v) === "Ready",
    suspended: (v) => phase(v) === "Suspended",
    cleanup: async () => {
      await live.cluster.delete(API, "ExecutionWorkspace", name);
      await waitFor(`${namespace} gone`, async () => (await live.cluster.get("v1", "Namespace", namespace)) === undefined, 300_000, 1000);
    },
  };
}

/**
 * The floor: what Berth converges to for a workspace of this name (rendered locally against the
 * live profile, class and Services), applied directly, the Sandbox last and on its own clock.
 */
async function floorSubject(live: LiveCluster, name: string, cpu: string): Promise<Subject> {
  const cluster = await Promise.all([
    live.cluster.get(API, "WorkspaceProfile", PROFILE),
    live.cluster.get(API, "ExecutionWorkspaceClass", SANDBOX_CLASS),
    live.cluster.get("storage.k8s.io/v1", "StorageClass", "loop-ext4"),
    live.cluster.get("v1", "Service", "gateway", FIXTURES_NS),
    live.cluster.get("v1", "Service", "git", FIXTURES_NS),
  ]);
  const { response } = (await renderConverged(executionWorkspace(name, "Ready", cpu) as any, cluster.filter((o) => o !== undefined) as any)).at(-1)!;
  const objects = Object.values(response.desired?.resources ?? {}).map((r) => r.resource as Obj);
  const sandbox = objects.find((o) => o.kind === "Sandbox");
  if (!sandbox) throw new Error(`the render of ${name} has no Sandbox`);
  const namespace = sandbox.metadata!.namespace!;
  // The boundary and the volume first, as Berth's three creation steps leave them.
  for (const o of [...objects.filter((o) => o.kind === "Namespace"), ...objects.filter((o) => o.kind !== "Namespace" && o !== sandbox)]) await live.cluster.apply(o);
  const mode = (operatingMode: string) => live.cluster.apply({ ...sandbox, spec: { ...sandbox.spec, operatingMode } });
  const current = (v: View) => v.sandboxes.get(namespace);
  return {
    name,
    namespace,
    create: async () => void (await mode("Running")),
    suspend: async () => void (await mode("Suspended")),
    resume: async () => void (await mode("Running")),
    ready: (v) => currentCondition(current(v), "Ready"),
    suspended: (v) => currentCondition(current(v), "Suspended"),
    cleanup: async () => {
      await live.cluster.delete("v1", "Namespace", namespace);
      await waitFor(`${namespace} gone`, async () => (await live.cluster.get("v1", "Namespace", namespace)) === undefined, 300_000, 1000);
    },
  };
}

/** Polls the cluster every POLL_MS while a batch runs; `latest` is the newest complete view. */
class Poller {
  latest: View = { at: 0, pods: new Map(), sandboxes: new Map(), xrs: new Map() };
  /** The XRs seen saying Responsive=False (WatchCircuitOpen) at any poll. */
  readonly breakerOpened = new Set<string>();
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly live: LiveCluster) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const at = Date.now();
      const [pods, sandboxes, xrs] = await Promise.all([
        this.live.cp.kube.listAllNamespaces<Obj>("v1", "Pod"),
        this.live.cp.kube.listAllNamespaces<Obj>(SANDBOX_API, "Sandbox"),
        this.live.cp.kube.list<Obj>(API, "ExecutionWorkspace"),
      ]).catch(() => [[], [], []] as Obj[][]);
      this.latest = {
        at,
        pods: new Map(pods.filter((p) => p.metadata!.name === "workspace").map((p) => [p.metadata!.namespace!, p])),
        sandboxes: new Map(sandboxes.map((s) => [s.metadata!.namespace!, s])),
        xrs: new Map(xrs.map((x) => [x.metadata!.name!, x])),
      };
      for (const x of xrs) if ((x.status?.conditions ?? []).some((c: { type?: string; status?: string }) => c.type === "Responsive" && c.status === "False")) this.breakerOpened.add(x.metadata!.name!);
      await sleep(Math.max(0, POLL_MS - (Date.now() - at)));
    }
  }

  /** The time of the first view at or after `since` in which `holds` is true; on a timeout, what the namespace's pod was doing. */
  async until(what: string, since: number, holds: (v: View) => boolean, namespace: string): Promise<number> {
    return waitFor(what, async () => this.latest.at >= since && holds(this.latest) && this.latest.at, STEP_TIMEOUT_MS, POLL_MS / 2).catch((e) => {
      const pod = this.latest.pods.get(namespace);
      const said = pod ? `phase ${pod.status?.phase}, conditions ${JSON.stringify((pod.status?.conditions ?? []).filter((c: any) => c.status !== "True"))}` : "absent";
      throw new Error(`${e instanceof Error ? e.message : e}; its pod: ${said}`);
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

const runtimeRunning = (pod: Obj | undefined) => pod?.metadata?.deletionTimestamp === undefined && (pod?.status?.containerStatuses ?? []).some((c: any) => c.name === "runtime" && c.state?.running);

/**
 * Counts the watch events that reach Crossplane for one XR: the XR's own and those of every kind
 * it composes in its namespace (and its Namespace), charged as its circuit breaker charges them;
 * `bySource` says which kind cost what.
 */
async function watchTokens(live: LiveCluster, xr: string, namespace: string): Promise<{ tokens: () => number; bySource: () => Record<string, number>; stop: () => void }> {
  const by: Record<string, number> = {};
  const watch = new Watch(live.cluster.kc);
  const cost = (type: string) => (type === "MODIFIED" ? 2 : type === "ADDED" || type === "DELETED" ? 1 : 0);
  const sources = [
    ["ExecutionWorkspace", `/apis/${API}/executionworkspaces`, `metadata.name=${xr}`],
    ["Namespace", "/api/v1/namespaces", `metadata.name=${namespace}`],
    ...["serviceaccounts", "resourcequotas", "limitranges", "persistentvolumeclaims"].map((r) => [r, `/api/v1/namespaces/${namespace}/${r}`, ""]),
    ["networkpolicies", `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies`, ""],
    ["Sandbox", `/apis/${SANDBOX_API}/namespaces/${namespace}/sandboxes`, ""],
  ] as const;
  const requests = await Promise.all(
    sources.map(([source, path, fieldSelector]) => watch.watch(path, fieldSelector ? { fieldSelector } : {}, (type) => void (by[source] = (by[source] ?? 0) + cost(type)), () => undefined)),
  );
  return { tokens: () => Object.values(by).reduce((a, b) => a + b, 0), bySource: () => ({ ...by }), stop: () => requests.forEach((r) => r.abort()) };
}

/** Runs one batch of subjects through create, suspend and resume, each step at once for all. */
async function runBatch(live: LiveCluster, subjects: Subject[], countTokens: boolean, pauseS: number): Promise<SampleTimes[]> {
  const poller = new Poller(live);
  const times: SampleTimes[] = subjects.map(() => ({}));
  const counters = countTokens ? await Promise.all(subjects.map((s) => watchTokens(live, s.name, s.namespace))) : [];
  const kept: string[] = [];
  const step = async (name: Step, act: (s: Subject) => Promise<void>, marks: ((s: Subject, v: View) => boolean)[]) =>
    Promise.all(
      subjects.map(async (s, i) => {
        const t0 = Date.now();
        await act(s);
        for (const [k, holds] of marks.entries()) {
          const at = await poller.until(`${s.name}: ${name} ${STEPS[name][k]}`, t0, (v) => holds(s, v), s.namespace);
          times[i]![`${name}_${STEPS[name][k]}` as keyof MarkTimes] = (at - t0) / 1000;
        }
      }),
    );
  try {
    const perStep: Record<string, number>[] = subjects.map(() => ({}));
    const tally = (step: Step) => counters.forEach((c, i) => (perStep[i]![step] = c.tokens()));
    await step("create", (s) => s.create(), [(s, v) => runtimeRunning(v.pods.get(s.namespace)), (s, v) => s.ready(v) && runtimeRunning(v.pods.get(s.namespace))]);
    tally("create");
    for (const [i, s] of subjects.entries()) kept[i] = await probe(live, s.namespace, ["write", KEPT, "1Mi"]).then(() => probe(live, s.namespace, ["read", KEPT]));
    await sleep(pauseS * 1000);
    await step("suspend", (s) => s.suspend(), [(s, v) => !v.pods.has(s.namespace), (s, v) => s.suspended(v)]);
    tally("suspend");
    await sleep(pauseS * 1000);
    await Promise.all(
      subjects.map(async (s, i) => {
        const t0 = Date.now();
        await s.resume();
        await poller.until(`${s.name}: resume ready`, t0, (v) => s.ready(v) && runtimeRunning(v.pods.get(s.namespace)), s.namespace);
        const content = await probe(live, s.namespace, ["read", KEPT]);
        if (content !== kept[i]) throw new Error(`${s.name}: ${KEPT} read back after the resume differs from what was written before the suspend`);
        times[i]!.resume_ready_with_files = (Date.now() - t0) / 1000;
      }),
    );
    tally("resume");
    for (const [i, c] of counters.entries()) {
      times[i]!.watch_tokens = c.tokens();
      times[i]!.breaker_opened = poller.breakerOpened.has(subjects[i]!.name);
      process.stderr.write(`[sessions] ${subjects[i]!.name}: ${c.tokens()} watch tokens (cumulative after each step ${JSON.stringify(perStep[i])}), by source ${JSON.stringify(c.bySource())}\n`);
    }
  } finally {
    for (const c of counters) c.stop();
    await poller.stop();
    await Promise.all(subjects.map((s) => s.cleanup()));
  }
  return times;
}

/** workspace-probe in the session's runtime; returns what it printed (the file's content for read). */
async function probe(live: LiveCluster, namespace: string, args: string[]): Promise<string> {
  const r = await live.node.exec(namespace, "workspace", "runtime", ["/workspace-probe", ...args], 60_000);
  if (r.code !== 0) throw new Error(`workspace-probe ${args.join(" ")} in ${namespace}: exit ${r.code}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop()!).content ?? "";
}

export interface SessionLatency {
  /** Per mark: the samples' seconds, Berth's and the floor's. */
  berth: SampleTimes[];
  floor: SampleTimes[];
}

/**
 * `oneAtATime` sessions one after another, then `atOnce` together, for Berth and for the floor
 * (the floor first in each pair, so neither always runs on a warmer node).
 */
/**
 * A session's runtime CPU (requests and limits): 100m one at a time; 50m for those that run at
 * once, so that 20 fit on a 2-core node beside the cluster's own pods (at 100m about 12 do, and
 * the rest would wait Unschedulable, which is the node's limit, not Berth's).
 */
const CPU_ONE_AT_A_TIME = "100m";
const CPU_AT_ONCE = "50m";

export async function measureSessions(live: LiveCluster, opts: { oneAtATime: number; atOnce: number; pauseS: number; say: (m: string) => void }): Promise<{ single: SessionLatency; burst: SessionLatency }> {
  const single: SessionLatency = { berth: [], floor: [] };
  for (let i = 0; i < opts.oneAtATime; i++) {
    single.floor.push(...(await runBatch(live, [await floorSubject(live, `floor-${String(i).padStart(3, "0")}`, CPU_ONE_AT_A_TIME)], false, opts.pauseS)));
    single.berth.push(...(await runBatch(live, [berthSubject(live, `session-${String(i).padStart(3, "0")}`, CPU_ONE_AT_A_TIME)], true, opts.pauseS)));
    opts.say(`one at a time ${i + 1}/${opts.oneAtATime}: floor ${JSON.stringify(single.floor.at(-1))}; Berth ${JSON.stringify(single.berth.at(-1))}`);
  }
  const burst: SessionLatency = { berth: [], floor: [] };
  if (opts.atOnce > 0) {
    const floors = await Promise.all(Array.from({ length: opts.atOnce }, (_, i) => floorSubject(live, `floor-burst-${String(i).padStart(3, "0")}`, CPU_AT_ONCE)));
    burst.floor = await runBatch(live, floors, false, opts.pauseS);
    opts.say(`${opts.atOnce} at once: floor done`);
    burst.berth = await runBatch(live, Array.from({ length: opts.atOnce }, (_, i) => berthSubject(live, `burst-${String(i).padStart(3, "0")}`, CPU_AT_ONCE)), true, opts.pauseS);
    opts.say(`${opts.atOnce} at once: Berth done`);
  }
  return { single, burst };
}

/** bench/stats.ts's quantile, NaN for a mark no session reached (the table prints it, the run's other figures stand). */
const at = (xs: number[], q: number) => (xs.length > 0 ? quantile(xs, q) : NaN);

/** The table: each mark's p50, p95 and max, Berth beside the floor, as a ratio and a difference of medians. */
export function latencyTable(title: string, l: SessionLatency): { lines: string[]; json: Record<string, number> } {
  const lines = [
    `${title} (${l.berth.length} sessions each; seconds from the step's request)`,
    "| step | Berth p50 / p95 / max | floor p50 / p95 / max | p50 ratio | p50 difference |",
    "| --- | ---: | ---: | ---: | ---: |",
  ];
  const json: Record<string, number> = {};
  const r2 = (x: number) => Math.round(x * 100) / 100;
  const signed = (x: number) => (x >= 0 ? `+${x}` : `${x}`);
  for (const [step, marks] of Object.entries(STEPS)) {
    for (const mark of marks) {
      const key = `${step}_${mark}` as keyof MarkTimes;
      const b = l.berth.map((t) => t[key]!).filter((x) => x !== undefined);
      const f = l.floor.map((t) => t[key]!).filter((x) => x !== undefined);
      const row = (xs: number[]) => `${r2(at(xs, 0.5))} / ${r2(at(xs, 0.95))} / ${r2(Math.max(...xs))}`;
      lines.push(`| ${step} → ${mark.replace(/_/g, " ")} | ${row(b)} | ${row(f)} | ${r2(at(b, 0.5) / at(f, 0.5))}x | ${signed(r2(at(b, 0.5) - at(f, 0.5)))} s |`);
      Object.assign(json, { [`${key}_p50_s`]: r2(at(b, 0.5)), [`${key}_p95_s`]: r2(at(b, 0.95)), [`${key}_max_s`]: r2(Math.max(...b)), [`${key}_floor_p50_s`]: r2(at(f, 0.5)) });
    }
  }
  const tokens = l.berth.map((t) => t.watch_tokens ?? 0);
  lines.push(`Watch events each XR cost its circuit breaker over create, suspend and resume together: median ${at(tokens, 0.5)} tokens, max ${Math.max(...tokens)} (it holds 100, refilled at 1 a second, also during the pauses)`);
  json.watch_tokens_max = Math.max(...tokens);
  const opened = l.berth.filter((t) => t.breaker_opened).length;
  lines.push(`Crossplane's watch circuit breaker opened (the XR said Responsive=False) for ${opened} of ${l.berth.length} XRs`);
  json.breaker_opened = opened;
  return { lines, json };
}

