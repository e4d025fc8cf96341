#!/usr/bin/env node
// Runs the real `crossplane render` (Development runtime, --crossplane-binary) on every example
// against function-berth started here with --insecure, and compares its output with
// test/golden/crossplane-render-<name>.yaml, which `npm run render` is tested against.
//   tsx test/conformance/render.ts --cli <crossplane CLI> --core <crossplane core> [--update]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderConverged } from "../../functions/berth/local-render.js";
import { renderOutput } from "../../functions/berth/render-output.js";
import { loadObject, loadObjects } from "../fixtures.js";
import { RENDER_EXAMPLES } from "../render-examples.js";
import { startFunction } from "../support/function-process.js";

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const cli = flag("--cli");
const core = flag("--core");
const update = process.argv.includes("--update");
if (!cli || !core) throw new Error("usage: render.ts --cli <crossplane CLI> --core <crossplane core binary> [--update]");

const fn = await startFunction({ insecure: true });
const dir = mkdtempSync(join(tmpdir(), "berth-render-"));
const functions = join(dir, "functions.yaml");
writeFileSync(
  functions,
  `apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: function-berth
  annotations:
    render.crossplane.io/runtime: Development
    render.crossplane.io/runtime-development-target: ${fn.address}
spec:
  package: xpkg.crossplane.io/berth-dev/function-berth:v0.1.0
`,
);

let differ = 0;
let checked = 0;
try {
  const check = (name: string, output: string) => {
    const golden = `test/golden/crossplane-render-${name}.yaml`;
    if (update) {
      writeFileSync(golden, output);
      console.log(`wrote ${golden}`);
    } else if (output !== readFileSync(golden, "utf8")) {
      differ++;
      console.log(`DIFFERS ${name}: crossplane render no longer prints ${golden}`);
    } else {
      console.log(`same    ${name}`);
    }
    checked++;
  };
  for (const example of RENDER_EXAMPLES) {
    const required = join(dir, `${example.name}-required.yaml`);
    writeFileSync(required, example.required.map((f) => readFileSync(f, "utf8")).join("\n---\n"));
    const args = ["render", example.document, example.composition, functions, "--crossplane-binary", core, ...(example.required.length > 0 ? ["-e", required] : [])];
    check(example.name, execFileSync(cli, args, { encoding: "utf8" }));
    if (example.converge) {
      // The reconcile before the last, as the cluster would hold it: crossplane render -o.
      const xr = loadObject(example.document);
      const reconciles = await renderConverged(xr, example.required.flatMap(loadObjects));
      const observed = join(dir, `${example.name}-observed.yaml`);
      writeFileSync(observed, renderOutput(xr, reconciles.at(-2)!.response).split(/^---\n/m).slice(2).join("---\n"));
      check(`${example.name}-converged`, execFileSync(cli, [...args, "-o", observed], { encoding: "utf8" }));
    }
  }
} finally {
  await fn.stop();
}
console.log(`${checked - differ} passed, ${differ} failed`);
process.exitCode = differ > 0 ? 1 : 0;
