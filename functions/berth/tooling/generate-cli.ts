#!/usr/bin/env node
// npm run generate: writes apis/<plural>/definition.yaml and the API reference docs/api.md from
// the zod schemas, which are the single source of truth, and docs/runtime-contract.md from
// functions/contracts/runtime-contract.ts. Tests fail when the committed files
// differ from this output.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { API_REFERENCE_PATH, apiReference } from "./api-reference.js";
import { RUNTIME_CONTRACT_PATH, runtimeContractPage } from "./runtime-contract-page.js";
import { COMPOSITE_KINDS, compositeResourceDefinition } from "./xrd.js";
import { definitionYAML, definitionPath } from "./xrd-files.js";

function write(path: string, content: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  process.stdout.write(`wrote ${path}\n`);
}

const USAGE = `Usage: npm run generate [-- --help]

Writes apis/<plural>/definition.yaml (the XRDs) and docs/api.md (the API reference) from the zod
schemas in functions/berth/schema/, and docs/runtime-contract.md from
functions/contracts/runtime-contract.ts. It takes no arguments; the unit tests fail when the committed
files differ from what it writes.

Flags:
  -h, --help   print this help and write nothing
`;

let help = false;
try {
  help = parseArgs({ args: process.argv.slice(2), options: { help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false }).values.help ?? false;
} catch (error) {
  const message = (error as Error).message;
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  const positional = /^Unexpected argument '([^']+)'/.exec(message);
  process.stderr.write(`generate: ${unknown ? `unknown flag ${unknown[1]}` : positional ? `takes no arguments, given ${positional[1]}` : message.split("\n")[0]} (npm run generate -- --help)\n`);
  process.exit(1);
}
if (help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

for (const kind of COMPOSITE_KINDS) write(definitionPath(kind.plural), definitionYAML(compositeResourceDefinition(kind)));
write(API_REFERENCE_PATH, apiReference(COMPOSITE_KINDS));
write(RUNTIME_CONTRACT_PATH, runtimeContractPage());
