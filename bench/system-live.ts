// sudo npm run bench:system:live [-- --n 10] [--sessions 10] [--sessions-at-once 20] [--pause 20] [--mcp-gate] [--json <file>]
//
// Time to Ready where a node really runs the workspaces: the live cluster (test/live/cluster.ts:
// the local control plane, a real node with kubelet, containerd, runc, kube-proxy and CoreDNS,
// Crossplane from its Helm chart and Berth installed from its registry as an operator would, and
// the agent-sandbox controller as its release deploys it).
//
// DeveloperWorkspaces: N at once, half with a persistent volume (the loop provisioner's ext4
// volumes) and half ephemeral, each cloning the harness's git fixture before its runtime
// starts. The run reports, per workspace and for all of them, the time from creation to
//   namespace  Berth's Namespace exists (the developer's git credential is then put in it,
//              as a developer would);
//   synced     the XR is Synced;
//   running    the runtime container of its Job's pod is running (checkout done, volume
//              mounted);
//   ready      the XR's phase is Ready (Berth saw the volume bound and the Job ready);
// and then the time until every workspace is gone after the XRs are deleted.
//
// --mcp-gate: every other pair of workspaces declares MCP tools (test/live/fixtures.ts), so it
// runs an MCP gate beside its runtime; the others are its floor. Each stage is then also
// reported for the gated and the ungated half, side by side in the same burst.
//
// ExecutionWorkspaces on the agent-sandbox class (bench/sessions-live.ts): create, suspend and
// resume, `--sessions` of them one at a time and `--sessions-at-once` together, each beside the
// floor of the same controller (the same Sandbox applied directly into a namespace that already
// has its boundary), with `--pause` seconds between a session's steps (0: back to back).
// `--n 0` or `--sessions 0 --sessions-at-once 0` leaves either part out.
//
// Needs root and the node build (npm run controlplane:build -- --node). bench:system covers
// calls, reconciles and CPU at scale.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { condition, type Obj } from "../test/conformance/setup.js";
import { startLiveCluster } from "../test/live/cluster.js";
import { developerWorkspace, FIXTURES_NS, gitTokenSecret, installHarness, mcpTokenSecret } from "../test/live/fixtures.js";
import { latencyTable, measureSessions } from "./sessions-live.js";
import { median } from "./stats.js";

const { values: opts } = parseArgs({
  options: {
    n: { type: "string", default: "10" },
    sessions: { type: "string", default: "10" },
    "sessions-at-once": { type: "string", default: "20" },
    pause: { type: "string", default: "20" },
    "mcp-gate": { type: "boolean", default: false },
    json: { type: "string" },
  },
  allowPositionals: false,
});
const count = (flag: string, text: string) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${flag} ${text}: want a whole number, 0 or more`);
  return n;
};
const N = count("n", opts.n);
const SESSIONS = count("sessions", opts.sessions);
const SESSIONS_AT_ONCE = count("sessions-at-once", opts["sessions-at-once"]);
const PAUSE_S = count("pause", opts.pause);
const MCP_GATE = opts["mcp-gate"];
if (MCP_GATE && N < 4) throw new Error(`--mcp-gate needs --n 4 or more (a gated and an ungated pair), not ${N}`);
const API = "workspaces.berth.dev/v1alpha1";
const STAGES = ["namespace", "synced", "running", "ready"] as const;
type Stage = (typeof STAGES)[number];
/** How long all N may take to become Ready before the run gives up. */
const READY_TIMEOUT_MS = 15 * 60_000;

const say = (m: string) => process.stderr.write(`[bench:system:live ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (s: number) => Math.round(s * 10) / 10;

/** N DeveloperWorkspaces at once, timed to each stage; then all deleted. */
async function measureDeveloperWorkspaces(gitToken: string): Promise<Record<string, number>> {
  // With --mcp-gate, workspaces 2-3, 6-7, ... are gated: one persistent and one ephemeral each.
  const gated = (i: number) => MCP_GATE && Math.floor(i / 2) % 2 === 1;
  const docs = Array.from({ length: N }, (_, i) =>
    developerWorkspace(`bench-${String(i).padStart(3, "0")}`, { storage: i % 2 === 0 ? "persistent" : "ephemeral", kubernetes: "none", mcp: gated(i) }),
  );
  const isGated = new Set(docs.filter((_, i) => gated(i)).map((d) => d.metadata!.name!));
  const ns = (d: Obj) => `ws-${d.spec.workspaceID}`;
  const reached = new Map<string, Partial<Record<Stage, number>>>(docs.map((d) => [d.metadata!.name!, {}]));
  const t0 = Date.now();
  await Promise.all(docs.map((d) => live.cluster.apply(d)));
  say(`${N} DeveloperWorkspaces created in ${Date.now() - t0} ms (${Math.ceil(N / 2)} persistent, ${Math.floor(N / 2)} ephemeral)`);

  while ([...reached.values()].some((r) => r.ready === undefined)) {
    if (Date.now() - t0 > READY_TIMEOUT_MS) {
      const late = [...reached].filter(([, r]) => r.ready === undefined).map(([n, r]) => `${n} (reached ${Object.keys(r).join(", ") || "nothing"})`);
      throw new Error(`not Ready within ${READY_TIMEOUT_MS / 60_000} min: ${late.join("; ")}`);
    }
    const now = Date.now() - t0;
    const xrs = new Map((await live.cp.kube.list<any>(API, "DeveloperWorkspace")).map((x) => [x.metadata.name, x]));
    const pods = await live.cp.kube.listAllNamespaces<any>("v1", "Pod");
    for (const d of docs) {
      const r = reached.get(d.metadata!.name!)!;
      const xr = xrs.get(d.metadata!.name!);
      if (r.namespace === undefined && (await live.cluster.get("v1", "Namespace", ns(d)))) {
        r.namespace = now;
        await live.cluster.apply(gitTokenSecret(ns(d), gitToken));
        if (isGated.has(d.metadata!.name!)) await live.cluster.apply(mcpTokenSecret(ns(d), gitToken));
      }
      if (r.synced === undefined && condition(xr, "Synced")?.status === "True") r.synced = now;
      const runtime = pods.find((p) => p.metadata.namespace === ns(d) && p.metadata.labels?.["job-name"] === "workspace");
      if (r.running === undefined && (runtime?.status?.containerStatuses ?? []).some((c: any) => c.name === "runtime" && c.state?.running)) r.running = now;
      if (r.ready === undefined && xr?.status?.phase === "Ready" && condition(xr, "Ready")?.status === "True") r.ready = now;
    }
    await sleep(500);
  }

  const per = (stage: Stage, which: (name: string) => boolean = () => true) => [...reached].filter(([name]) => which(name)).map(([, r]) => r[stage]! / 1000);
  const figures = Object.fromEntries(STAGES.map((s) => [s, { median_s: round(median(per(s))), all_s: round(Math.max(...per(s))) }])) as Record<Stage, { median_s: number; all_s: number }>;
  for (const s of STAGES) say(`${s.padEnd(9)} median ${figures[s].median_s} s, all ${figures[s].all_s} s`);
  const halves: Record<string, number> = {};
  if (MCP_GATE) {
    for (const s of STAGES) {
      const withGate = median(per(s, (name) => isGated.has(name)));
      const without = median(per(s, (name) => !isGated.has(name)));
      say(`${s.padEnd(9)} median with an MCP gate ${round(withGate)} s, without ${round(without)} s (${isGated.size} and ${N - isGated.size} workspaces)`);
      halves[`${s}_median_gated_s`] = round(withGate);
      halves[`${s}_median_ungated_s`] = round(without);
    }
  }

  const tDelete = Date.now();
  await Promise.all(docs.map((d) => live.cluster.delete(API, "DeveloperWorkspace", d.metadata!.name!)));
  await live.cp.kube.waitFor("every workspace's Namespace gone", async () => {
    for (const d of docs) if (await live.cluster.get("v1", "Namespace", ns(d))) return false;
    return true;
  }, 600_000, 1000);
  const deletedS = round((Date.now() - tDelete) / 1000);
  say(`all ${N} workspaces and their Namespaces gone ${deletedS} s after the XRs were deleted`);

  return {
    n: N,
    ...Object.fromEntries(STAGES.map((s) => [`${s}_median_s`, figures[s].median_s])),
    ...Object.fromEntries(STAGES.map((s) => [`${s}_all_s`, figures[s].all_s])),
    deleted_all_s: deletedS,
    ...halves,
  };
}

const live = await startLiveCluster({ log: say });
try {
  const gitToken = randomBytes(18).toString("hex");
  // The profile names host ports nothing listens on: readiness never uses them (an MCP gate
  // connects to its servers only when the runtime opens a session).
  await installHarness(
    live,
    { hostIP: live.network.hostIP, apiPort: live.apiServer.port, declaredHostPort: 65001, undeclaredHostPort: 65002, mcpRecordingPort: 65003, mcpEverythingPort: 65004 },
    gitToken,
  );
  // The checkouts clone from the git fixture: it runs before the clock starts.
  await live.cp.kube.waitFor("the harness's pods running", async () => {
    const pods = await live.cp.kube.list<any>("v1", "Pod", FIXTURES_NS);
    return pods.length > 0 && pods.every((p) => p.status?.phase === "Running");
  }, 240_000, 1000);

  const developer = N > 0 ? await measureDeveloperWorkspaces(gitToken) : {};
  const sessions = SESSIONS + SESSIONS_AT_ONCE > 0 ? await measureSessions(live, { oneAtATime: SESSIONS, atOnce: SESSIONS_AT_ONCE, pauseS: PAUSE_S, say }) : undefined;
  const single = sessions && SESSIONS > 0 ? latencyTable(`ExecutionWorkspaces one at a time`, sessions.single) : undefined;
  const burst = sessions && SESSIONS_AT_ONCE > 0 ? latencyTable(`ExecutionWorkspaces ${SESSIONS_AT_ONCE} at once`, sessions.burst) : undefined;
  for (const t of [single, burst]) if (t) process.stderr.write(`${t.lines.join("\n")}\n`);

  const result = {
    date: new Date().toISOString(),
    machine: `${cpus().length} cores`,
    ...developer,
    ...(sessions ? { pause_between_steps_s: PAUSE_S } : {}),
    ...(single ? { sessions_one_at_a_time: SESSIONS, ...Object.fromEntries(Object.entries(single.json).map(([k, v]) => [`single_${k}`, v])) } : {}),
    ...(burst ? { sessions_at_once: SESSIONS_AT_ONCE, ...Object.fromEntries(Object.entries(burst.json).map(([k, v]) => [`burst_${k}`, v])) } : {}),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await live.stop();
}
