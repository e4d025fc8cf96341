#!/usr/bin/env node
// Berth checked with the real Crossplane CLI (built by controlplane/build.sh):
//   1. `crossplane render` (Development runtime, --crossplane-binary) on every example, against
//      function-berth started here with --insecure, equals test/golden/crossplane-render-*.yaml,
//      which `npm run render` is tested against byte for byte; workspaces also converged, with
//      `-o` holding the previous reconcile's objects; and the command examples/functions.yaml
//      documents, run as written there, prints what `npm run -s render` prints;
//   2. `crossplane resource validate` accepts every rendered object, against Berth's XRDs and
//      the upstream CRDs pinned in test/upstream-crds.yaml;
//   3. `crossplane xpkg build` builds both packages (no container engine needed), the Function
//      package with the runtime image image/build.ts builds embedded in it.
//     tsx test/conformance/crossplane-cli.ts [--update] [--json <file>]
//   (--update rewrites the golden files; --json writes the pass and fail counts)
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { renderConverged } from "../../functions/berth/tooling/local-render.js";
import { renderOutput } from "../../functions/berth/tooling/render-output.js";
import { loadObject, loadObjects } from "../fixtures.js";
import { RENDER_EXAMPLES } from "../render-examples.js";
import { startFunction } from "../support/function-process.js";
import { installedFunction } from "../support/function-name.js";
import { upstreamCRDs } from "../support/upstream-crds.js";
import { findBinDir } from "./controlplane/controlplane.js";
import { buildFunctionImage, defaultImageName } from "../../image/build.js";
import { embeddedImageProblems } from "../../image/xpkg.js";
import { SHIPPED_ENTRY } from "../../image/shipped.js";

const bin = findBinDir();
const cli = join(bin, "crossplane-cli");
const core = join(bin, "crossplane");
const update = process.argv.includes("--update");
const dir = mkdtempSync(join(tmpdir(), "berth-crossplane-cli-"));
const crds = await upstreamCRDs();
if (!crds.available) throw new Error(`crossplane resource validate needs the upstream CRDs: ${crds.reason}`);
console.log(`upstream CRDs: ${crds.source}`);

let passed = 0;
let failed = 0;
function outcome(ok: boolean, what: string, detail = "") {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok     " : "FAILED "} ${what}${detail ? `\n${detail}` : ""}`);
}
function run(args: string[]): { ok: boolean; out: string } {
  try {
    return { ok: true, out: execFileSync(cli, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }) };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

// 1. render ---------------------------------------------------------------------------------
const fn = await startFunction({ insecure: true });
const functions = join(dir, "functions.yaml");
writeFileSync(
  functions,
  `apiVersion: pkg.crossplane.io/v1
kind: Function
metadata:
  name: ${installedFunction().name}
  annotations:
    render.crossplane.io/runtime: Development
    render.crossplane.io/runtime-development-target: ${fn.address}
spec:
  package: xpkg.crossplane.io/berth-dev/function-berth:v0.1.0
`,
);
const rendered: string[] = [];
function compare(name: string, output: { ok: boolean; out: string }) {
  const golden = `test/golden/crossplane-render-${name}.yaml`;
  if (!output.ok) return outcome(false, `crossplane render ${name}`, output.out);
  rendered.push(output.out);
  if (update) writeFileSync(golden, output.out);
  outcome(update || output.out === readFileSync(golden, "utf8"), `crossplane render ${name} ${update ? `wrote ${golden}` : `equals ${golden}`}`);
}
try {
  for (const example of RENDER_EXAMPLES) {
    const required = join(dir, `${example.name}-required.yaml`);
    writeFileSync(required, example.required.map((f) => readFileSync(f, "utf8")).join("\n---\n"));
    const args = ["render", example.document, example.composition, functions, "--crossplane-binary", core, ...(example.required.length > 0 ? ["-e", required] : [])];
    compare(example.name, run(args));
    if (example.converge) {
      // The reconcile before the last, as the cluster would hold it, is what render observes.
      const xr = loadObject(example.document);
      const reconciles = await renderConverged(xr, example.required.flatMap(loadObjects));
      const observed = join(dir, `${example.name}-observed.yaml`);
      writeFileSync(observed, renderOutput(xr, reconciles.at(-2)!.response).split(/^---\n/m).slice(2).join("---\n"));
      compare(`${example.name}-converged`, run([...args, "-o", observed]));
    }
  }
} finally {
  await fn.stop();
}

// 1b. the command examples/functions.yaml documents, as it is written there -------------------
// The function started as the comment says (npm start -- --insecure, on 9443, the port
// examples/functions.yaml targets, unedited), then its `crossplane render` line with the
// Crossplane CLI built here, plus --crossplane-binary (no Docker here): it must print what
// `npm run -s render` prints for the same files.
{
  const comment = readFileSync("examples/functions.yaml", "utf8");
  const documented = (prefix: string) => new RegExp(`^#\\s+(${prefix} .*)$`, "m").exec(comment)?.[1];
  const start = documented("npm start");
  const command = documented("crossplane render");
  if (start === undefined || command === undefined) outcome(false, "examples/functions.yaml documents `npm start ...` and `crossplane render ...`");
  else {
    const server = spawn("sh", ["-c", start], { detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    server.stdout!.on("data", (d) => (log += d));
    server.stderr!.on("data", (d) => (log += d));
    try {
      const listening = await new Promise<boolean>((resolve) => {
        const done = (ok: boolean) => {
          clearTimeout(timer);
          clearInterval(check);
          resolve(ok);
        };
        const timer = setTimeout(() => done(false), 30_000);
        const check = setInterval(() => log.includes("listening") && done(true), 50);
        server.once("exit", () => done(false));
      });
      if (!listening) outcome(false, `${start}: the function did not start listening`, log);
      else {
        const [, , ...args] = command.split(/\s+/);
        const ours = run(["render", ...args, `--crossplane-binary=${core}`]);
        const files = args.filter((a) => a.endsWith(".yaml"));
        const required = args.flatMap((a, i) => (args[i - 1] === "--required-resources" ? ["--required", a] : []));
        const npm = execFileSync("npm", ["run", "-s", "render", "--", files[0]!, ...required], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
        outcome(ours.ok && ours.out === npm, `examples/functions.yaml's command (${command}) prints what npm run -s render prints`, ours.ok ? "" : ours.out);
      }
    } finally {
      if (server.pid !== undefined && server.exitCode === null) {
        const exited = new Promise((resolve) => server.once("exit", resolve));
        process.kill(-server.pid, "SIGTERM");
        await exited;
      }
    }
  }
}

// 2. resource validate ----------------------------------------------------------------------
const extensions = join(dir, "extensions");
mkdirSync(extensions);
for (const plural of readdirSync("apis")) copyFileSync(join("apis", plural, "definition.yaml"), join(extensions, `${plural}.yaml`));
for (const crd of crds.paths) copyFileSync(crd, join(extensions, basename(crd)));
rendered.forEach((output, i) => {
  // render prints only the XR's status, not its spec: validate the composed resources.
  const composed = output.split(/^---\n/m).slice(2);
  if (composed.length === 0) return;
  const file = join(dir, `rendered-${i}.yaml`);
  writeFileSync(file, composed.map((d) => `---\n${d}`).join(""));
  const result = run(["resource", "validate", "--crossplane-image=", extensions, file]);
  outcome(result.ok && /0 missing schemas, \d+ success cases, 0 failure cases/.test(result.out), `crossplane resource validate: ${composed.length} objects of render ${i + 1}`, result.ok ? "" : result.out);
});

// 3. xpkg build -----------------------------------------------------------------------------
const configurationRoot = join(dir, "configuration");
mkdirSync(configurationRoot);
for (const p of ["crossplane.yaml", "apis", "compositions", "operations", "examples"]) cpSync(p, join(configurationRoot, basename(p)), { recursive: true });
const configuration = run(["xpkg", "build", "-f", configurationRoot, "--examples-root", join(configurationRoot, "examples"), "-o", join(dir, "configuration-berth.xpkg")]);
outcome(configuration.ok, "crossplane xpkg build: configuration-berth", configuration.out);
// The Function package carries its runtime image: the one image/build.ts builds without Docker.
if (!existsSync(SHIPPED_ENTRY)) execFileSync("npm", ["run", "-s", "bundle"], { stdio: "inherit" });
const image = await buildFunctionImage({ name: defaultImageName() });
const imageTarball = join(dir, "function-berth.oci.tar");
writeFileSync(imageTarball, image.archive);
const fnXpkg = join(dir, "function-berth.xpkg");
const fnPackage = run(["xpkg", "build", "-f", "package", `--embed-runtime-image-tarball=${imageTarball}`, "-o", fnXpkg]);
outcome(fnPackage.ok, `crossplane xpkg build: function-berth, with the runtime image ${image.digest} embedded`, fnPackage.out);
if (fnPackage.ok) {
  const problems = await embeddedImageProblems(readFileSync(fnXpkg), image);
  outcome(problems.length === 0, "function-berth.xpkg: the image's layers and ENTRYPOINT, then the package's own layers", problems.join("\n"));
}

console.log(`${passed} passed, ${failed} failed`);
// --json <file>: the counts in the shape of vitest's JSON report, for .ci/summary.mjs.
const json = process.argv.indexOf("--json");
if (json >= 0 && process.argv[json + 1]) {
  writeFileSync(process.argv[json + 1]!, JSON.stringify({ numPassedTests: passed, numFailedTests: failed, numPendingTests: 0, numTodoTests: 0 }));
}
rmSync(dir, { recursive: true, force: true });
process.exitCode = failed > 0 ? 1 : 0;
