#!/usr/bin/env node
// npm run -s render -- <document.yaml> [--required <objects.yaml>]... [--observed <objects.yaml>]... [--converge] [-r]
// Renders a workspace document locally, with no cluster, and prints what `crossplane render`
// prints for it. A workspace's first reconcile creates only its Namespace; --converge renders
// reconcile after reconcile, each seeing what the last asked for, and prints the last: what
// `crossplane render -o <the previous reconcile's objects>` prints. Stdout holds the YAML alone;
// notes (a --required file the render lacks, what a local status means) go to stderr.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs as parseFlags } from "node:util";
import { parseAllDocuments } from "yaml";
import { fatalMessages, type LocalRender, renderConverged, renderLocally } from "./local-render.js";
import type { KubeObject } from "../model.js";
import { renderOutput } from "./render-output.js";
import { describeSelector, localStatusNote, notFoundNote, suggestRequired } from "./render-notes.js";

const EXAMPLES = resolve(dirname(fileURLToPath(import.meta.url)), "../../../examples");

export const USAGE = `Usage: npm run -s render -- <document.yaml> [flags]

Renders a Berth document (DeveloperWorkspace, ExecutionWorkspace, WorkspaceProfile,
ExecutionWorkspaceClass, WorkspaceCheckpoint) locally, with no cluster, and prints on stdout
the YAML stream \`crossplane render\` prints for it: the XR with its status first, then every
composed resource. Notes go to stderr. Use npm run -s: without it npm prints its own banner
("> berth@0.1.0 render") on stdout, before the YAML.

Flags:
  -e, --required <file>   objects the function's required resources are answered from (a
                          profile, a class, a StorageClass, Services), as crossplane render's
                          --required-resources; repeat it for more files
  -o, --observed <file>   observed composed resources, each annotated with
                          crossplane.io/composition-resource-name, as crossplane render's
                          --observed-resources; repeat it for more files
      --converge          render reconcile after reconcile, each observing what the last asked
                          for, until nothing changes, and print the last (a first reconcile
                          creates only the Namespace); not with --observed
  -r, --include-function-results
                          also print the function's results, as kind: Result
  -h, --help              print this help

Examples:
  A DeveloperWorkspace, converged:
    npm run -s render -- examples/developerworkspace-persistent.yaml --converge \\
      --required examples/profile.yaml --required examples/cluster/storageclass.yaml \\
      --required examples/cluster/services.yaml

  An ExecutionWorkspace on the operators' sandbox class, converged:
    npm run -s render -- examples/executionworkspace-sandbox.yaml --converge \\
      --required examples/class-sandbox.yaml --required examples/profile.yaml \\
      --required examples/cluster/storageclass.yaml --required examples/cluster/services.yaml
`;

const FLAGS = {
  required: { type: "string", short: "e", multiple: true },
  observed: { type: "string", short: "o", multiple: true },
  "include-function-results": { type: "boolean", short: "r" },
  converge: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

class UsageError extends Error {}

function readObjects(path: string): KubeObject[] {
  return parseAllDocuments(readFileSync(path, "utf8"))
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${path}: ${d.errors[0]!.message}`);
      return d.toJS() as KubeObject | null;
    })
    .filter((o): o is KubeObject => o !== null && typeof o === "object");
}

function parseArgs(argv: string[]) {
  let parsed;
  try {
    parsed = parseFlags({ args: argv, options: FLAGS, strict: true, allowPositionals: true });
  } catch (error) {
    const message = (error as Error).message;
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    if (unknown) throw new UsageError(`unknown flag ${unknown[1]}`);
    const missing = /^Option '(?:-\w, )?(--?[\w-]+)(?: <value>)?' argument (missing|is ambiguous)/.exec(message);
    if (missing) {
      const long = Object.entries(FLAGS).find(([, f]) => "short" in f && `-${f.short}` === missing[1])?.[0];
      throw new UsageError(`${long ? `--${long}` : missing[1]} needs a file`);
    }
    throw new UsageError(message.split("\n")[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true as const };
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? "give the document to render" : `give one document to render, not ${positionals.length}: ${positionals.join(" ")}`);
  const observed = values.observed ?? [];
  if (values.converge && observed.length > 0) throw new UsageError("--converge and --observed do not go together: --converge computes what is observed");
  return { help: false as const, document: positionals[0]!, required: values.required ?? [], observed, results: values["include-function-results"] ?? false, converge: values.converge ?? false };
}

function note(line: string) {
  process.stderr.write(`render: ${line}\n`);
}

/** Every example file, to name the ones a render lacks. */
function exampleFiles() {
  const yaml = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort().map((f) => join(dir, f));
  return [...yaml(EXAMPLES), ...yaml(join(EXAMPLES, "cluster"))].map((path) => ({ path: relative(process.cwd(), path), objects: readObjects(path) }));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(USAGE);
    return;
  }
  // npm prints "> berth@0.1.0 render" on stdout unless run with -s: say so when stdout is a file or pipe.
  if (process.env.npm_lifecycle_event === "render" && process.env.npm_config_loglevel !== "silent" && !process.stdout.isTTY) {
    note("npm printed its banner (> berth@0.1.0 render) on stdout, before the YAML: `npm run -s render` leaves it out");
  }
  const [composite, ...extra] = readObjects(args.document);
  if (composite === undefined || extra.length > 0) throw new Error(`${args.document}: expected exactly one document`);
  const cluster = args.required.flatMap(readObjects);
  const observed: Record<string, KubeObject> = {};
  for (const o of args.observed.flatMap(readObjects)) {
    const name = (o.metadata?.annotations as Record<string, string> | undefined)?.["crossplane.io/composition-resource-name"];
    if (name === undefined) throw new Error(`observed ${o.kind} "${o.metadata?.name}" has no crossplane.io/composition-resource-name annotation`);
    observed[name] = o;
  }
  const render = async (objects: KubeObject[]): Promise<LocalRender> =>
    args.converge ? (await renderConverged(composite, objects)).at(-1)! : await renderLocally(composite, objects, observed);
  const { response } = await render(cluster);
  const fatal = fatalMessages(response);
  if (fatal.length > 0) {
    process.stderr.write(`crossplane: error: ${fatal.join("\n")}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(renderOutput(composite, response, { includeResults: args.results }));
  const { missing, files } = await suggestRequired(render, cluster, exampleFiles());
  if (files.length > 0) {
    note(`no --required file holds ${missing.map(describeSelector).join(", ")}, which this render requires; the examples that answer it and what it requires next: ${files.map((f) => `--required ${f}`).join(" ")}`);
  } else {
    const line = notFoundNote(response) ?? localStatusNote(response);
    if (line !== undefined) note(line);
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`render: ${message}${error instanceof UsageError ? " (npm run render -- --help lists the flags)" : ""}\n`);
  process.exitCode = 1;
});
