#!/usr/bin/env node
// function-berth: serves the composition function over gRPC with the standard function flags
// (--address, --insecure, --debug, --tls-server-certs-dir). TLS unless --insecure.
import { serve } from "@crossplane-org/function-sdk-typescript";
import { runFunction } from "./function.js";

serve({ RunFunction: async (req, logger) => runFunction(req, logger) }, { name: "function-berth" });
