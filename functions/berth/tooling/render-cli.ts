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
import { Ready, type RunFunctionResponse } from "@crossplane-org/function-sdk-typescript";
import { fatalMessages, type LocalRender, matches, renderConverged, renderLocally, type Selector } from "./local-render.js";
import type { KubeObject } from "../model.js";
import { renderOutput } from "./render-output.js";


const EXAMPLES = resolve(dirname(fileURLToPath(import.meta.url)), "../../../examples");

const USAGE = `Usage: npm run -s render -- <document.yaml> [flags]

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

// What the render says on stderr beside the YAML on stdout: which --required files it lacks
// (found among the examples), and that a local render's status is what a cluster shows before
// the objects' controllers have made them Ready.

/** The required resources the function asked for and the files answered with nothing. */
function unansweredRequirements(render: LocalRender): Selector[] {
  const wanted = render.response.requirements?.resources ?? {};
  return Object.entries(wanted)
    .filter(([key, selector]) => selector !== undefined && (render.request.requiredResources[key]?.items.length ?? 0) === 0)
    .map(([, selector]) => selector as Selector);
}

function describeSelector(s: Selector): string {
  const labels = s.matchLabels?.labels;
  const what = labels !== undefined ? `labelled ${Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(",")}` : `"${s.matchName}"`;
  return `${s.kind} ${what}${s.namespace ? ` in ${s.namespace}` : ""}`;
}

interface CandidateFile {
  path: string;
  objects: KubeObject[];
}

/**
 * The files among `candidates` (the examples) that answer what a render requires and the files
 * did not: added one round at a time, since a requirement answered can bring the next (a class
 * names its profile, a profile its StorageClass). `missing` is what the first render lacked.
 */
export async function suggestRequired(
  render: (cluster: KubeObject[]) => Promise<LocalRender>,
  given: readonly KubeObject[],
  candidates: readonly CandidateFile[],
): Promise<{ missing: Selector[]; files: string[] }> {
  const files: string[] = [];
  let cluster = [...given];
  let missing: Selector[] | undefined;
  for (let round = 0; round < 5; round++) {
    const lacking = unansweredRequirements(await render(cluster));
    const answering = candidates.filter((c) => !files.includes(c.path) && c.objects.some((o) => lacking.some((s) => matches(o, s))));
    missing ??= lacking.filter((s) => answering.some((c) => c.objects.some((o) => matches(o, s))));
    if (answering.length === 0) break;
    files.push(...answering.map((c) => c.path));
    cluster = [...cluster, ...answering.flatMap((c) => c.objects)];
  }
  return { missing: missing ?? [], files };
}

type Status = { phase?: string; reason?: string; message?: string };

function compositeStatus(response: RunFunctionResponse): Status {
  return ((response.desired?.composite?.resource as { status?: Status } | undefined)?.status ?? {}) as Status;
}

/** The one line for a render whose required objects were not all given and no example holds them. */
function notFoundNote(response: RunFunctionResponse): string | undefined {
  const status = compositeStatus(response);
  if (!status.reason?.endsWith("NotFound")) return undefined;
  return `${status.message ?? status.reason}: give the file that holds it with --required <file> (npm run render -- --help)`;
}

/** Whether Crossplane would call the XR Ready: the function says so, or every composed object is. */
function compositeReady(response: RunFunctionResponse): boolean {
  const ready = response.desired?.composite?.ready ?? Ready.READY_UNSPECIFIED;
  if (ready !== Ready.READY_UNSPECIFIED) return ready === Ready.READY_TRUE;
  return Object.values(response.desired?.resources ?? {}).every((r) => r.ready === Ready.READY_TRUE);
}

/**
 * The one line for a render that is not Ready: rendered with no cluster, nothing has made the
 * composed objects Ready, so the status is what a cluster shows until something has.
 */
function localStatusNote(response: RunFunctionResponse): string | undefined {
  if (compositeReady(response)) return undefined;
  const phase = compositeStatus(response).phase;
  return `no cluster, so no object is Ready: the status${phase ? ` (phase ${phase})` : ""} is what a cluster shows until they are`;
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
