// The scaling series: how long one render takes, in-process, as the workspace declares more
// capabilities and as the request carries more observed composed resources.
import { performance } from "node:perf_hooks";
import { RunFunctionRequest, RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { median } from "./load.js";
import { fullWorkspace, type RunFunc, type Scenario, scalingPool, steadyState, workspaceWith } from "./workload.js";

/** Median time of one call, in µs: warm up, then batches of about 25 ms, bounded in count and time. */
export function timeCall(fn: () => unknown, opts: { warmupMs?: number; batches?: number; batchMs?: number } = {}): number {
  const warmupMs = opts.warmupMs ?? 300;
  const batches = opts.batches ?? 15;
  const batchMs = opts.batchMs ?? 25;
  let n = 0;
  const w0 = performance.now();
  while (performance.now() - w0 < warmupMs && n < 1_000_000) {
    fn();
    n++;
  }
  const perCallMs = (performance.now() - w0) / n;
  const size = Math.max(1, Math.min(100_000, Math.round(batchMs / perCallMs)));
  const means: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < size; i++) fn();
    means.push(((performance.now() - t0) / size) * 1000);
  }
  return median(means);
}

export interface Point {
  series: "capabilities" | "observed";
  /** The x of the series: capabilities declared, or observed resources in the request. */
  x: number;
  capabilities: number;
  rendered: number;
  observed: number;
  requestBytes: number;
  /** runFunction(request) alone, µs. */
  renderUs: number;
  /** decode the request bytes, runFunction, encode the response: the process's share of a call, µs. */
  wireUs: number;
}

async function measure(run: (req: RunFunctionRequest) => RunFunctionResponse, s: Scenario, series: Point["series"], x: number, capabilities: number): Promise<Point> {
  const renderUs = timeCall(() => run(s.req));
  const wireUs = timeCall(() => RunFunctionResponse.encode(run(RunFunctionRequest.decode(s.bytes))).finish());
  return { series, x, capabilities, rendered: s.rendered, observed: s.observed, requestBytes: s.bytes.length, renderUs, wireUs };
}

export async function scalingSeries(run: (req: RunFunctionRequest) => RunFunctionResponse, log: (line: string) => void): Promise<Point[]> {
  const points: Point[] = [];
  const runAsync: RunFunc = (r) => run(r);
  // Capabilities: git, inference, kubernetes read, N MCP servers and M registries.
  for (const [mcp, registries] of [
    [1, 1],
    [5, 1],
    [16, 1],
    [16, 16],
  ] as const) {
    const caps = 3 + mcp + registries;
    const s = await steadyState(runAsync, `capabilities-${caps}`, workspaceWith(mcp, registries), { pool: scalingPool(16) });
    const p = await measure(run, s, "capabilities", caps, caps);
    log(`  capabilities ${caps} (mcp ${mcp}, registries ${registries}): ${p.rendered} objects, ${p.observed} observed: render ${p.renderUs.toFixed(0)} µs, wire ${p.wireUs.toFixed(0)} µs`);
    points.push(p);
  }
  // Observed composed resources: the first 10 of the 15 rendered, or all 15 and bogus ones.
  for (const n of [10, 100, 1000]) {
    const base = fullWorkspace();
    const s = await steadyState(runAsync, `observed-${n}`, base, n <= 15 ? { limitObserved: n } : { extraObserved: n - 15 });
    const p = await measure(run, s, "observed", s.observed, 5);
    log(`  observed ${s.observed}: ${p.rendered} objects: render ${p.renderUs.toFixed(0)} µs, wire ${p.wireUs.toFixed(0)} µs (request ${(p.requestBytes / 1024).toFixed(0)} KiB)`);
    points.push(p);
  }
  return points;
}

/** Growth exponent between two points: 1 is linear, below 1 sublinear (fixed cost dominates). */
export const exponent = (a: { x: number; t: number }, b: { x: number; t: number }) => Math.log(b.t / a.t) / Math.log(b.x / a.x);
