// The fault suite: faults injected into the running system while a fleet of workspaces is live
// (50 DeveloperWorkspaces and 10 ExecutionWorkspaces by default, ephemeral and persistent,
// Ready and still provisioning), on the local control plane: etcd, kube-apiserver,
// kube-controller-manager and Crossplane core as processes, function-berth as its own process
// behind a fault-injecting proxy on loopback. After every fault the suite checks the invariant
// users care about, no object a workspace owns deleted or re-created (same UIDs, the volume
// above all), and that the system converges by itself, and reports what the workspaces' status
// said during the fault and how long converging took.
//
// The scenarios run in order on one fleet: each starts from the converged state the one before
// it left. The inputs go wrong first, the processes after. Whatever becomes of a scenario, the
// fault it injected is undone after it (afterEach: the link passes again, every process runs,
// every input and workspace document is as the examples define it), and the next one first
// checks that the fleet is healthy: one that is not says which scenario left it so, instead of
// failing later with a message about its own fault.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startControlPlane, type ControlPlane } from "../conformance/controlplane/controlplane.js";
import { applyExampleCluster, applyExampleProfileAndClass, classPermitsInEffect, Cluster, installBerth, load, loadOne, ref, REPO, sleep, subsetDiff, waitFor, type Obj } from "../conformance/setup.js";
import { installedFunction } from "../support/function-name.js";
import { sumSamples, workspaceControllers } from "../support/prometheus.js";
import {
  API,
  fleetMembers,
  losses,
  memberKey,
  ownership,
  requestReconcile,
  seeAll,
  settled,
  standInForTheNode,
  type Member,
  type Seen,
} from "./fleet.js";
import { describeMode, FaultProxy } from "./proxy.js";
import { pool } from "../support/processes.js";
import { readFileSync, statSync } from "node:fs";
import { SHIPPED_ENTRY, shippedNodeFlags } from "../../image/shipped.js";
import { asObserved, fatalMessages, renderConverged, renderLocally } from "../../functions/berth/tooling/local-render.js";

const DEV = Number(process.env.BERTH_FAULTS_DEVELOPER_WORKSPACES ?? 50);
const EXEC = Number(process.env.BERTH_FAULTS_EXECUTION_WORKSPACES ?? 10);
/**
 * Crossplane 2.4 gives a function call no deadline of its own: it ends with the reconcile's, 2
 * minutes (internal/controller/apiextensions/composite/reconciler.go).
 */
const RECONCILE_DEADLINE_MS = 120_000;
/** Crossplane retries a failed XR reconcile with exponential backoff capped at 30 s (definition/reconciler.go). */
const MAX_BACKOFF_MS = 30_000;
/**
 * While an XR's watch circuit breaker is open, Crossplane lets one of its watch events through
 * every 30 s and drops the rest (internal/circuit): a reconcile request (an annotation) is such an
 * event, so one that was dropped is asked again after that long.
 */
const HALF_OPEN_MS = 30_000;
/**
 * How long the fleet may take to converge once a fault has ended: a reconcile already running
 * may run to its deadline and fail, the retry comes after the longest backoff, and then the
 * fleet's reconciles themselves, 60 workspaces' applies on 2 shared cores (90 s allowed).
 */
const CONVERGE_MS = RECONCILE_DEADLINE_MS + MAX_BACKOFF_MS + 90_000;
/** A partition must outlast a call's deadline for the call to fail rather than just wait. */
const UNREACHABLE_MS = RECONCILE_DEADLINE_MS + 10_000;
/**
 * A slow link to the function: every byte both ways this late, so a round trip takes a second.
 * HTTP/2 flow control then lets only a window of bytes travel per round trip: the function's
 * window sets how fast Crossplane's calls reach it (serve.ts, CONNECTION_WINDOW_BYTES).
 */
const SLOW_MS = 500;
const FUNCTION = installedFunction().name;
const FUNCTION_PROCESS = `function-${FUNCTION}`;

const log = (m: string) => process.stderr.write(`[faults ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

let cp: ControlPlane;
let c: Cluster;
let proxy: FaultProxy;
/** The function's log (it runs with --debug: one line per call, naming the XR). */
let functionLog: string;
/** The fleet, as it is now (scenarios add and delete workspaces). */
let members: Member[] = [];
/** How many objects each member owns when converged (its converged render, computed locally). */
const want = new Map<string, number>();

interface Row {
  fault: string;
  during: string;
  lost: number;
  convergeS: number;
}
const rows: Row[] = [];

/** The cluster objects a render reads, as the examples define them: what the local render is given. */
const clusterObjects = () => [
  loadOne("examples/profile.yaml"),
  loadOne("examples/class-sandbox.yaml"),
  ...load("examples/cluster/storageclass.yaml"),
  ...load("examples/cluster/services.yaml"),
];

async function countWanted(ms: Member[]): Promise<void> {
  for (const m of ms) {
    const { response } = (await renderConverged(m.doc as any, clusterObjects() as any)).at(-1)!;
    want.set(memberKey(m), Object.keys(response.desired?.resources ?? {}).length);
  }
}

/** Creates members and waits until they own all their objects, then until the running ones are Ready. */
async function bringUp(ms: Member[]): Promise<number> {
  const t = Date.now();
  await countWanted(ms);
  await pool(ms, 16, (m) => c.apply(m.doc));
  await settled(c, ms, want, CONVERGE_MS, { readiness: false });
  await standInForTheNode(c, ms);
  await converged(ms);
  return (Date.now() - t) / 1000;
}

/**
 * What a workspace's XR says once a reconcile has run during the fault: requests one and waits
 * (up to waitMs) for its Synced condition to turn False; returns that condition, or the status
 * as it stands if it never turned.
 */
async function statusDuring(m: Member, waitMs = 45_000): Promise<string> {
  await requestReconcile(c, [m]);
  const t = Date.now();
  for (;;) {
    const s = (await seeAll(c)).get(memberKey(m));
    if (s?.synced?.status === "False") return `Synced=False ${s.synced.reason}: ${s.synced.message}`;
    if (Date.now() - t > waitMs) return `Synced=${s?.synced?.status}, phase ${s?.phase} (unchanged ${waitMs / 1000} s after a reconcile was requested)`;
    await sleep(500);
  }
}

/** Crossplane's metrics, as text. */
const crossplaneMetrics = async () => (await fetch(`http://127.0.0.1:${cp.crossplaneMetricsPort}/metrics`)).text();

/** Reconciles of workspace XRs Crossplane is running right now (controller-runtime's active workers). */
async function reconcilesInFlight(): Promise<number> {
  return sumSamples(await crossplaneMetrics(), "controller_runtime_active_workers", workspaceControllers);
}

/** What Crossplane counted of its calls to the function since it started, and the watch events its circuit breakers dropped. */
interface CrossplaneCounts {
  calls: number;
  answered: number;
  pastDeadline: number;
  eventsDropped: number;
}

async function crossplaneCounts(): Promise<CrossplaneCounts> {
  const text = await crossplaneMetrics();
  const ours = (l: string) => l.includes(`function_name="${FUNCTION}"`);
  const answeredWith = (code: string) => sumSamples(text, "function_run_function_response_total", (l) => ours(l) && l.includes(`grpc_code="${code}"`));
  return {
    calls: sumSamples(text, "function_run_function_request_total", ours),
    answered: answeredWith("OK"),
    pastDeadline: answeredWith("DeadlineExceeded"),
    eventsDropped: sumSamples(text, "circuit_breaker_events_total", (l) => l.includes('result="Dropped"')),
  };
}

/** What Crossplane's counts say happened between two readings, in words. */
function crossplaneSaid(before: CrossplaneCounts, after: CrossplaneCounts): string {
  const d = (k: keyof CrossplaneCounts) => after[k] - before[k];
  return `Crossplane made ${d("calls")} calls to the function: ${d("answered")} answered, ${d("pastDeadline")} past its 2-minute reconcile deadline (DeadlineExceeded); its circuit breakers dropped ${d("eventsDropped")} watch events`;
}

/**
 * Waits until `judge` finds nothing wrong with any member (`judge` is given every XR as the API
 * server has it, once per poll). Crossplane's per-XR watch circuit breaker drops a reconcile
 * request (an annotation) for an XR whose watch events came in a burst (a previous fault's status
 * writes) and lets one event through every 30 s; nothing else may arrive before the TTL at rest
 * (15 min). So every HALF_OPEN_MS the members still wrong whose request is lost are asked again,
 * as an operator would (docs/known-limits.md), and the log says why. On a timeout the error
 * names the members still wrong and what Crossplane's calls did meanwhile.
 */
async function untilEvery(what: string, judge: (seen: Map<string, Seen>) => (m: Member) => string | undefined, timeoutMs: number): Promise<{ askedAgain: number }> {
  const counts = await crossplaneCounts();
  let askedAt = Date.now();
  let askedAgain = 0;
  let wrong: string[] = [];
  await waitFor(what, async () => {
    const seen = await seeAll(c);
    const why = judge(seen);
    const behind = members.filter((m) => why(m) !== undefined);
    wrong = behind.map((m) => `${memberKey(m)}: ${why(m)}`);
    if (behind.length > 0 && Date.now() - askedAt >= HALF_OPEN_MS) {
      // A request is lost if the breaker holds the XR, or if nothing is reconciling at all;
      // asking again while reconciles run would only add to their load.
      const idle = (await reconcilesInFlight()) === 0;
      const held = behind.filter((m) => seen.get(memberKey(m))?.responsive?.reason === "WatchCircuitOpen");
      const lost = idle ? behind : held;
      if (lost.length > 0) {
        log(`${what}: ${behind.length} not yet (${held.length} say WatchCircuitOpen, ${idle ? "no reconcile running" : "reconciles running"}); requesting a reconcile of ${lost.length} again`);
        await requestReconcile(c, lost);
        askedAgain++;
      }
      askedAt = Date.now();
    }
    return behind.length === 0;
  }, timeoutMs, 1000).catch(async (e) => {
    throw new Error(`${e.message}; ${wrong.length} not yet:\n  ${wrong.slice(0, 8).join("\n  ")}\n${crossplaneSaid(counts, await crossplaneCounts())}`);
  });
  return { askedAgain };
}

/**
 * The workspaces the function has answered a call for since `offset` bytes into its log (it runs
 * with --debug: one line per call, naming the XR), by memberKey. Crossplane 2.4 keeps no record
 * of a handled reconcile request on the XR (status.lastHandledReconcileAt is not in the CRDs it
 * generates), so the function's log is where a call for each workspace shows.
 */
function answeredSince(offset: number): Set<string> {
  const out = new Set<string>();
  for (const line of readFileSync(functionLog).subarray(offset).toString("utf8").split("\n")) {
    if (!line.includes('"msg":"rendered"')) continue;
    const m = /^(\w+) "(.+)"$/.exec(String((JSON.parse(line) as { composite?: unknown }).composite));
    if (m) out.add(`${m[1]}/${m[2]}`);
  }
  return out;
}

/**
 * Waits until the fleet is settled (see `settled`) with no reconcile of a workspace running: a
 * reconcile still waiting on the function (Crossplane gives it up to 2 minutes) may yet fail.
 * Returns the seconds it took.
 */
async function converged(ms: Member[] = members): Promise<number> {
  const t = Date.now();
  for (;;) {
    await settled(c, ms, want, Math.max(1000, CONVERGE_MS - (Date.now() - t)));
    if ((await reconcilesInFlight()) === 0) return (Date.now() - t) / 1000;
    if (Date.now() - t > CONVERGE_MS) throw new Error(`reconciles still running ${CONVERGE_MS / 1000} s after the fault ended`);
    await sleep(1000);
  }
}

/**
 * Has every member reconciled now (as its requeue would, sooner) and waits until the function has
 * answered a call for each (a request the breaker dropped asked again) and no reconcile runs: the
 * answers are back with Crossplane, or its 2-minute deadline has passed. Returns the seconds it
 * took, how many members were seen not Synced meanwhile, and what Crossplane's calls did.
 */
async function reconcileAll(): Promise<{ seconds: number; unsynced: number; askedAgain: number; pastDeadline: number; crossplane: string }> {
  const counts = await crossplaneCounts();
  const t = Date.now();
  const offset = statSync(functionLog).size;
  await requestReconcile(c, members);
  const unsynced = new Set<string>();
  const { askedAgain } = await untilEvery(`a call answered for every workspace`, (seen) => {
    const answered = answeredSince(offset);
    return (m) => {
      if (seen.get(memberKey(m))?.synced?.status !== "True") unsynced.add(memberKey(m));
      return answered.has(memberKey(m)) ? undefined : "no call answered by the function since the request";
    };
  }, CONVERGE_MS);
  await waitFor("every reconcile finished", async () => (await reconcilesInFlight()) === 0, RECONCILE_DEADLINE_MS, 500).catch(async (e) => {
    throw new Error(`${e.message}; ${crossplaneSaid(counts, await crossplaneCounts())}`);
  });
  const after = await crossplaneCounts();
  return { seconds: (Date.now() - t) / 1000, unsynced: unsynced.size, askedAgain, pastDeadline: after.pastDeadline - counts.pastDeadline, crossplane: crossplaneSaid(counts, after) };
}

/**
 * One fault: the ownership snapshot before, the fault injected (`inject` returns what status said
 * during it and ends it), then the fleet must converge and own exactly what it owned.
 */
async function survive(fault: string, inject: () => Promise<string>): Promise<void> {
  const before = await ownership(c, members);
  log(`${fault}: injecting (${members.length} workspaces, ${before.size} owned objects)`);
  const during = await inject();
  log(`${fault}: during the fault: ${during}`);
  const convergeS = await converged();
  const lost = losses(before, await ownership(c, members));
  rows.push({ fault, during, lost: lost.length, convergeS });
  log(`${fault}: converged ${convergeS.toFixed(1)} s after the fault ended; ${lost.length} owned objects deleted or re-created`);
  expect(lost).toEqual([]);
}

const first = (kind: Member["kind"], pick: (m: Member) => boolean = () => true) => {
  const m = members.find((x) => x.kind === kind && pick(x));
  if (!m) throw new Error(`no ${kind} in the fleet`);
  return m;
};
const persistent = (m: Member) => m.doc.spec?.storage?.mode === "persistent";

/**
 * What Berth answers each member now, by the local render: its live XR (spec and status as the
 * cluster has them), its converged objects as observed, and `cluster` as the objects the render
 * reads. Returns the fatal message of each member Berth refuses.
 */
async function expectedRefusals(cluster: Obj[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const m of members) {
    const live = await c.get(API, m.kind, m.name);
    const converged = (await renderConverged(m.doc as any, clusterObjects() as any)).at(-1)!.response;
    const { response } = await renderLocally(live as any, cluster as any, asObserved(converged));
    const fatal = fatalMessages(response)[0];
    if (fatal) out.set(memberKey(m), fatal);
  }
  return out;
}

/**
 * An input fault: `edit` changes what the workspaces read (or a workspace itself) and returns the
 * cluster objects as the render now sees them. Every workspace is reconciled under the fault (as
 * its requeue would, sooner); those Berth refuses must say so in their Synced condition with
 * Berth's own message, the others must stay Synced. Then `restore` undoes the edit.
 */
async function inputFault(fault: string, edit: () => Promise<Obj[]>, restore: () => Promise<void>): Promise<void> {
  await survive(fault, async () => {
    try {
      const cluster = await edit();
      const refusals = await expectedRefusals(cluster);
      await reconcileAll();
      await untilEvery(`${refusals.size} workspaces refused, ${members.length - refusals.size} still Synced`, (seen) => (m) => {
        const s = seen.get(memberKey(m));
        const refusal = refusals.get(memberKey(m));
        if (refusal === undefined) return s?.synced?.status === "True" ? undefined : `Synced=${s?.synced?.status} ${s?.synced?.message}`;
        return s?.synced?.status === "False" && s.synced.message?.includes(refusal) ? undefined : `Synced=${s?.synced?.status} ${s?.synced?.message}; expected the refusal ${refusal}`;
      }, RECONCILE_DEADLINE_MS);
      const example = [...refusals.keys()][0];
      const said = example === undefined ? undefined : (await seeAll(c)).get(example)?.synced;
      return said === undefined ? "every workspace stayed Synced" : `${refusals.size} of ${members.length} refused, Synced=False ${said.reason}: ${said.message}`;
    } finally {
      // Whatever happened, the next scenario starts from the example objects.
      await restore();
    }
  });
}

/** The example objects with one replaced (or, with `without`, left out). */
function clusterWith(replacement: Obj | undefined, without?: Obj): Obj[] {
  const same = (a: Obj, b: Obj) => a.kind === b.kind && a.metadata?.name === b.metadata?.name && a.metadata?.namespace === b.metadata?.namespace;
  const target = replacement ?? without!;
  return [...clusterObjects().filter((o) => !same(o, target)), ...(replacement ? [replacement] : [])];
}

const profile = () => loadOne("examples/profile.yaml");
const sandboxClass = () => loadOne("examples/class-sandbox.yaml");

/** Workspaces a scenario has created and not yet brought into the fleet (see finishProvisioning). */
let provisioning: Member[] = [];

/** Brings the workspaces being provisioned into the fleet: all their objects, the running ones marked running by the stand-in for the node. */
async function finishProvisioning(): Promise<void> {
  await settled(c, provisioning, want, CONVERGE_MS, { readiness: false });
  await standInForTheNode(c, provisioning);
  members = [...members, ...provisioning];
  provisioning = [];
}

/** The processes of the system under test, in the order they must run again (each needs the ones before it). */
const PROCESSES = ["etcd", "kube-apiserver", "kube-controller-manager", "crossplane", FUNCTION_PROCESS];

/**
 * Ends whatever fault is still in place, whatever became of the scenario that made it: the link
 * to the function passes again, every process runs, and every input and workspace document is as
 * the examples define it (re-created if deleted, re-applied if changed). Returns what it found.
 */
async function undoAnyFault(): Promise<string[]> {
  const undone: string[] = [];
  if (proxy.current.type !== "pass") {
    undone.push(`the link to the function was still ${describeMode(proxy.current)}: it passes again`);
    proxy.set({ type: "pass" });
  }
  for (const name of PROCESSES) if (await cp.restore(name)) undone.push(`${name} was not running: relaunched`);
  for (const o of [...clusterObjects(), ...[...members, ...provisioning].map((m) => m.doc)]) {
    const live = await c.getOf(o);
    const { apiVersion: _a, kind: _k, metadata: _m, status: _s, ...fields } = o;
    const drift = live === undefined ? ["missing"] : subsetDiff(fields, live);
    if (drift.length === 0) continue;
    await c.apply(o);
    undone.push(`${ref(o)} ${live === undefined ? "was missing: re-created" : `had changed (${drift.slice(0, 2).join("; ")}): re-applied`}`);
  }
  if (provisioning.length > 0) {
    undone.push(`${provisioning.length} workspaces were left half-provisioned: brought into the fleet`);
    await finishProvisioning();
  }
  return undone;
}

/** The scenario before this one, and what was undone after it. */
let previous: { name: string; failed: boolean; undone: string[] } | undefined;

beforeEach(async () => {
  // Every fault starts from a healthy fleet; if an earlier scenario left it otherwise, say so.
  await converged().catch((e) => {
    const after = previous ? `, after "${previous.name}" (${previous.failed ? "which failed" : "which passed"}${previous.undone.length > 0 ? `; undone after it: ${previous.undone.join("; ")}` : ""})` : "";
    throw new Error(`the fleet was not healthy before this fault${after}: ${e instanceof Error ? e.message : e}`);
  });
}, CONVERGE_MS + 60_000);

afterEach(async (context) => {
  const undone = await undoAnyFault();
  previous = { name: context.task.name, failed: (context.task.result?.errors?.length ?? 0) > 0, undone };
  if (undone.length > 0) log(`after "${context.task.name}": ${undone.join("; ")}`);
}, 300_000);

beforeAll(async () => {
  let t = Date.now();
  cp = await startControlPlane({ log });
  log(`control plane up in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const fn = await cp.startFunction({ name: FUNCTION, command: process.execPath, args: [...shippedNodeFlags(), SHIPPED_ENTRY, "--debug"], cwd: REPO });
  functionLog = fn.logFile;
  proxy = new FaultProxy(fn.port);
  await proxy.start();
  await cp.registerFunction(FUNCTION, proxy.port);
  log(`function on 127.0.0.1:${fn.port}, Crossplane dials it through the fault proxy on 127.0.0.1:${proxy.port}`);
  c = new Cluster(cp.kubeconfig);
  await installBerth(c, log);
  await applyExampleCluster(c);
  await applyExampleProfileAndClass(c);
  members = fleetMembers(DEV, EXEC);
  t = Date.now();
  const s = await bringUp(members);
  log(`fleet up: ${DEV} DeveloperWorkspaces and ${EXEC} ExecutionWorkspaces, ${members.filter((m) => m.running).length} Ready, in ${s.toFixed(1)} s`);
}, 900_000);

afterAll(async () => {
  const table = [
    "| fault | what status said during it | owned objects deleted or re-created | converged after (s) |",
    "| --- | --- | --- | --- |",
    ...rows.map((r) => `| ${r.fault} | ${r.during.replace(/\|/g, "\\|").slice(0, 400)} | ${r.lost} | ${r.convergeS.toFixed(1)} |`),
  ];
  process.stdout.write(`\nFaults survived by ${DEV} DeveloperWorkspaces and ${EXEC} ExecutionWorkspaces:\n${table.join("\n")}\n`);
  await proxy?.stop();
  await cp?.stop();
}, 120_000);

describe("nothing a workspace owns is lost, and the fleet converges once the input is fixed, when", () => {
  it("the WorkspaceProfile loses a destination workspaces use", async () => {
    const edited = profile();
    edited.spec.destinations = edited.spec.destinations.filter((d: any) => d.name !== "npm-mirror");
    await inputFault("profile: destination npm-mirror removed", async () => (await c.apply(edited), clusterWith(edited)), async () => void (await c.apply(profile())));
  });

  it("the WorkspaceProfile moves its runtimes to new images", async () => {
    const edited = profile();
    for (const r of edited.spec.runtimes) r.image = `${r.image.replace(/[:@].*$/, "")}:9.9.9`;
    await inputFault("profile: runtime images changed", async () => (await c.apply(edited), clusterWith(edited)), async () => void (await c.apply(profile())));
  });

  it("the WorkspaceProfile's maxSize is lowered under live workspaces", async () => {
    const edited = profile();
    edited.spec.storage.maxSize = "10Gi";
    await inputFault("profile: maxSize lowered to 10Gi", async () => (await c.apply(edited), clusterWith(edited)), async () => void (await c.apply(profile())));
  });

  it("the StorageClass is deleted and re-created", async () => {
    const [storageClass] = load("examples/cluster/storageclass.yaml");
    await inputFault(
      "StorageClass xfs-quota deleted, then re-created",
      async () => {
        await c.delete("storage.k8s.io/v1", "StorageClass", storageClass!.metadata!.name!);
        await waitFor("the StorageClass gone", async () => (await c.getOf(storageClass!)) === undefined, 60_000);
        return clusterWith(undefined, storageClass);
      },
      async () => void (await c.apply(storageClass!)),
    );
  });

  it("a reviewed Service is deleted and re-created", async () => {
    const gateway = load("examples/cluster/services.yaml").find((o) => o.metadata?.name === "gateway")!;
    await inputFault(
      "Service ai-gateway/gateway deleted, then re-created",
      async () => {
        await c.delete("v1", "Service", "gateway", "ai-gateway");
        await waitFor("the Service gone", async () => (await c.getOf(gateway)) === undefined, 60_000);
        return clusterWith(undefined, gateway);
      },
      async () => void (await c.apply(gateway)),
    );
  });

  it("the ExecutionWorkspaceClass is edited after workspaces bound to it", async () => {
    const edited = sandboxClass();
    edited.spec.permits.resources.max.cpu = "6";
    await inputFault("ExecutionWorkspaceClass edited after binding", async () => (await c.apply(edited), clusterWith(edited)), async () => void (await c.apply(sandboxClass())));
  });

  it("a workspace document is replaced by one Berth refuses, then fixed", async () => {
    const target = first("DeveloperWorkspace", persistent);
    const broken = structuredClone(target.doc);
    broken.spec.capabilities.git.destination = "pastebin";
    await inputFault("GitOps: a workspace document replaced by an invalid one, then fixed", async () => (await c.apply(broken), clusterObjects()), async () => void (await c.apply(target.doc)));
  });
  it("the WorkspaceProfile is deleted and re-created", async () => {
    await inputFault(
      "profile deleted, then re-created",
      async () => {
        await c.delete(API, "WorkspaceProfile", "standard");
        await waitFor("the profile gone", async () => (await c.get(API, "WorkspaceProfile", "standard")) === undefined, 60_000);
        return clusterWith(undefined, profile());
      },
      async () => void (await c.apply(profile())),
    );
  });

});

describe("nothing a workspace owns is lost, and the fleet converges by itself, when", () => {
  it("the function is killed (SIGKILL) mid-load, three times, and restarted", async () => {
    await survive("function SIGKILL under load (x3), restarted", async () => {
      let during = "";
      for (let i = 0; i < 3; i++) {
        await requestReconcile(c, members); // load: every workspace reconciles now
        await sleep(500);
        await cp.kill(FUNCTION_PROCESS, "SIGKILL");
        try {
          if (i === 0) during = `${await statusDuring(first("DeveloperWorkspace"), 10_000)}: Crossplane's call waits for the function to come back (gRPC waitForReady) within its 2-minute reconcile deadline`;
          else await sleep(3000);
        } finally {
          await cp.restore(FUNCTION_PROCESS);
        }
      }
      return during;
    });
  });

  it("the function is unreachable (a partition) for longer than Crossplane's call timeout", async () => {
    await survive(`function unreachable for ${UNREACHABLE_MS / 1000} s (partition)`, async () => {
      const t = Date.now();
      proxy.set({ type: "blackhole" });
      try {
        const during = await statusDuring(first("DeveloperWorkspace"), UNREACHABLE_MS + 20_000);
        await sleep(Math.max(0, UNREACHABLE_MS - (Date.now() - t)));
        return during;
      } finally {
        proxy.set({ type: "pass" });
      }
    });
  });

  it(`the function answers slowly (every byte ${SLOW_MS} ms late, both ways): every call still within Crossplane's deadline`, async () => {
    await survive(`function slow (every byte ${SLOW_MS} ms late, both ways)`, async () => {
      const sent = { ...proxy.bytes };
      proxy.set({ type: "delay", ms: SLOW_MS });
      let r: Awaited<ReturnType<typeof reconcileAll>>;
      try {
        r = await reconcileAll();
      } finally {
        proxy.set({ type: "pass" });
      }
      const kB = (k: keyof typeof sent) => Math.round((proxy.bytes[k] - sent[k]) / 1000);
      const during = `${r.unsynced === 0 ? "Synced=True throughout" : `${r.unsynced} workspaces not Synced at some point`}; every workspace reconciled through the slow link in ${r.seconds.toFixed(1)} s (${kB("toFunction")} kB to the function, ${kB("toCrossplane")} kB back${r.askedAgain > 0 ? `; lost requests asked again ${r.askedAgain} times` : ""}); ${r.crossplane}`;
      // The function's flow-control windows carry a burst across a 1 s round trip in a few round
      // trips. At HTTP/2's default 64 KiB the link carried about 60 KB/s: one reconcile of the
      // fleet took 87 s of the 2-minute deadline, and a Crossplane restart under the link (every
      // XR reconciled at once, then again) sent 61 calls past it (serve.ts).
      expect(r.pastDeadline, during).toBe(0);
      return during;
    });
  });

  it("Crossplane is killed mid-provisioning and restarted", async () => {
    const added = fleetMembers(4, 2, 100);
    await countWanted(added);
    const before = await ownership(c, members);
    const t = Date.now();
    provisioning = added;
    await pool(added, 16, (m) => c.apply(m.doc));
    // Mid-provisioning: once the first of them owns its Namespace, before the rest follows.
    await waitFor("a new workspace's first object", async () => [...(await seeAll(c)).entries()].some(([k, s]) => added.some((m) => memberKey(m) === k) && s.refs.length > 0), 60_000, 100);
    await cp.kill("crossplane", "SIGKILL");
    let during: string;
    try {
      const partial = await seeAll(c);
      during = `Crossplane killed as ${added.length} new workspaces were being provisioned (they owned ${added.map((m) => partial.get(memberKey(m))?.refs.length ?? 0).join(", ")} of ${added.map((m) => want.get(memberKey(m))).join(", ")} objects); status frozen while it is down`;
      await sleep(3000);
    } finally {
      await cp.restore("crossplane");
    }
    await finishProvisioning();
    const convergeS = await converged();
    const lost = losses(before, await ownership(c, members));
    rows.push({ fault: "Crossplane SIGKILL mid-provisioning, restarted", during, lost: lost.length, convergeS: (Date.now() - t) / 1000 });
    log(`Crossplane mid-provisioning: ${during}; everything converged ${convergeS.toFixed(1)} s after the restart`);
    expect(lost).toEqual([]);
  });

  it("Crossplane is killed mid-deletion and restarted", async () => {
    const doomed = [first("DeveloperWorkspace", persistent), first("DeveloperWorkspace", (m) => !persistent(m)), first("ExecutionWorkspace")];
    const doomedNamespaces = new Set<string>();
    const seen = await seeAll(c);
    for (const m of doomed) for (const r of seen.get(memberKey(m))!.refs) if (r.kind === "Namespace") doomedNamespaces.add(r.name);
    members = members.filter((m) => !doomed.includes(m));
    await survive("Crossplane SIGKILL mid-deletion, restarted", async () => {
      for (const m of doomed) await c.delete(API, m.kind, m.name);
      // Mid-deletion: once Crossplane has begun (the first namespace is terminating).
      await waitFor("a doomed namespace terminating", async () => {
        for (const ns of doomedNamespaces) {
          const n = await c.get("v1", "Namespace", ns);
          if (n === undefined || n.metadata?.deletionTimestamp) return true;
        }
        return false;
      }, 60_000, 100);
      await cp.kill("crossplane", "SIGKILL");
      await sleep(3000);
      await cp.restore("crossplane");
      const t = Date.now();
      await waitFor("the deleted workspaces and their namespaces gone", async () => {
        for (const m of doomed) if (await c.get(API, m.kind, m.name)) return false;
        for (const ns of doomedNamespaces) if (await c.get("v1", "Namespace", ns)) return false;
        return true;
      }, CONVERGE_MS, 1000);
      return `Crossplane killed while deleting ${doomed.length} workspaces; after its restart they and their ${doomedNamespaces.size} namespaces were gone in ${((Date.now() - t) / 1000).toFixed(1)} s; the others untouched`;
    });
  });

  it("the API server and etcd are restarted", async () => {
    await survive("API server and etcd restarted", async () => {
      try {
        await cp.kill("kube-apiserver", "SIGTERM");
        await cp.kill("etcd", "SIGTERM");
        await sleep(5000);
      } finally {
        await cp.restore("etcd");
        await cp.restore("kube-apiserver");
      }
      // The API server resolves the berth-class-permits policy's paramKind (a CRD) through a
      // discovery cache it fills again after a start: until then the policy fails closed and
      // every ExecutionWorkspace write, Crossplane's included, is refused (docs/known-limits.md).
      const t = Date.now();
      await classPermitsInEffect(c, "sandbox-session");
      return `API server and etcd down 5 s; Crossplane and the controller manager re-list; ExecutionWorkspace writes refused by berth-class-permits (fails closed) for ${((Date.now() - t) / 1000).toFixed(1)} s after the restart, until the API server's discovery finds the class kind again`;
    });
  });
});
