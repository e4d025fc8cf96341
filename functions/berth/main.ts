#!/usr/bin/env node
// function-berth: serves the composition function over gRPC with the standard function flags
// (--address, --insecure, --debug, --tls-server-certs-dir). TLS unless --insecure.
// BERTH_TTL_PROVISIONING, BERTH_TTL_AT_REST and BERTH_TTL_WATCH_CIRCUIT_OPEN set the response TTLs (see ttl.ts),
// BERTH_MAX_REQUEST_SIZE the largest request it accepts (see serve.ts).
import { runFunction } from "./function.js";
import { maxRequestBytesFromEnvironment, serveFunction } from "./serve.js";
import { type ResponseTTLs, ttlsFromEnvironment } from "./respond/ttl.js";

let ttls: ResponseTTLs;
let maxRequestBytes: number;
try {
  ttls = ttlsFromEnvironment(process.env);
  maxRequestBytes = maxRequestBytesFromEnvironment(process.env);
} catch (e) {
  process.stderr.write(`function-berth: ${(e as Error).message}\n`);
  process.exit(2);
}
serveFunction({ RunFunction: async (req, logger) => runFunction(req, logger, ttls) }, { name: "function-berth", maxRequestBytes });
