// What the MCP gate costs, measured side by side in one run (npm run bench:mcp-gate):
//  1. start-up: spawning the esbuild bundle (what the image ships, with the image's Node flags)
//     until /healthz answers 200;
//  2. memory: the gate process's VmRSS idle and after the calls below, and its peak (VmHWM);
//  3. per-call latency of tools/call on a declared tool through the gate, against the same call
//     straight to the upstream (the floor). Batches alternate so machine noise hits both alike.
// Options: --calls N (per side, default 2000), --runs N (start-ups, default 7), --json FILE.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { build } from "esbuild";
import { GATE } from "../image/build.js";
import { shippedNodeFlags } from "../image/shipped.js";
import { freePort, startRecordingUpstream } from "../test/support/mcp-upstream.js";
import { median, quantile } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BUNDLE = join(ROOT, "dist", "mcp-gate.mjs");
const BATCH = 100;

const { values } = parseArgs({ options: { calls: { type: "string", default: "2000" }, runs: { type: "string", default: "7" }, json: { type: "string" } } });
const calls = Number(values.calls);
const runs = Number(values.runs);

function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

async function bundle(): Promise<void> {
  await build({
    entryPoints: [join(ROOT, "functions/mcp-gate/main.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: BUNDLE,
    logLevel: "warning",
    // Some dependencies still call require(); ESM output needs one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
}

interface Gate {
  readonly child: ChildProcess;
  readonly url: string;
  readonly startMs: number;
}

async function spawnGate(policyFile: string): Promise<Gate> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  // With the image's own Node flags (package/mcp-gate/Dockerfile's ENTRYPOINT), as it runs in a pod.
  const child = spawn(process.execPath, [...shippedNodeFlags(GATE.dockerfile), BUNDLE, "--policy", policyFile, "--listen", `127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "inherit"] });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gate exited ${child.exitCode}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.status === 200, () => false);
    if (ok) return { child, url, startMs: performance.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

async function stopGate(gate: Gate): Promise<void> {
  const exited = new Promise((resolve) => gate.child.once("exit", resolve));
  gate.child.kill("SIGTERM");
  await exited;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "0" }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.listTools();
  return client;
}

async function timeCalls(client: Client, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await client.callTool({ name: "search", arguments: {} });
    into.push(performance.now() - t);
  }
}

async function main(): Promise<void> {
  await bundle();
  const upstream = await startRecordingUpstream(["search", "fetch"]);
  const dir = mkdtempSync(join(tmpdir(), "mcp-gate-bench-"));
  const policyFile = join(dir, "policy.json");
  writeFileSync(policyFile, JSON.stringify({ servers: [{ name: "docs", upstream: upstream.url, tools: ["search"] }] }));
  try {
    const startups: number[] = [];
    for (let i = 0; i < runs; i++) {
      const gate = await spawnGate(policyFile);
      startups.push(gate.startMs);
      await stopGate(gate);
    }

    const gate = await spawnGate(policyFile);
    const pid = gate.child.pid!;
    await new Promise((resolve) => setTimeout(resolve, 200));
    const idle = memoryMb(pid);
    const throughGate = await connect(`${gate.url}/mcp/docs`);
    const direct = await connect(upstream.url);
    await timeCalls(throughGate, 50, []);
    await timeCalls(direct, 50, []);
    const gated: number[] = [];
    const floor: number[] = [];
    for (let done = 0; done < calls; done += BATCH) {
      const n = Math.min(BATCH, calls - done);
      await timeCalls(throughGate, n, gated);
      await timeCalls(direct, n, floor);
      // The upstream records every message; the bench has no use for the record.
      upstream.clear();
    }
    const loaded = memoryMb(pid);
    await throughGate.close();
    await direct.close();
    await stopGate(gate);

    const figures = {
      calls,
      startup: { runs, medianMs: median(startups), minMs: Math.min(...startups), maxMs: Math.max(...startups) },
      memoryMb: { idleRss: idle.rss, afterCallsRss: loaded.rss, peak: loaded.peak },
      latencyMs: {
        gate: { p50: quantile(gated, 0.5), p99: quantile(gated, 0.99) },
        direct: { p50: quantile(floor, 0.5), p99: quantile(floor, 0.99) },
        addedP50: quantile(gated, 0.5) - quantile(floor, 0.5),
        addedP99: quantile(gated, 0.99) - quantile(floor, 0.99),
        ratioP50: quantile(gated, 0.5) / quantile(floor, 0.5),
      },
    };
    const f = (x: number): string => x.toFixed(2);
    console.log(`MCP gate (bundle ${BUNDLE.replace(ROOT, "")}, node ${process.version})`);
    console.log(`start-up to /healthz 200   median ${f(figures.startup.medianMs)} ms  (min ${f(figures.startup.minMs)}, max ${f(figures.startup.maxMs)}, ${runs} runs)`);
    console.log(`gate RSS                   idle ${f(idle.rss)} MB, after ${calls} calls ${f(loaded.rss)} MB, peak ${f(loaded.peak)} MB`);
    console.log(`tools/call, ${calls} each    p50 gate ${f(figures.latencyMs.gate.p50)} ms vs direct ${f(figures.latencyMs.direct.p50)} ms (+${f(figures.latencyMs.addedP50)} ms, x${f(figures.latencyMs.ratioP50)})`);
    console.log(`                           p99 gate ${f(figures.latencyMs.gate.p99)} ms vs direct ${f(figures.latencyMs.direct.p99)} ms (+${f(figures.latencyMs.addedP99)} ms)`);
    if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await upstream.close();
  }
}

await main();
