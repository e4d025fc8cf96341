// Where function-berth's time goes under load: the compiled function process runs with
// `node --cpu-prof`, is driven at concurrency 16 for a while, and the profile is read back,
// counting only the samples taken while the measured load ran (start-up and warm-up excluded).
//
//   npm run bench -- --profile                  (after the bench, on the same request)
//   npx tsx bench/profile.ts [--seconds N] [--concurrency N] [--skip-build]   (profile alone)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { start, throughput } from "./load.js";
import { fullWorkspace, steadyState } from "./workload.js";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Which part of the request a sample belongs to: the innermost frame on its stack that is
 * Berth's code, the SDK's protobuf decode or encode, or grpc-js decides (so that grpc-js sending
 * a reply from inside the SDK's callback counts as grpc-js, and zod called by Berth as Berth).
 */
function bucketOf(stack: CallFrame[]): string {
  const leaf = stack[stack.length - 1]!;
  if (leaf.functionName === "(garbage collector)") return "garbage collection";
  if (leaf.functionName === "(idle)") return "idle";
  if (leaf.functionName === "(program)") return "V8/native, unattributed (program)";
  const proto = (c: CallFrame) => c.url.includes("function-sdk-typescript/dist/proto/");
  for (let i = stack.length - 1; i >= 0; i--) {
    const c = stack[i]!;
    if (c.url.includes("/functions/berth/")) return "berth runFunction (render, incl. what it calls)";
    if (proto(c) && c.functionName === "decode") return "decode request (ts-proto + Struct.unwrap)";
    if (proto(c) && c.functionName === "encode") return "encode response (ts-proto + Struct.wrap)";
    if (c.url.includes("@grpc/grpc-js")) return "grpc-js (server, http2 framing)";
  }
  if (stack.some((c) => c.url.includes("function-sdk-typescript/dist/"))) return "SDK FunctionRunner, to(), logging";
  if (stack.some((c) => c.url.includes("pino"))) return "pino";
  if (stack.some((c) => c.url.startsWith("node:"))) return "node core (net, http2, timers)";
  return "other";
}

function packageOf(url: string): string {
  if (url === "") return "(native)";
  if (url.startsWith("node:")) return "node core";
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.includes("/functions/berth/")) return "berth";
  return url;
}

const short = (c: CallFrame) => `${c.functionName || "(anonymous)"} ${c.url.replace(/^.*node_modules\//, "").replace(/^.*\/dist\//, "dist/").replace(/^file:\/\//, "")}:${c.lineNumber + 1}`;

/** Reads a .cpuprofile and reports, over samples between `fromUs` and `toUs` (profile clock). */
export function analyse(profile: CpuProfile, window?: { fromUs: number; toUs: number }): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackCache = new Map<number, CallFrame[]>();
  const stackOf = (id: number): CallFrame[] => {
    let s = stackCache.get(id);
    if (s) return s;
    const frames: CallFrame[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) frames.push(byId.get(cur)!.callFrame);
    s = frames.reverse().filter((f) => f.functionName !== "(root)");
    stackCache.set(id, s);
    return s;
  };

  const buckets = new Map<string, number>();
  const self = new Map<string, number>();
  const selfPkg = new Map<string, number>();
  const berthInclusive = new Map<string, number>();
  const inBerthPkg = new Map<string, number>();
  let total = 0;
  let busy = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i]!;
    // A sample's weight is the time until the next sample.
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const stack = stackOf(profile.samples[i]!);
    if (stack.length === 0) continue;
    const leaf = stack[stack.length - 1]!;
    total += dt;
    const bucket = bucketOf(stack);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + dt);
    if (bucket === "idle") continue;
    busy += dt;
    self.set(short(leaf), (self.get(short(leaf)) ?? 0) + dt);
    selfPkg.set(packageOf(leaf.url), (selfPkg.get(packageOf(leaf.url)) ?? 0) + dt);
    if (bucket.startsWith("berth")) {
      const seen = new Set<string>();
      for (const f of stack) {
        if (!f.url.includes("/functions/berth/")) continue;
        const k = short(f);
        if (seen.has(k)) continue;
        seen.add(k);
        berthInclusive.set(k, (berthInclusive.get(k) ?? 0) + dt);
      }
      const pkg = packageOf(leaf.url);
      inBerthPkg.set(pkg, (inBerthPkg.get(pkg) ?? 0) + dt);
    }
  }
  const pct = (x: number, of: number) => `${((100 * x) / of).toFixed(1).padStart(5)}%`;
  const ms = (x: number) => `${(x / 1000).toFixed(0).padStart(6)} ms`;
  const top = (m: Map<string, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  const out: string[] = [];
  out.push(`samples in the load window: ${ms(total).trim()} of wall time, ${ms(busy).trim()} busy (${pct(busy, total).trim()} of the main thread)`);
  out.push("");
  out.push("main thread, by part of the request (share of busy time):");
  for (const [k, v] of top(buckets, 20)) if (k !== "idle") out.push(`  ${pct(v, busy)} ${ms(v)}  ${k}`);
  out.push("");
  out.push("self time by package (share of busy time):");
  for (const [k, v] of top(selfPkg, 12)) out.push(`  ${pct(v, busy)} ${ms(v)}  ${k}`);
  const berthTotal = buckets.get("berth runFunction (render, incl. what it calls)") ?? 0;
  if (berthTotal > 0) {
    out.push("");
    out.push("inside berth runFunction, self time by package (share of runFunction):");
    for (const [k, v] of top(inBerthPkg, 10)) out.push(`  ${pct(v, berthTotal)} ${ms(v)}  ${k}`);
    out.push("");
    out.push("berth functions, inclusive (share of runFunction):");
    for (const [k, v] of top(berthInclusive, 22)) out.push(`  ${pct(v, berthTotal)} ${ms(v)}  ${k}`);
  }
  out.push("");
  out.push("top self time (share of busy time):");
  for (const [k, v] of top(self, 25)) out.push(`  ${pct(v, busy)} ${ms(v)}  ${k}`);
  return out.join("\n");
}

/** Profiles the berth process at `concurrency` for `seconds` on `request`; returns the report. */
export async function profileBerth(o: { request: Buffer; dir: string; seconds: number; concurrency: number }): Promise<string> {
  mkdirSync(o.dir, { recursive: true });
  const before = new Set(readdirSync(o.dir));
  const r = await start(
    {
      key: "berth",
      label: "berth (--cpu-prof)",
      command: process.execPath,
      args: ["dist/functions/berth/main.js"],
      nodeFlags: ["--cpu-prof", "--cpu-prof-dir", o.dir, "--cpu-prof-interval", "250"],
    },
    o.request,
  );
  let window: { fromUs: number; toUs: number };
  let tp: { rps: number; calls: number };
  try {
    await throughput(r, o.request, o.concurrency, 1_500);
    // process.hrtime and V8's profile clock are both CLOCK_MONOTONIC, in ns and µs.
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    tp = await throughput(r, o.request, o.concurrency, o.seconds * 1000);
    window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) };
  } finally {
    await r.stop();
  }
  let file: string | undefined;
  for (let i = 0; i < 100 && file === undefined; i++) {
    file = readdirSync(o.dir).find((f) => f.endsWith(".cpuprofile") && !before.has(f));
    if (file === undefined) await new Promise((res) => setTimeout(res, 100));
  }
  if (file === undefined) return `profile: no .cpuprofile appeared in ${o.dir}`;
  const path = join(o.dir, file);
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const inWindow = profile.startTime <= window.toUs && profile.endTime >= window.fromUs;
  return [
    `profile: berth process under load at concurrency ${o.concurrency} for ${o.seconds} s (${tp.rps.toFixed(0)} req/s while profiled; ${tp.calls} calls), node --cpu-prof --cpu-prof-interval 250 µs`,
    `file: ${path}`,
    inWindow ? "" : "(the profile clock did not match the load window: all samples are counted)",
    analyse(profile, inWindow ? window : undefined),
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: { seconds: { type: "string", default: "10" }, concurrency: { type: "string", default: "16" }, "skip-build": { type: "boolean", default: false } },
  });
  if (!values["skip-build"]) {
    const b = spawnSync("npm", ["run", "-s", "build"], { stdio: "inherit" });
    if (b.status !== 0) process.exit(1);
  }
  const fn = (await import(pathToFileURL(resolve("dist/functions/berth/function.js")).href)) as typeof import("../functions/berth/function.js");
  const s = await steadyState((req) => fn.runFunction(req), "DeveloperWorkspace", fullWorkspace());
  const dir = `${process.env.BERTH_CACHE ?? `${process.env.HOME}/.cache/berth`}/bench/profiles`;
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true });
  const seconds = Math.max(1, Math.min(120, Number(values.seconds)));
  const concurrency = Math.max(1, Math.min(256, Number(values.concurrency)));
  process.stdout.write(`${await profileBerth({ request: s.bytes, dir, seconds, concurrency })}\n`);
}
