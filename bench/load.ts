// Drives a composition function process over real gRPC (@grpc/grpc-js) on loopback, and
// measures it from outside: start-up, latency at concurrency 1, throughput at concurrency 16,
// and the peak RSS of the process.
//
// The client sends the request already encoded and keeps the response as bytes, so that the
// bench process (which shares the machine's two cores with the function) spends as little as
// possible per call; the function still decodes every request and encodes every response.
// Responses are checked: the first is decoded in full, and every one must have the length of
// the first (a response that differs is decoded and must carry no fatal result).
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { performance } from "node:perf_hooks";
import * as grpc from "@grpc/grpc-js";
import { FunctionRunnerServiceService, RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { freePort } from "../test/support/function-process.js";
import { quantile } from "./stats.js";
import { fatalResults } from "./workload.js";

const identity = (b: Buffer) => b;
const RawClient = grpc.makeGenericClientConstructor(
  {
    runFunction: {
      path: FunctionRunnerServiceService.runFunction.path,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
      originalName: "runFunction",
    },
  },
  "FunctionRunnerService",
);

export interface RawClient {
  call(request: Buffer): Promise<Buffer>;
  close(): void;
}

export function rawClient(address: string, maxMessageBytes = 64 << 20, deadlineMs = 10_000): RawClient {
  const client = new RawClient(address, grpc.credentials.createInsecure(), {
    "grpc.max_receive_message_length": maxMessageBytes,
    "grpc.max_send_message_length": maxMessageBytes,
  }) as unknown as grpc.Client & { runFunction(b: Buffer, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: Buffer) => void): void };
  return {
    call: (request) =>
      new Promise((resolve, reject) =>
        client.runFunction(request, { deadline: Date.now() + deadlineMs }, (err, rsp) => (err ? reject(err) : resolve(rsp))),
      ),
    close: () => client.close(),
  };
}

/** How to start one function under test. */
export interface Target {
  /** Short key: floor, echo, gofloor, berth, image. */
  key: string;
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Extra node flags (--cpu-prof), placed before the script. */
  nodeFlags?: string[];
}

export interface Running {
  target: Target;
  child: ChildProcess;
  address: string;
  client: RawClient;
  /** Spawn to first successful RunFunction response, ms. */
  startupMs: number;
  /** The first response, decoded. */
  first: RunFunctionResponse;
  firstBytes: number;
  /** Resident set right after the first response, before any load (MB). */
  idleRssMb: number;
  output(): string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tcpReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/**
 * Spawns the function and measures the time from spawn() to its first successful response
 * to `request`: the port is polled every 2 ms, then one real RunFunction is made.
 */
export async function start(target: Target, request: Buffer, timeoutMs = 20_000): Promise<Running> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const isNode = target.command === process.execPath;
  const args = isNode ? [...(target.nodeFlags ?? []), ...target.args] : target.args;
  let output = "";
  const keep = (d: Buffer) => {
    if (output.length < 64_000) output += d.toString();
  };
  const t0 = performance.now();
  const child = spawn(target.command, [...args, "--insecure", "--address", address], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...target.env },
  });
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  let exited = false;
  child.once("exit", () => (exited = true));
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill("SIGTERM");
    });
  try {
    while (!(await tcpReady(port))) {
      if (exited) throw new Error(`${target.label} exited before listening:\n${output}`);
      if (performance.now() - t0 > timeoutMs) throw new Error(`${target.label} did not listen within ${timeoutMs} ms:\n${output}`);
      await sleep(2);
    }
    const client = rawClient(address);
    let rsp: Buffer | undefined;
    while (rsp === undefined) {
      try {
        rsp = await client.call(request);
      } catch (err) {
        if (exited || performance.now() - t0 > timeoutMs) throw new Error(`${target.label} did not answer: ${(err as Error).message}\n${output}`);
        await sleep(2);
      }
    }
    const startupMs = performance.now() - t0;
    const first = RunFunctionResponse.decode(rsp);
    const fatal = fatalResults(first);
    if (fatal.length > 0) throw new Error(`${target.label} answered with a fatal result: ${fatal.join("; ")}`);
    const idleRssMb = memory(child.pid!).rssMb;
    return { target, child, address, client, startupMs, first, firstBytes: rsp.length, idleRssMb, output: () => output, stop: async () => (client.close(), await stop()) };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Peak and current resident set of a process, from /proc (MB). */
export function memory(pid: number): { hwmMb: number; rssMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { hwmMb: kb("VmHWM") / 1024, rssMb: kb("VmRSS") / 1024 };
}

/** Every response must be as long as the first; one that is not is decoded and checked. */
class Checker {
  odd = 0;
  constructor(private readonly length: number) {}
  check(rsp: Buffer) {
    if (rsp.length === this.length) return;
    this.odd++;
    const fatal = fatalResults(RunFunctionResponse.decode(rsp));
    if (fatal.length > 0) throw new Error(`fatal result under load: ${fatal.join("; ")}`);
  }
}

export interface Latency {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
}

/** Sequential calls (concurrency 1): at most `count` of them, for at most `maxMs`. */
export async function latency(r: Running, request: Buffer, count: number, maxMs: number): Promise<Latency> {
  const checker = new Checker(r.firstBytes);
  const samples: number[] = [];
  const deadline = performance.now() + maxMs;
  while (samples.length < count && performance.now() < deadline) {
    const t0 = performance.now();
    const rsp = await r.client.call(request);
    samples.push(performance.now() - t0);
    checker.check(rsp);
  }
  return {
    n: samples.length,
    p50: quantile(samples, 0.5),
    p90: quantile(samples, 0.9),
    p99: quantile(samples, 0.99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

/** `concurrency` callers in a closed loop for `ms`; completed calls per second. */
export async function throughput(r: Running, request: Buffer, concurrency: number, ms: number, maxCalls = 200_000): Promise<{ rps: number; calls: number; seconds: number }> {
  const checker = new Checker(r.firstBytes);
  let calls = 0;
  const t0 = performance.now();
  const deadline = t0 + ms;
  const worker = async () => {
    while (performance.now() < deadline && calls < maxCalls) {
      const rsp = await r.client.call(request);
      calls++;
      checker.check(rsp);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return { rps: calls / seconds, calls, seconds };
}
