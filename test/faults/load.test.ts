// Overload: the function as its own process (the shipped bundle, over TLS with Crossplane's kind
// of client certificate) answering 1,000 RunFunction calls at concurrency 64, each request about
// 1 MiB: a converged workspace whose observed objects carry the managedFields the API server
// returns (a busy object's are large). Three different workspaces in turn, so an answer mixed up
// between calls would show. Every answer must equal the pure render's, the process must not
// crash, and its peak memory must stay bounded; then SIGTERM while 64 such calls are in flight:
// every one of them is answered, and the process exits 0.
import { isDeepStrictEqual } from "node:util";
import { RunFunctionRequest } from "@crossplane-org/function-sdk-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asObserved, renderConverged } from "../../functions/berth/tooling/local-render.js";
import { runFunction } from "../../functions/berth/function.js";
import type { KubeObject } from "../../functions/berth/model.js";
import { SHIPPED_ENTRY, shippedNodeFlags } from "../../image/shipped.js";
import { CLASS_SANDBOX, EPHEMERAL, EW_SANDBOX, managedFields, PERSISTENT, PROFILE, SERVICES, STORAGE_CLASS } from "../fixtures.js";
import { connect, type FunctionProcess, type RunFunctionClient, startFunction } from "../support/function-process.js";
import { peakRssMb } from "../support/processes.js";
import { tempDirs } from "../support/temp.js";
import { makeTestPKI } from "../support/tls.js";

const CALLS = 1000;
const CONCURRENCY = 64;
const REQUEST_BYTES = 1024 * 1024;
/** The bound on the function's peak resident memory under this load. */
const PEAK_RSS_LIMIT_MB = 1024;

const tempDir = tempDirs();
const wire = (o: unknown) => JSON.parse(JSON.stringify(o));
const log = (m: string) => process.stderr.write(`[faults load] ${m}\n`);

/** The size of a request on the wire (protobuf). */
const wireBytes = (req: RunFunctionRequest) => RunFunctionRequest.encode(req).finish().length;

/** A converged workspace's last request with its observed objects padded to about REQUEST_BYTES on the wire. */
async function heavyRequest(composite: KubeObject): Promise<RunFunctionRequest> {
  const cluster = [PROFILE, STORAGE_CLASS, ...SERVICES, CLASS_SANDBOX];
  const reconciles = await renderConverged(composite, cluster);
  const { request, response } = reconciles.at(-1)!;
  const observed = asObserved(response);
  const padded = (keys: number) => {
    const resources = Object.fromEntries(
      Object.entries(observed).map(([n, o]) => [n, { resource: { ...o, metadata: { ...o.metadata, uid: `uid-${n}`, managedFields: managedFields(8, keys) } }, connectionDetails: {}, ready: 0 }]),
    );
    return { ...request, observed: { ...request.observed!, resources } } as RunFunctionRequest;
  };
  let keys = 100;
  let req = padded(keys);
  for (let i = 0; i < 5 && Math.abs(wireBytes(req) - REQUEST_BYTES) > REQUEST_BYTES * 0.02; i++) {
    keys = Math.round((keys * REQUEST_BYTES) / wireBytes(req));
    req = padded(keys);
  }
  const size = wireBytes(req);
  if (Math.abs(size - REQUEST_BYTES) > REQUEST_BYTES * 0.05) throw new Error(`request is ${size} bytes, not about ${REQUEST_BYTES}`);
  return req;
}

let fn: FunctionProcess;
let client: RunFunctionClient;
const requests: RunFunctionRequest[] = [];
/** The requests encoded once, as Crossplane sends them. */
const encoded: Uint8Array[] = [];
const answers: unknown[] = [];

beforeAll(async () => {
  for (const doc of [PERSISTENT, EPHEMERAL, EW_SANDBOX]) {
    const req = await heavyRequest(doc);
    requests.push(req);
    answers.push(wire(runFunction(req)));
    encoded.push(RunFunctionRequest.encode(req).finish());
  }
  const tls = makeTestPKI(tempDir);
  fn = await startFunction({ entry: SHIPPED_ENTRY, nodeFlags: shippedNodeFlags(), tlsDir: tls.serverDir });
  client = connect(fn.address, tls.clientDir);
}, 120_000);

afterAll(async () => {
  client?.close();
  await fn?.stop();
});

describe("the function under load", () => {
  it(`answers ${CALLS} calls of ~1 MiB at concurrency ${CONCURRENCY}, every answer the pure render's, in bounded memory`, async () => {
    const t = Date.now();
    let next = 0;
    const wrong: string[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          const i = next++;
          const rsp = await client.runEncoded(encoded[i % encoded.length]!);
          if (!isDeepStrictEqual(wire(rsp), answers[i % answers.length])) wrong.push(`call ${i}`);
        }
      }),
    );
    const seconds = (Date.now() - t) / 1000;
    const peak = peakRssMb(fn.process.pid!);
    log(`${CALLS} calls of ${(encoded[0]!.length / 1024 / 1024).toFixed(2)} MiB at concurrency ${CONCURRENCY}: ${seconds.toFixed(1)} s (${(CALLS / seconds).toFixed(0)} calls/s); function peak RSS ${peak.toFixed(0)} MB`);
    expect(wrong).toEqual([]);
    expect(fn.process.exitCode).toBeNull();
    expect(peak).toBeLessThan(PEAK_RSS_LIMIT_MB);
  }, 600_000);

  it("SIGTERM with 64 such calls in flight: every one is answered correctly, then it exits 0", async () => {
    const inFlight = Array.from({ length: CONCURRENCY }, (_, i) => client.runEncoded(encoded[i % encoded.length]!).then((rsp) => ({ i, rsp })));
    const exited = new Promise<number | null>((resolve) => fn.process.once("exit", (code) => resolve(code)));
    // Once the first answer is back the rest are on the server, queued or being rendered.
    await Promise.race(inFlight);
    fn.process.kill("SIGTERM");
    const done = await Promise.allSettled(inFlight);
    const failed = done.flatMap((d, i) => (d.status === "rejected" ? [`call ${i}: ${String(d.reason).slice(0, 200)}`] : []));
    expect(failed).toEqual([]);
    for (const d of done) if (d.status === "fulfilled") expect(wire(d.value.rsp)).toEqual(answers[d.value.i % requests.length]);
    expect(await exited).toBe(0);
    expect(fn.output()).toContain("stopped: every call answered");
  }, 120_000);
});
