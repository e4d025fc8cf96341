// The gate's command line:
//
//   mcp-gate --policy FILE --listen HOST:PORT [--no-enforce]
//
// FILE is the policy Berth writes into the workspace's ConfigMap (policy.ts has its schema). A file
// that does not parse or validate exits 2 with the field at fault, so a bad ConfigMap shows in the
// pod's status rather than as a gate that lets nothing (or everything) through.
//
// --no-enforce exists for the tests' negative controls only: the gate becomes a transparent
// reverse proxy, to show that every probe the enforcing gate refuses would otherwise succeed.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { startGate } from "./gate.js";
import { parsePolicy } from "../contracts/mcp-gate-policy.js";

const USAGE = "usage: mcp-gate --policy FILE --listen HOST:PORT [--no-enforce]";

function fail(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function parseListen(value: string): { host: string; port: number } {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535) fail(2, `--listen: expected HOST:PORT, got "${value}"\n${USAGE}`);
  // [::1]:8080 names an IPv6 host; node:net wants it without the brackets.
  return { host: match[1]!.replace(/^\[(.*)\]$/, "$1"), port };
}

function readPolicy(file: string) {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    fail(2, `cannot read policy ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = parsePolicy(json);
  if (!parsed.ok) fail(2, `invalid policy ${file}:\n${parsed.problems.join("\n")}`);
  return parsed.value;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({ options: { policy: { type: "string" }, listen: { type: "string" }, "no-enforce": { type: "boolean", default: false } }, strict: true }));
  } catch (err) {
    fail(2, `${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  }
  if (values.policy === undefined || values.listen === undefined) fail(2, USAGE);
  const policy = readPolicy(values.policy);
  const log = pino({ base: { component: "mcp-gate" } });
  const enforce = !values["no-enforce"];
  let gate;
  try {
    gate = await startGate({ policy, listen: parseListen(values.listen), enforce, env: process.env, logger: log });
  } catch (err) {
    fail(1, err instanceof Error ? err.message : String(err));
  }
  log.info({ url: gate.url, enforce, servers: policy.servers.map((server) => server.name) }, "listening");
  const stop = (signal: string): void => {
    log.info({ signal }, "closing");
    gate.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

await main();
