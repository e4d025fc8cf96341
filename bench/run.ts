// npm run bench [-- --json <file>] [--rounds N] [--quick] [--skip-build] [--no-go-floor] [--no-image] [--no-scaling] [--profile]
//
// Benchmarks function-berth as Crossplane runs it: the compiled function process, driven over
// real gRPC on loopback, for a full DeveloperWorkspace in its steady state (every requirement
// answered, every composed resource observed). In the same run and with the same request
// bytes it measures two references, and prints Berth's figures as ratios to both:
//   floor     a no-op function on the same SDK and Node (bench/noop-function.ts): returns to(req);
//   Go floor  the same no-op on the Go SDK, github.com/crossplane/function-sdk-go pinned in
//             bench/go-noop/go.mod and built by bench/go-noop/build.sh: returns response.To(req).
// Both floors are SDK floors: what serving one call costs before the function does anything.
// The function image (image/build.ts) is measured beside them as it ships: its own Node.js and
// libraries, its ENTRYPOINT run in its unpacked root filesystem as 65532, with /proc mounted as a
// container runtime would (needs root to chroot).
// A third reference, floor+echo, is the no-op returning the observed objects as desired: a
// response as large as Berth's, so the gap between it and the floor is the cost of that size.
// Targets are measured in rounds, each round starting every process afresh in a rotated order,
// and every figure printed is the median over rounds (ratios: the median of per-round ratios).
// See bench/README.md.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { isDeepStrictEqual } from "node:util";
import type { RunFunctionRequest, RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { latency, type Latency, memory, type Running, start, type Target, throughput } from "./load.js";
import { median } from "./stats.js";
import { profileBerth } from "./profile.js";
import { rootfsCommand, SHIPPED_ENTRY, shippedNodeFlags } from "../image/shipped.js";
import { buildFunctionImage, defaultImageName } from "../image/build.js";
import { unpackImage } from "../image/oci.js";
import { exponent, type Point } from "./scaling.js";
import { EXECUTION_EXAMPLE, executionWorkspace, fullWorkspace, type Scenario, steadyState } from "./workload.js";

const { values: opts } = parseArgs({
  options: {
    json: { type: "string" },
    rounds: { type: "string" },
    quick: { type: "boolean", default: false },
    "skip-build": { type: "boolean", default: false },
    "no-go-floor": { type: "boolean", default: false },
    "no-scaling": { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    "node-flags": { type: "string" },
    "no-image": { type: "boolean", default: false },
  },
  allowPositionals: false,
});

const quick = opts.quick!;
const ROUNDS = Math.max(1, Math.min(20, Number(opts.rounds ?? (quick ? 2 : 5))));
const PHASE = quick
  ? { warmupMs: 300, latencyCalls: 300, latencyMs: 2_000, throughputMs: 1_000 }
  : { warmupMs: 1_000, latencyCalls: 1_500, latencyMs: 5_000, throughputMs: 3_000 };
const CONCURRENCY = 16;
const TARGETS_GOAL = { p50RatioToFloor: 1.5, startupMs: 300, peakRssMb: 100 };

const log = (line: string) => process.stderr.write(`${line}\n`);
const cache = process.env.BERTH_CACHE ?? `${process.env.HOME}/.cache/berth`;

function sh(cmd: string, args: string[], what: string): { ok: boolean; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 << 20, timeout: 540_000 });
  if (r.status !== 0) log(`${what} failed (exit ${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return { ok: r.status === 0, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

// ---- build ----------------------------------------------------------------------------------

const NOOP_BUNDLE = "dist/bench/noop-function.mjs";
if (!opts["skip-build"]) {
  log("== building function-berth (npm run build, npm run bundle) and the no-op floor");
  if (!sh("npm", ["run", "-s", "build"], "npm run build").ok) process.exit(1);
  if (!sh("npm", ["run", "-s", "bundle"], "npm run bundle").ok) process.exit(1);
  const banner = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";
  const esbuild = ["bench/noop-function.ts", "--bundle", "--platform=node", "--format=esm", "--target=node20", `--outfile=${NOOP_BUNDLE}`, "--log-level=warning", `--banner:js=${banner}`];
  if (!sh("node_modules/.bin/esbuild", esbuild, "bundling the no-op floor").ok) process.exit(1);
}
if (!sh(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "bench/tsconfig.json"], "compiling bench/ (tsc -p bench/tsconfig.json)").ok) process.exit(1);

let goFloorBin: string | undefined;
let goFloorProblem: string | undefined;
if (!opts["no-go-floor"]) {
  log("== building the Go floor (bench/go-noop/build.sh)");
  const b = sh("bash", ["bench/go-noop/build.sh"], "bench/go-noop/build.sh");
  goFloorBin = /^GO_FLOOR_BIN=(.+)$/m.exec(b.stdout)?.[1];
  if (!b.ok || !goFloorBin) {
    goFloorBin = undefined;
    goFloorProblem = b.stderr.trim().split("\n").slice(-6).join("\n");
  }
} else goFloorProblem = "skipped (--no-go-floor)";

let image: { target: Target; digest: string; compressedBytes: number; uncompressedBytes: number; node: string } | undefined;
let imageProblem: string | undefined;
if (opts["no-image"]) imageProblem = "skipped (--no-image)";
else if (process.getuid?.() !== 0) imageProblem = "not measured: running the image's root filesystem needs root";
else {
  log("== building the function image (image/build.ts) and unpacking its root filesystem");
  try {
    const built = await buildFunctionImage({ name: defaultImageName() });
    const rootfs = `${cache}/bench/image-rootfs/${built.digest.slice("sha256:".length, 19)}`;
    if (!existsSync(`${rootfs}/function`)) {
      rmSync(rootfs, { recursive: true, force: true });
      await unpackImage(built, rootfs);
    }
    const [command, ...args] = rootfsCommand(rootfs) as [string, ...string[]];
    const nodeVersion = sh("unshare", [`--root=${rootfs}`, "/nodejs/bin/node", "--version"], "the image's node --version").stdout.trim();
    image = {
      target: { key: "image", label: `berth, image (Node ${nodeVersion}, chroot)`, command, args },
      digest: built.digest,
      compressedBytes: built.size,
      uncompressedBytes: built.layers.reduce((n, l) => n + l.uncompressedSize, 0),
      node: nodeVersion,
    };
  } catch (err) {
    imageProblem = `not measured: ${(err as Error).message}`;
  }
}

const GO_SDK_VERSION = /^(?:require |\t)github\.com\/crossplane\/function-sdk-go (\S+)$/m.exec(readFileSync("bench/go-noop/go.mod", "utf8"))?.[1] ?? "?";

// ---- requests -------------------------------------------------------------------------------

type Fn = typeof import("../functions/berth/function.js");
const berthModule = (await import(pathToFileURL(resolve("dist/functions/berth/function.js")).href)) as Fn;
const runInProcess = (req: RunFunctionRequest) => berthModule.runFunction(req);

const dev = await steadyState(runInProcess, "DeveloperWorkspace", fullWorkspace());
const devStatus = dev.rsp.desired?.composite?.resource?.status as { phase?: string } | undefined;
if (devStatus?.phase !== "Ready") throw new Error(`the steady-state request should render a Ready workspace, got ${JSON.stringify(devStatus)}`);

// ==== ExecutionWorkspace slot ===============================================================
// The ExecutionWorkspace kind is being built. When examples/executionworkspace-sandbox.yaml
// exists, its steady state is benchmarked on the same Berth process in every round (Berth
// only: a no-op's figures do not depend on the kind, so the floors' apply unchanged).
let exec: Scenario | undefined;
let execProblem: string | undefined;
const execXR = executionWorkspace();
if (execXR === undefined) execProblem = `slot empty: ${EXECUTION_EXAMPLE} does not exist yet`;
else {
  try {
    exec = await steadyState(runInProcess, "ExecutionWorkspace", execXR);
  } catch (err) {
    execProblem = `${EXECUTION_EXAMPLE} is present but cannot be benchmarked yet: ${(err as Error).message}`;
  }
}
// ============================================================================================

const node = process.execPath;
// Berth runs as it ships: the bundle and the Node flags of package/Dockerfile's ENTRYPOINT. The
// floors run bundled with the same flags, so the ratios compare the functions, not the
// packaging. --node-flags "..." replaces the flags for every Node target, for experiments.
const nodeFlags = opts["node-flags"] !== undefined ? opts["node-flags"].split(/\s+/).filter(Boolean) : shippedNodeFlags();
const berthEntry = SHIPPED_ENTRY;
const targets: Target[] = [
  { key: "floor", label: "floor (no-op, same SDK)", command: node, args: [NOOP_BUNDLE], nodeFlags },
  { key: "echo", label: "floor+echo (no-op, Berth-sized reply)", command: node, args: [NOOP_BUNDLE], env: { BERTH_NOOP_ECHO: "1" }, nodeFlags },
  { key: "berth", label: "berth", command: node, args: [berthEntry], nodeFlags },
  ...(image ? [image.target] : []),
  // The Go SDK's Serve also starts a Prometheus endpoint, on :8080 by default; port 0 keeps it
  // (and its per-call interceptor) without holding a fixed port on a shared machine.
  ...(goFloorBin ? [{ key: "gofloor", label: `floor (Go SDK ${GO_SDK_VERSION})`, command: goFloorBin, args: ["--metrics-address", "127.0.0.1:0"] }] : []),
];

/** How the desired objects of a response compare with Berth's own (in-process) render. */
function compareRender(rsp: RunFunctionResponse): { same: number; total: number; different: string[] } {
  const norm = (o: unknown) => {
    const c = JSON.parse(JSON.stringify(o ?? null)) as { metadata?: { annotations?: object } } | null;
    if (c?.metadata?.annotations && Object.keys(c.metadata.annotations).length === 0) delete c.metadata.annotations;
    return c;
  };
  const mine = dev.rsp.desired?.resources ?? {};
  const theirs = rsp.desired?.resources ?? {};
  const names = new Set([...Object.keys(mine), ...Object.keys(theirs)]);
  const different = [...names].filter((n) => !isDeepStrictEqual(norm(mine[n]?.resource), norm(theirs[n]?.resource)) || mine[n]?.ready !== theirs[n]?.ready);
  return { same: names.size - different.length, total: names.size, different };
}

// ---- rounds ---------------------------------------------------------------------------------

interface RoundResult extends Latency {
  startupMs: number;
  rps: number;
  calls: number;
  hwmMb: number;
  rssMb: number;
  idleRssMb: number;
  responseBytes: number;
  exec?: { p50: number; p99: number; rps: number };
}
const results: Record<string, RoundResult[]> = Object.fromEntries(targets.map((t) => [t.key, []]));
let goFloorReply: { tag: string; ttlSeconds: number; desired: number } | undefined;

/** A no-op's reply carries the request's tag and hands back its desired state: here none. */
function checkNoop(t: Target, rsp: RunFunctionResponse): { tag: string; ttlSeconds: number; desired: number } {
  const tag = rsp.meta?.tag ?? "";
  const desired = Object.keys(rsp.desired?.resources ?? {}).length;
  if (tag !== dev.req.meta?.tag) throw new Error(`the ${t.key} process answered with tag ${JSON.stringify(tag)}, not the request's ${JSON.stringify(dev.req.meta?.tag)}`);
  if (desired !== 0) throw new Error(`the ${t.key} process answered with ${desired} desired composed resources, where the request has none`);
  return { tag, ttlSeconds: Number(rsp.meta?.ttl?.seconds ?? NaN), desired };
}

async function measureTarget(t: Target): Promise<RoundResult> {
  const r: Running = await start(t, dev.bytes);
  try {
    if (t.key === "floor") checkNoop(t, r.first);
    if (t.key === "gofloor") goFloorReply = checkNoop(t, r.first);
    if (t.key === "berth" || t.key === "image") {
      const c = compareRender(r.first);
      if (c.same !== c.total) throw new Error(`the ${t.key} process rendered differently from the in-process render: ${c.different.join(", ")}`);
    }
    await throughput(r, dev.bytes, CONCURRENCY, PHASE.warmupMs);
    await latency(r, dev.bytes, 200, PHASE.warmupMs);
    const lat = await latency(r, dev.bytes, PHASE.latencyCalls, PHASE.latencyMs);
    const tp = await throughput(r, dev.bytes, CONCURRENCY, PHASE.throughputMs);
    const mem = memory(r.child.pid!);
    let execFigures: RoundResult["exec"];
    if (t.key === "berth" && exec) {
      await latency(r, exec.bytes, 200, PHASE.warmupMs);
      const el = await latency(r, exec.bytes, PHASE.latencyCalls, PHASE.latencyMs);
      const et = await throughput(r, exec.bytes, CONCURRENCY, PHASE.throughputMs);
      execFigures = { p50: el.p50, p99: el.p99, rps: et.rps };
    }
    return { ...lat, startupMs: r.startupMs, rps: tp.rps, calls: tp.calls, hwmMb: mem.hwmMb, rssMb: mem.rssMb, idleRssMb: r.idleRssMb, responseBytes: r.firstBytes, ...(execFigures ? { exec: execFigures } : {}) };
  } finally {
    await r.stop();
  }
}

const load0 = loadavg()[0]!;
const started = Date.now();
log(`== ${ROUNDS} rounds over ${targets.map((t) => t.key).join(", ")} (request ${(dev.bytes.length / 1024).toFixed(1)} KiB, load average ${load0.toFixed(2)})`);
for (let round = 0; round < ROUNDS; round++) {
  const order = targets.map((_, i) => targets[(i + round) % targets.length]!);
  for (const t of order) {
    const r = await measureTarget(t);
    results[t.key]!.push(r);
    log(
      `  round ${round + 1} ${t.key.padEnd(7)} start ${r.startupMs.toFixed(0).padStart(4)} ms  p50 ${r.p50.toFixed(3)} p99 ${r.p99.toFixed(3)} ms  ${r.rps.toFixed(0).padStart(5)} req/s  HWM ${r.hwmMb.toFixed(1)} MB` +
        (r.exec ? `  | exec p50 ${r.exec.p50.toFixed(3)} ms ${r.exec.rps.toFixed(0)} req/s` : ""),
    );
  }
}
const load1 = loadavg()[0]!;

// ---- scaling --------------------------------------------------------------------------------

interface InProcess {
  request_bytes: number;
  response_bytes: number;
  breakdown_us: Record<string, number>;
  experiments_us: Record<string, number>;
  struct_codec_check: { identical_encodings: number; structs: number; decodes_equal: boolean; request_struct_bytes: number; response_struct_bytes: number } | null;
  scaling: Point[];
}
log("== in-process: one call's breakdown, experiments and the scaling series (node dist/bench/inprocess.js)");
const ip = sh(process.execPath, ["dist/bench/inprocess.js", ...(quick ? ["--quick"] : []), ...(opts["no-scaling"] ? ["--no-scaling"] : [])], "node dist/bench/inprocess.js");
const inproc = ip.ok ? (JSON.parse(ip.stdout.trim().split("\n").pop()!) as InProcess) : undefined;
const points: Point[] = inproc?.scaling ?? [];

// ---- report ---------------------------------------------------------------------------------

type Key = "startupMs" | "p50" | "p99" | "rps" | "hwmMb" | "idleRssMb";
/** The median over rounds of the figures measured (bench/stats.ts); one /proc did not give (NaN) is left out, and none at all prints n/a. */
const overRounds = (xs: number[]) => {
  const measured = xs.filter((x) => Number.isFinite(x));
  return measured.length > 0 ? median(measured) : NaN;
};
const med = (key: string, f: Key) => overRounds(results[key]!.map((r) => r[f]));
/** Median over rounds of of/ref, of = berth unless given (for rps: how many times more requests per second Berth serves). */
const ratio = (ref: string, f: Key, of = "berth") => (results[ref] && results[of] ? overRounds(results[of]!.map((b, i) => b[f] / results[ref]![i]![f])) : NaN);

const fmt = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
const rows: string[] = [];
const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);
const head = `${pad("", 40)}${lpad("p50 ms", 9)}${lpad("p99 ms", 9)}${lpad("req/s c16", 11)}${lpad("startup ms", 12)}${lpad("peak RSS MB", 13)}${lpad("idle RSS MB", 13)}${lpad("reply KiB", 11)}`;
const line = (label: string, cells: string[]) => `${pad(label, 40)}${lpad(cells[0]!, 9)}${lpad(cells[1]!, 9)}${lpad(cells[2]!, 11)}${lpad(cells[3]!, 12)}${lpad(cells[4]!, 13)}${lpad(cells[5] ?? "", 13)}${lpad(cells[6] ?? "", 11)}`;

const cpu = cpus()[0]?.model ?? "unknown CPU";
const goVersion = goFloorBin ? sh("go", ["env", "GOVERSION"], "go env").stdout.trim() : undefined;
const pkgVersion = (name: string) => (JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")) as { version: string }).version;
const commit = sh("git", ["rev-parse", "--short", "HEAD"], "git").stdout.trim();
const dirty = sh("git", ["status", "--porcelain", "--", "functions"], "git").stdout.trim() !== "";

rows.push(`Berth bench: ${new Date(started).toISOString()}, ${commit}${dirty ? " (functions/ has uncommitted changes)" : ""}`);
rows.push(`machine: ${cpus().length} cores (${cpu}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${fmt(load0)} -> ${fmt(load1)}; Node ${process.version}, SDK ${pkgVersion("@crossplane-org/function-sdk-typescript")}, grpc-js ${pkgVersion("@grpc/grpc-js")}${goVersion ? `, ${goVersion}` : ""}`);
rows.push(
  `workload: DeveloperWorkspace "${fullWorkspace().metadata!.name}", steady state: ${dev.rendered} composed resources rendered and observed, 5 capabilities (git, inference, mcp, registry, kubernetes read), persistent storage; request ${fmt(dev.bytes.length / 1024, 1)} KiB, identical bytes to every function`,
);
if (nodeFlags.length > 0) rows.push(`node flags for the Node targets: ${nodeFlags.join(" ")}`);
rows.push(`method: ${ROUNDS} rounds, every process started afresh each round in rotated order; medians over rounds; c1: ${PHASE.latencyCalls} sequential calls; c16: ${PHASE.throughputMs / 1000} s closed loop; peak RSS: VmHWM after load; idle RSS: VmRSS after the first response`);
rows.push("");
rows.push(head);
for (const t of targets) {
  rows.push(line(t.label, [fmt(med(t.key, "p50"), 3), fmt(med(t.key, "p99"), 3), fmt(med(t.key, "rps"), 0), fmt(med(t.key, "startupMs"), 0), fmt(med(t.key, "hwmMb"), 1), fmt(med(t.key, "idleRssMb"), 1), fmt(overRounds(results[t.key]!.map((r) => r.responseBytes)) / 1024, 1)]));
}
if (exec) {
  rows.push(line("berth, ExecutionWorkspace", [fmt(overRounds(results.berth!.map((r) => r.exec!.p50)), 3), fmt(overRounds(results.berth!.map((r) => r.exec!.p99)), 3), fmt(overRounds(results.berth!.map((r) => r.exec!.rps)), 0), "", "", ""]));
}
rows.push("");
const ratioRow = (ref: string, label: string, of = "berth") =>
  rows.push(line(label, [`${fmt(ratio(ref, "p50", of))}x`, `${fmt(ratio(ref, "p99", of))}x`, `${fmt(ratio(ref, "rps", of))}x`, `${fmt(ratio(ref, "startupMs", of))}x`, `${fmt(ratio(ref, "hwmMb", of))}x`, `${fmt(ratio(ref, "idleRssMb", of))}x`]));
ratioRow("floor", "berth / floor");
ratioRow("echo", "berth / floor+echo");
if (results.gofloor) ratioRow("gofloor", "berth / floor (Go SDK)");
if (results.image) ratioRow("berth", "image / berth (host Node)", "image");
rows.push("(latency, start-up, RSS: lower is better, so < 1x beats the reference; req/s: higher is better, so > 1x does)");
rows.push("");
rows.push(
  goFloorBin && goFloorReply
    ? `Go floor: function-sdk-go ${GO_SDK_VERSION} (bench/go-noop), ${goVersion}, CGO_ENABLED=0; its first reply decoded: tag "${goFloorReply.tag}", ${goFloorReply.desired} desired composed resources, TTL ${goFloorReply.ttlSeconds} s`
    : `Go floor: not measured: ${goFloorProblem ?? "unknown"}`,
);
rows.push(
  image
    ? `image: ${image.digest}, ${fmt(image.compressedBytes / 1e6, 1)} MB compressed, ${fmt(image.uncompressedBytes / 1e6, 1)} MB uncompressed; Node ${image.node} from image/sources.yaml against the host's ${process.version}`
    : `image: ${imageProblem}`,
);
rows.push(`ExecutionWorkspace: ${exec ? `measured (${exec.rendered} composed resources, request ${fmt(exec.bytes.length / 1024, 1)} KiB)` : execProblem}`);

const p50Floor = ratio("floor", "p50");
const checks = [
  { name: `p50 within ${TARGETS_GOAL.p50RatioToFloor}x of the floor`, ok: p50Floor <= TARGETS_GOAL.p50RatioToFloor, value: `${fmt(p50Floor)}x` },
  { name: `start-up under ${TARGETS_GOAL.startupMs} ms`, ok: med("berth", "startupMs") < TARGETS_GOAL.startupMs, value: `${fmt(med("berth", "startupMs"), 0)} ms` },
  { name: `peak RSS under ${TARGETS_GOAL.peakRssMb} MB`, ok: med("berth", "hwmMb") < TARGETS_GOAL.peakRssMb, value: `${fmt(med("berth", "hwmMb"), 1)} MB` },
];
rows.push("");
rows.push("targets:");
for (const c of checks) rows.push(`  ${c.ok === undefined ? "n/a " : c.ok ? "MET " : "MISS"}  ${c.name}: ${c.value}`);

if (inproc) {
  const b = inproc.breakdown_us;
  const call = b.decode! + b.render! + b.encode!;
  const share = (x: number) => `${fmt((100 * x) / call, 0)}%`;
  rows.push("");
  rows.push(`one call in-process (plain node, median µs; request ${fmt(inproc.request_bytes / 1024, 1)} KiB, reply ${fmt(inproc.response_bytes / 1024, 1)} KiB):`);
  rows.push(`  decode request ${fmt(b.decode!, 0)} (${share(b.decode!)}) + runFunction ${fmt(b.render!, 0)} (${share(b.render!)}) + encode reply ${fmt(b.encode!, 0)} (${share(b.encode!)}) = ${fmt(call, 0)} µs; the floor's decode + to(req) + encode: ${fmt(b.floor!, 0)} µs`);
  rows.push("  what parts cost (median µs per call, measured interleaved):");
  for (const [k, v] of Object.entries(inproc.experiments_us)) rows.push(`    ${k.padEnd(48)} ${lpad(fmt(v, 1), 8)}`);
  const c = inproc.struct_codec_check;
  if (c) rows.push(`    (direct codec: bench/struct-codec.ts; ${c.identical_encodings}/${c.structs} Structs encode byte-identical to the SDK's, decodes ${c.decodes_equal ? "equal" : "DIFFER"}; request Structs ${fmt(c.request_struct_bytes / 1024, 1)} KiB, reply Structs ${fmt(c.response_struct_bytes / 1024, 1)} KiB)`);
} else rows.push(`in-process measurements failed: ${ip.stderr.trim().split("\n").slice(-5).join(" / ")}`);
if (points.length > 0) {
  rows.push("");
  rows.push("scaling, in-process (median µs per call; render = runFunction(request); wire = decode request + runFunction + encode response):");
  for (const series of ["capabilities", "observed"] as const) {
    const ps = points.filter((p) => p.series === series);
    rows.push(`  ${series === "capabilities" ? "capabilities declared" : "observed resources"}:`);
    for (const p of ps) {
      const e = p === ps[0] ? "" : `   growth exponent vs first: render ${fmt(exponent({ x: ps[0]!.x, t: ps[0]!.renderUs }, { x: p.x, t: p.renderUs }))}, wire ${fmt(exponent({ x: ps[0]!.x, t: ps[0]!.wireUs }, { x: p.x, t: p.wireUs }))}`;
      rows.push(`    ${lpad(String(p.x), 5)} (${p.label}): ${lpad(String(p.rendered), 3)} objects, ${lpad(String(p.observed), 4)} observed, request ${lpad(fmt(p.requestBytes / 1024, 0), 4)} KiB: render ${lpad(fmt(p.renderUs, 0), 6)} µs  wire ${lpad(fmt(p.wireUs, 0), 6)} µs${e}`);
    }
    const first = ps[0]!;
    const last = ps[ps.length - 1]!;
    const marginal = (last.renderUs - first.renderUs) / (last.x - first.x);
    const marginalWire = (last.wireUs - first.wireUs) / (last.x - first.x);
    rows.push(`    marginal cost per ${series === "capabilities" ? "capability" : "observed resource"}: render ${fmt(marginal, 1)} µs, wire ${fmt(marginalWire, 1)} µs (exponent 1 = linear; below 1 = a fixed cost dominates)`);
  }
}
const report = rows.join("\n");
process.stdout.write(`\n${report}\n`);

// ---- JSON -----------------------------------------------------------------------------------

const summary = (key: string) =>
  results[key]
    ? {
        p50_ms: med(key, "p50"),
        p99_ms: med(key, "p99"),
        throughput_c16: med(key, "rps"),
        startup_ms: med(key, "startupMs"),
        peak_rss_mb: med(key, "hwmMb"),
        idle_rss_mb: med(key, "idleRssMb"),
        response_bytes: overRounds(results[key]!.map((r) => r.responseBytes)),
        rounds: results[key],
      }
    : null;
const json = {
  date: new Date(started).toISOString(),
  commit,
  functions_dirty: dirty,
  node_flags: nodeFlags,
  machine: { cores: cpus().length, cpu, memory_gib: totalmem() / 2 ** 30, load_average_start: load0, load_average_end: load1 },
  versions: {
    node: process.version,
    sdk: pkgVersion("@crossplane-org/function-sdk-typescript"),
    grpc_js: pkgVersion("@grpc/grpc-js"),
    go: goVersion ?? null,
    function_sdk_go: goFloorBin ? GO_SDK_VERSION : null,
  },
  method: { rounds: ROUNDS, concurrency: CONCURRENCY, ...PHASE, request_bytes: dev.bytes.length, composed_resources: dev.rendered },
  p50_ms: med("berth", "p50"),
  p99_ms: med("berth", "p99"),
  throughput_c16: med("berth", "rps"),
  startup_ms: med("berth", "startupMs"),
  peak_rss_mb: med("berth", "hwmMb"),
  idle_rss_mb: med("berth", "idleRssMb"),
  p50_ratio_to_floor: p50Floor,
  p50_ratio_to_floor_echo: ratio("echo", "p50"),
  p50_ratio_to_go_floor: results.gofloor ? ratio("gofloor", "p50") : null,
  p99_ratio_to_floor: ratio("floor", "p99"),
  p99_ratio_to_go_floor: results.gofloor ? ratio("gofloor", "p99") : null,
  throughput_ratio_to_floor: ratio("floor", "rps"),
  throughput_ratio_to_go_floor: results.gofloor ? ratio("gofloor", "rps") : null,
  startup_ratio_to_floor: ratio("floor", "startupMs"),
  startup_ratio_to_go_floor: results.gofloor ? ratio("gofloor", "startupMs") : null,
  peak_rss_ratio_to_floor: ratio("floor", "hwmMb"),
  peak_rss_ratio_to_go_floor: results.gofloor ? ratio("gofloor", "hwmMb") : null,
  targets: Object.fromEntries(checks.map((c) => [c.name, c.ok ?? null])),
  references: { floor: summary("floor"), floor_echo: summary("echo"), go_floor: summary("gofloor"), berth: summary("berth"), image: summary("image") },
  image: image
    ? {
        digest: image.digest,
        compressed_bytes: image.compressedBytes,
        uncompressed_bytes: image.uncompressedBytes,
        node: image.node,
        startup_ms: med("image", "startupMs"),
        startup_ratio_to_host_bundle: ratio("berth", "startupMs", "image"),
        peak_rss_ratio_to_host_bundle: ratio("berth", "hwmMb", "image"),
      }
    : { problem: imageProblem },
  go_floor: goFloorBin ? { sdk_version: GO_SDK_VERSION, binary: goFloorBin, first_reply: goFloorReply ?? null } : { problem: goFloorProblem },
  execution_workspace: exec
    ? {
        p50_ms: overRounds(results.berth!.map((r) => r.exec!.p50)),
        p99_ms: overRounds(results.berth!.map((r) => r.exec!.p99)),
        throughput_c16: overRounds(results.berth!.map((r) => r.exec!.rps)),
        request_bytes: exec.bytes.length,
        composed_resources: exec.rendered,
      }
    : { problem: execProblem },
  in_process: inproc ? { breakdown_us: inproc.breakdown_us, experiments_us: inproc.experiments_us, struct_codec_check: inproc.struct_codec_check } : null,
  scaling: points,
};
if (opts.json) {
  mkdirSync(dirname(resolve(opts.json)), { recursive: true });
  writeFileSync(opts.json, `${JSON.stringify(json, null, 2)}\n`);
  log(`wrote ${opts.json}`);
}

// ---- profile --------------------------------------------------------------------------------

if (opts.profile) {
  const dir = `${cache}/bench/profiles`;
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  process.stdout.write(`\n${await profileBerth({ request: dev.bytes, dir, seconds: quick ? 4 : 10, concurrency: CONCURRENCY })}\n`);
}
