import * as grpc from "@grpc/grpc-js";
import { type FunctionHandler, FunctionRunner, FunctionRunnerServiceService, helpText, parseArgs, startServer } from "@crossplane-org/function-sdk-typescript";
import { pino } from "pino";

/**
 * The largest request the function accepts, in bytes. A composition request carries one
 * workspace and the few objects it requires: tens of KB. The lifecycle Operation's request
 * carries every ExecutionWorkspace and class as the API server returns them, managedFields
 * included: about 8.5 KB per workspace, so gRPC's default bound (4 MiB, the SDKs' default too)
 * refused it above about 450 workspaces. 64 MiB fits about 7,500; `npm run bench:lifecycle`
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
 * Serves a function the way the SDK's `serve` does (the standard flags, TLS unless --insecure,
 * SIGTERM answers the calls in flight and then exits 0), with one difference the SDK does not
 * offer: the gRPC server's receive bound.
 */
export function serveFunction(handler: FunctionHandler, opts: { name: string; maxRequestBytes: number }): grpc.Server {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${opts.name}: ${(e as Error).message}\nTry '${opts.name} --help' for the available flags.\n`);
    process.exit(2);
  }
  const { help, ...serverOptions } = args;
  if (help) {
    process.stdout.write(`${helpText(opts.name)}\n\nEnvironment: ${MAX_REQUEST_ENV} (default 64Mi), BERTH_TTL_PROVISIONING (60s), BERTH_TTL_AT_REST (15m).\n`);
    process.exit(0);
  }
  const logger = pino({ level: serverOptions.debug ? "debug" : "info", formatters: { level: (label) => ({ severity: label.toUpperCase() }) } });
  const runner = new FunctionRunner(handler, logger);
  const server = new grpc.Server({ "grpc.max_receive_message_length": opts.maxRequestBytes });
  server.addService(FunctionRunnerServiceService, {
    runFunction: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      runner.RunFunction(call.request, logger).then(
        (rsp) => callback(null, rsp),
        (e: Error) => callback(e),
      );
    },
  });
  startServer(server, serverOptions, logger);
  logger.debug({ maxRequestBytes: opts.maxRequestBytes }, "serving");
  const shutdown = (signal: string) => {
    logger.info(`received ${signal}, shutting down`);
    server.tryShutdown((err) => {
      if (err) {
        logger.error(err, "error during shutdown");
        process.exit(1);
      }
      logger.info("server shut down");
      process.exit(0);
    });
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  return server;
}
