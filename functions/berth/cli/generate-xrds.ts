#!/usr/bin/env node
// npm run generate: writes apis/<plural>/definition.yaml from the zod schemas, which are the
// single source of truth. A test fails when the committed files differ from this output.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMPOSITE_KINDS, compositeResourceDefinition } from "../xrd.js";
import { definitionYAML, definitionPath } from "../xrd-files.js";

for (const kind of COMPOSITE_KINDS) {
  const path = definitionPath(kind.plural);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, definitionYAML(compositeResourceDefinition(kind)));
  process.stdout.write(`wrote ${path}\n`);
}
