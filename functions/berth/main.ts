#!/usr/bin/env node
// function-berth: serves the composition function over gRPC with the standard function flags
// (--address, --insecure, --debug, --tls-server-certs-dir). TLS unless --insecure.
// BERTH_TTL_PROVISIONING and BERTH_TTL_AT_REST set the response TTLs (see ttl.ts).
import { serve } from "@crossplane-org/function-sdk-typescript";
import { runFunction } from "./function.js";
import { type ResponseTTLs, ttlsFromEnvironment } from "./ttl.js";

let ttls: ResponseTTLs;
try {
  ttls = ttlsFromEnvironment(process.env);
} catch (e) {
  process.stderr.write(`function-berth: ${(e as Error).message}\n`);
  process.exit(2);
}
serve({ RunFunction: async (req, logger) => runFunction(req, logger, ttls) }, { name: "function-berth" });
