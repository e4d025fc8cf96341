import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import {
  FunctionRunnerServiceService,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from "@crossplane-org/function-sdk-typescript";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface FunctionProcess {
  process: ChildProcess;
  address: string;
  /** Everything the process has written to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts function-berth as its own process with the standard flags, the way Crossplane's
 * package runtime starts it. `entry` is the compiled main.js, or main.ts run through tsx;
 * `command` replaces the host's Node and the entry altogether (the image's ENTRYPOINT run in its
 * root filesystem), and then `tlsDir` is a path as that command sees it. `env` replaces the
 * environment (default: this process's).
 */
export async function startFunction(opts: { insecure?: boolean; tlsDir?: string; entry?: string; nodeFlags?: string[]; command?: string[]; env?: NodeJS.ProcessEnv; debug?: boolean } = {}): Promise<FunctionProcess> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const entry = opts.entry ?? "functions/berth/main.ts";
  const node = [process.execPath, ...(opts.nodeFlags ?? []), ...(entry.endsWith(".ts") ? ["--import", "tsx", entry] : [entry])];
  const [file, ...args] = opts.command ?? node;
  const flags = ["--address", address, ...(opts.insecure ? ["--insecure"] : ["--tls-server-certs-dir", opts.tlsDir!]), ...(opts.debug ? ["--debug"] : [])];
  const child = spawn(file!, [...args, ...flags], { stdio: ["ignore", "pipe", "pipe"], env: opts.env ?? process.env });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`function did not start:\n${output}`)), 30_000);
    const check = setInterval(() => {
      if (output.includes("listening")) {
        clearTimeout(timer);
        clearInterval(check);
        resolve();
      }
    }, 20);
    child.once("exit", (code) => {
      clearTimeout(timer);
      clearInterval(check);
      reject(new Error(`function exited with ${code}:\n${output}`));
    });
  });
  return {
    process: child,
    address,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

const FunctionRunnerClient = grpc.makeGenericClientConstructor(FunctionRunnerServiceService, "FunctionRunnerService");

export interface RunFunctionClient {
  runFunction(req: RunFunctionRequest): Promise<RunFunctionResponse>;
  /** The same call with the request already encoded: a load test's client then spends no CPU encoding it again. */
  runEncoded(req: Uint8Array): Promise<RunFunctionResponse>;
  close(): void;
}

/** A real gRPC client, with Crossplane's client certificate when `tlsDir` is given. */
export function connect(address: string, tlsDir?: string): RunFunctionClient {
  const credentials = tlsDir
    ? grpc.credentials.createSsl(
        readFileSync(join(tlsDir, "ca.crt")),
        readFileSync(join(tlsDir, "tls.key")),
        readFileSync(join(tlsDir, "tls.crt")),
      )
    : grpc.credentials.createInsecure();
  const target = tlsDir ? address.replace("127.0.0.1", "localhost") : address;
  const client = new FunctionRunnerClient(target, credentials) as unknown as grpc.Client & {
    runFunction(req: RunFunctionRequest, cb: (err: grpc.ServiceError | null, rsp: RunFunctionResponse) => void): void;
  };
  return {
    runFunction: (req) => new Promise((resolve, reject) => client.runFunction(req, (err, rsp) => (err ? reject(err) : resolve(rsp)))),
    runEncoded: (req) =>
      new Promise((resolve, reject) =>
        client.makeUnaryRequest(
          FunctionRunnerServiceService.runFunction.path,
          (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength),
          FunctionRunnerServiceService.runFunction.responseDeserialize,
          req,
          (err, rsp) => (err ? reject(err) : resolve(rsp!)),
        ),
      ),
    close: () => client.close(),
  };
}
