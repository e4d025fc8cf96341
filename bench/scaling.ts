// In-process timing: one call's cost, measured without gRPC, on a machine that is shared and
// noisy. Everything compared is measured interleaved (one short batch of each, in turn, many
// times) and reported as the median over passes, so that a burst of load from elsewhere lands
// on every case alike instead of on whichever ran during it.
import { performance } from "node:perf_hooks";
import { type RunFunctionRequest, type RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { median } from "./stats.js";
import { fullWorkspace, type RunFunc, type Scenario, scalingPool, steadyState, workspaceWith } from "./workload.js";

export interface Case {
  name: string;
  fn: () => unknown;
}

/**
 * Median µs per call of each case: a warm-up of `warmupMs` each, then `passes` passes that run
 * a batch of about `batchMs` of every case in turn.
 */
export function interleaved(cases: Case[], opts: { passes?: number; batchMs?: number; warmupMs?: number } = {}): Record<string, number> {
  const passes = opts.passes ?? 15;
  const batchMs = opts.batchMs ?? 25;
  const warmupMs = opts.warmupMs ?? 300;
  const size = new Map<string, number>();
  for (const c of cases) {
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < warmupMs && n < 1_000_000) {
      c.fn();
      n++;
    }
    size.set(c.name, Math.max(1, Math.min(100_000, Math.round((batchMs * n) / (performance.now() - t0)))));
  }
  const samples = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let p = 0; p < passes; p++) {
    for (const c of cases) {
      const k = size.get(c.name)!;
      const t0 = performance.now();
      for (let i = 0; i < k; i++) c.fn();
      samples.get(c.name)!.push(((performance.now() - t0) / k) * 1000);
    }
  }
  return Object.fromEntries(cases.map((c) => [c.name, median(samples.get(c.name)!)]));
}

export interface Point {
  series: "capabilities" | "observed";
  /** The x of the series: capabilities declared, or observed resources in the request. */
  x: number;
  label: string;
  rendered: number;
  observed: number;
  requestBytes: number;
  /** runFunction(request) alone, µs. */
  renderUs: number;
  /** decode the request bytes, runFunction, encode the response: the process's share of a call, µs. */
  wireUs: number;
}

export interface Codec {
  decode(bytes: Uint8Array): RunFunctionRequest;
  encode(rsp: RunFunctionResponse): Uint8Array;
}

export async function scalingSeries(run: (req: RunFunctionRequest) => RunFunctionResponse, codec: Codec, quick: boolean): Promise<Point[]> {
  const runAsync: RunFunc = (r) => run(r);
  const scenarios: { series: Point["series"]; x: number; label: string; s: Scenario }[] = [];
  // Capabilities: git, inference, kubernetes read, N MCP servers and M registries.
  for (const [mcp, registries] of [
    [1, 1],
    [5, 1],
    [16, 1],
    [16, 16],
  ] as const) {
    const caps = 3 + mcp + registries;
    const s = await steadyState(runAsync, `capabilities-${caps}`, workspaceWith(mcp, registries), { pool: scalingPool(16) });
    scenarios.push({ series: "capabilities", x: caps, label: `mcp ${mcp}, registries ${registries}`, s });
  }
  // Observed composed resources: the first 10 of the rendered ones, or all and bogus ones.
  for (const n of [10, 100, 1000]) {
    const s = await steadyState(runAsync, `observed-${n}`, fullWorkspace(), n <= 15 ? { limitObserved: n } : { extraObserved: n - 15 });
    scenarios.push({ series: "observed", x: s.observed, label: n <= 15 ? "first rendered objects only" : `${s.rendered} rendered + ${s.observed - s.rendered} bogus`, s });
  }
  const cases: Case[] = scenarios.flatMap(({ s }) => [
    { name: `${s.name}/render`, fn: () => run(s.req) },
    { name: `${s.name}/wire`, fn: () => codec.encode(run(codec.decode(s.bytes))) },
  ]);
  const t = interleaved(cases, quick ? { passes: 5, batchMs: 15, warmupMs: 150 } : { passes: 15, batchMs: 25, warmupMs: 300 });
  return scenarios.map(({ series, x, label, s }) => ({
    series,
    x,
    label,
    rendered: s.rendered,
    observed: s.observed,
    requestBytes: s.bytes.length,
    renderUs: t[`${s.name}/render`]!,
    wireUs: t[`${s.name}/wire`]!,
  }));
}

/** Growth exponent between two points: 1 is linear, below 1 sublinear (a fixed cost dominates). */
export const exponent = (a: { x: number; t: number }, b: { x: number; t: number }) => Math.log(b.t / a.t) / Math.log(b.x / a.x);
