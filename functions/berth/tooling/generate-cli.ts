#!/usr/bin/env node
// npm run generate: writes apis/<plural>/definition.yaml and the API reference docs/api.md from
// the zod schemas, which are the single source of truth. Tests fail when the committed files
// differ from this output.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { API_REFERENCE_PATH, apiReference } from "./api-reference.js";
import { COMPOSITE_KINDS, compositeResourceDefinition } from "./xrd.js";
import { definitionYAML, definitionPath } from "./xrd-files.js";

function write(path: string, content: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  process.stdout.write(`wrote ${path}\n`);
}

for (const kind of COMPOSITE_KINDS) write(definitionPath(kind.plural), definitionYAML(compositeResourceDefinition(kind)));
write(API_REFERENCE_PATH, apiReference(COMPOSITE_KINDS));
