// npm run bench:lifecycle [-- --sizes 1000,2500,5000,7500] [--calls 5] [--json <file>]
//
// What the lifecycle Operation's request costs the function as fleets grow. Every minute the
// berth-lifecycle CronOperation sends the function every ExecutionWorkspace and class in one
// request, about 8.5 KB per workspace as the API server returns them (test/lifecycle-cases.ts,
// fleetOperationRequest: half of them idle, so each run suspends half, capped at
// maxChangesPerRun). For each size the shipped bundle starts afresh with the image's Node flags
// and answers the same request `--calls` times over real gRPC on loopback; the run prints the
// request's size, the median time to answer, the answer's size and what it changed, and the
// process's peak RSS. Last, one size past the function's bound (BERTH_MAX_REQUEST_SIZE, 64 MiB by
// default) must be refused with RESOURCE_EXHAUSTED naming both sizes.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { RunFunctionRequest, RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { SHIPPED_ENTRY, shippedNodeFlags } from "../image/shipped.js";
import { DEFAULT_MAX_REQUEST_BYTES } from "../functions/berth/serve.js";
import { fleetOperationRequest } from "../test/lifecycle-cases.js";
import { memory, rawClient, start, type Target } from "./load.js";
import { median } from "./stats.js";

const { values: opts } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,2500,5000,7500" },
    calls: { type: "string", default: "5" },
    json: { type: "string" },
  },
  allowPositionals: false,
});
const SIZES = opts.sizes!.split(",").map(Number);
const CALLS = Number(opts.calls);
const CLIENT_BOUND = 1 << 30;
const MB = 1e6;

const berth: Target = { key: "berth", label: "function-berth (shipped bundle)", command: process.execPath, args: [SHIPPED_ENTRY], nodeFlags: shippedNodeFlags() };
const encode = (req: RunFunctionRequest) => Buffer.from(RunFunctionRequest.encode(req).finish());

interface SizeResult {
  workspaces: number;
  request_mb: number;
  median_ms: number;
  ms_per_1000_workspaces: number;
  response_kb: number;
  acted: number;
  deferred: number;
  idle_rss_mb: number;
  peak_rss_mb: number;
}

async function measure(workspaces: number): Promise<SizeResult> {
  const now = new Date();
  const request = encode(fleetOperationRequest(now, workspaces).req);
  // Started on a one-workspace request, so that start-up is not in the figures.
  const running = await start(berth, encode(fleetOperationRequest(now, 1).req));
  const client = rawClient(running.address, CLIENT_BOUND, 120_000);
  try {
    const samples: number[] = [];
    let answer: Buffer | undefined;
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      answer = await client.call(request);
      samples.push(performance.now() - t);
    }
    const rsp = RunFunctionResponse.decode(answer!);
    const fatal = (rsp.results ?? []).filter((r) => r.severity === 1);
    if (fatal.length > 0) throw new Error(`fatal answer at ${workspaces} workspaces: ${fatal[0]!.message}`);
    const output = rsp.output as { acted: unknown[]; deferred: number };
    const ms = median(samples);
    return {
      workspaces,
      request_mb: request.length / MB,
      median_ms: ms,
      ms_per_1000_workspaces: (ms / workspaces) * 1000,
      response_kb: answer!.length / 1000,
      acted: output.acted.length,
      deferred: output.deferred,
      idle_rss_mb: running.idleRssMb,
      peak_rss_mb: memory(running.child.pid!).hwmMb,
    };
  } finally {
    client.close();
    await running.stop();
  }
}

/** The smallest fleet whose request is past the function's bound, and what the function says to it. */
async function pastTheBound(): Promise<{ workspaces: number; request_mb: number; refused: string }> {
  const perWorkspace = encode(fleetOperationRequest(new Date(), 100).req).length / 100;
  const workspaces = Math.ceil((DEFAULT_MAX_REQUEST_BYTES / perWorkspace) * 1.02);
  const now = new Date();
  const request = encode(fleetOperationRequest(now, workspaces).req);
  const running = await start(berth, encode(fleetOperationRequest(now, 1).req));
  const client = rawClient(running.address, CLIENT_BOUND, 120_000);
  try {
    const refused = await client.call(request).then(
      () => "answered",
      (e: { code?: number; details?: string }) => `code ${e.code}: ${e.details}`,
    );
    if (!new RegExp(`^code 8: Received message larger than max \\(\\d+ vs ${DEFAULT_MAX_REQUEST_BYTES}\\)$`).test(refused)) throw new Error(`a request of ${request.length} bytes was not refused as expected: ${refused}`);
    return { workspaces, request_mb: request.length / MB, refused };
  } finally {
    client.close();
    await running.stop();
  }
}

const results: SizeResult[] = [];
for (const n of SIZES) {
  const r = await measure(n);
  results.push(r);
  process.stderr.write(`[bench:lifecycle] ${n} workspaces done\n`);
}
const past = await pastTheBound();

const f = (x: number, d = 1) => x.toFixed(d);
console.log(`\nThe lifecycle Operation's request, answered by ${berth.label} (${CALLS} calls each; medians)\n`);
console.log("| ExecutionWorkspaces | request (MB) | answer (ms) | ms per 1,000 | answer (KB) | changed | deferred | RSS idle / peak (MB) |");
console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of results) {
  console.log(`| ${r.workspaces} | ${f(r.request_mb)} | ${f(r.median_ms, 0)} | ${f(r.ms_per_1000_workspaces, 0)} | ${f(r.response_kb, 0)} | ${r.acted} | ${r.deferred} | ${f(r.idle_rss_mb, 0)} / ${f(r.peak_rss_mb, 0)} |`);
}
console.log(`\n${past.workspaces} workspaces (${f(past.request_mb)} MB, past the ${DEFAULT_MAX_REQUEST_BYTES / 2 ** 20} MiB bound): refused, ${past.refused}`);
if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ sizes: results, past_the_bound: past }, null, 2)}\n`);
