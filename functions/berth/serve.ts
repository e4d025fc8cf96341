import type { Http2Server, Http2Session } from "node:http2";
import * as grpc from "@grpc/grpc-js";
import {
  type FunctionHandler,
  FunctionRunner,
  FunctionRunnerServiceService,
  getServerCredentials,
  helpText,
  parseArgs,
  type RunFunctionRequest,
  type RunFunctionResponse,
} from "@crossplane-org/function-sdk-typescript";
import { pino } from "pino";
import { DEFAULT_TTLS, TTL_ENV } from "./respond/ttl.js";

/**
 * The largest request the function accepts, in bytes. A composition request carries one
 * workspace and the few objects it requires: tens of KB. The lifecycle Operation's request
 * carries every ExecutionWorkspace and class as the API server returns them, managedFields
 * included: about 8.5 KB per workspace, so gRPC's default bound (4 MiB, the SDKs' default too)
 * refused it above about 490 workspaces. 64 MiB fits about 7,500; `npm run bench:lifecycle`
 * measures what a request of each size costs the function in time and memory. Crossplane's
 * client sends any size, so this bound is what keeps one request from taking the function's
 * memory.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 64 * 2 ** 20;
export const MAX_REQUEST_ENV = "BERTH_MAX_REQUEST_SIZE";
const MIN_REQUEST_BYTES = 4 * 2 ** 20;
const MAX_REQUEST_BYTES = 2 ** 30;
const UNIT_BYTES: Record<string, number> = { "": 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** The request bound the process runs with: the default, or BERTH_MAX_REQUEST_SIZE ("64Mi", "128Mi", "1Gi" or bytes). */
export function maxRequestBytesFromEnvironment(env: Record<string, string | undefined>): number {
  const text = env[MAX_REQUEST_ENV];
  if (text === undefined || text === "") return DEFAULT_MAX_REQUEST_BYTES;
  const match = /^([0-9]+)(Ki|Mi|Gi)?$/.exec(text);
  const bytes = match === null ? Number.NaN : Number(match[1]) * UNIT_BYTES[match[2] ?? ""]!;
  if (!(bytes >= MIN_REQUEST_BYTES && bytes <= MAX_REQUEST_BYTES)) {
    throw new Error(`${MAX_REQUEST_ENV}=${JSON.stringify(text)}: want a size between 4Mi and 1Gi such as "64Mi", "256Mi" or a number of bytes`);
  }
  return bytes;
}

/**
 * The HTTP/2 flow-control windows the function advertises: how many bytes a caller may send it
 * before waiting for a WINDOW_UPDATE, on the whole connection and on each call. Crossplane sends
 * every call to the function over one connection, and HTTP/2's default window is 64 KiB, which
 * grpc-js's server keeps (it reads no option for it: grpc/grpc-node#3058). Requests then reach the
 * function at no more than 64 KiB per round trip, whatever the link: 40 KB/s at a 1 s round trip,
 * where a burst of 60 calls of 120 KB (a workspace with its observed objects) takes 190 s and
 * every call of the burst misses Crossplane's 2-minute reconcile deadline at once (measured in
 * test/faults). Go functions do not meet this: grpc-go grows its windows from the measured
 * bandwidth-delay product, up to 16 MiB. Berth opens the connection's window to that at once,
 * and each call's to 4 MiB so that one large call cannot take the whole connection. Memory is
 * bounded by the request bound above, not by the window: the function reads what arrives.
 */
export const CONNECTION_WINDOW_BYTES = 16 * 2 ** 20;
export const STREAM_WINDOW_BYTES = 4 * 2 ** 20;

/**
 * Opens the flow-control windows of every HTTP/2 server the gRPC server creates (see
 * CONNECTION_WINDOW_BYTES). grpc-js offers no option for it, so this wraps the method through
 * which it makes its HTTP/2 servers, before it binds any: every connection is covered from its
 * first byte. If a grpc-js release renames that method, the server serves with the default
 * windows and says so. So @grpc/grpc-js is pinned exactly (package.json), and
 * test/unit/serve.test.ts reads the windows a client of the real server is offered, and shows that
 * a grpc-js with the method renamed fails that check; test/grpc reads them from the shipped bundle.
 */
function widenFlowControlWindows(server: grpc.Server, logger: { error(msg: string): void }): void {
  const internals = server as unknown as { createHttp2Server?: (credentials: grpc.ServerCredentials) => Http2Server };
  const create = internals.createHttp2Server;
  if (typeof create !== "function") {
    logger.error("cannot widen the HTTP/2 flow-control windows: this @grpc/grpc-js has no createHttp2Server; serving with 64 KiB windows");
    return;
  }
  internals.createHttp2Server = function (this: grpc.Server, credentials: grpc.ServerCredentials): Http2Server {
    const http2Server = create.call(this, credentials);
    http2Server.updateSettings({ initialWindowSize: STREAM_WINDOW_BYTES });
    http2Server.on("session", (session: Http2Session) => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    return http2Server;
  };
}

/**
 * Serves the function over gRPC as Crossplane expects: the standard flags (parsed by the SDK,
 * so they stay the SDK's), TLS unless --insecure, and the receive bound above, which the SDK's
 * `serve` does not let a function set. On SIGTERM or SIGINT it stops taking calls, answers the
 * ones in flight and exits 0: Kubernetes sends SIGTERM on every rollout.
 */
export function serveFunction(handler: FunctionHandler, opts: { name: string; maxRequestBytes: number }): grpc.Server {
  let flags: ReturnType<typeof parseArgs>;
  try {
    flags = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${opts.name}: ${(e as Error).message}\nTry '${opts.name} --help' for the available flags.\n`);
    process.exit(2);
  }
  const { help, ...serverOptions } = flags;
  if (help) {
    const defaults = `${MAX_REQUEST_ENV} (default ${DEFAULT_MAX_REQUEST_BYTES / 2 ** 20}Mi), ${TTL_ENV.provisioning} (${DEFAULT_TTLS.provisioning}s), ${TTL_ENV.atRest} (${DEFAULT_TTLS.atRest}s), ${TTL_ENV.watchCircuitOpen} (${DEFAULT_TTLS.watchCircuitOpen}s)`;
    process.stdout.write(`${helpText(opts.name)}\n\nEnvironment: ${defaults}.\n`);
    process.exit(0);
  }
  // Crossplane's own log shape: a severity field rather than pino's numeric level.
  const logger = pino({ level: serverOptions.debug ? "debug" : "info", formatters: { level: (label) => ({ severity: label.toUpperCase() }) } });
  const runner = new FunctionRunner(handler, logger);
  const server = new grpc.Server({ "grpc.max_receive_message_length": opts.maxRequestBytes });
  widenFlowControlWindows(server, logger);
  const runFunction: grpc.handleUnaryCall<RunFunctionRequest, RunFunctionResponse> = (call, answer) => {
    runner.RunFunction(call.request, logger).then(
      (rsp) => answer(null, rsp),
      (e: Error) => answer(e),
    );
  };
  server.addService(FunctionRunnerServiceService, { runFunction });
  // The SDK's startServer logs a bind error and returns, and a process with nothing bound exits 0:
  // a function whose port is taken would look finished rather than failed. Bind here, with the
  // SDK's own credentials (TLS unless --insecure), and exit 1 on an error.
  server.bindAsync(serverOptions.address, getServerCredentials(serverOptions), (err) => {
    if (err) {
      logger.error(`server bind error: ${err.message}`);
      process.exit(1);
    }
    logger.info(`server started and listening on ${serverOptions.address}`);
  });
  logger.debug({ maxRequestBytes: opts.maxRequestBytes }, "accepting requests up to this size");

  const stop = (signal: NodeJS.Signals) => {
    logger.info(`${signal}: no new calls; answering the calls in flight, then exiting`);
    server.tryShutdown((e) => {
      if (e !== undefined) logger.error(e, "stopped with an error");
      else logger.info("stopped: every call answered");
      process.exit(e === undefined ? 0 : 1);
    });
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => stop(signal));
  return server;
}
