#!/usr/bin/env node
// npm run render -- <document.yaml> [--required <objects.yaml>]... [--observed <objects.yaml>]... [--converge] [-r]
// Renders a workspace document locally, with no cluster, and prints what `crossplane render`
// prints for it. A workspace's first reconcile creates only its Namespace; --converge renders
// reconcile after reconcile, each seeing what the last asked for, and prints the last: what
// `crossplane render -o <the previous reconcile's objects>` prints.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { fatalMessages, renderConverged, renderLocally } from "./local-render.js";
import type { KubeObject } from "../model.js";
import { renderOutput } from "./render-output.js";

function readObjects(path: string): KubeObject[] {
  return parseAllDocuments(readFileSync(path, "utf8"))
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`${path}: ${d.errors[0]!.message}`);
      return d.toJS() as KubeObject | null;
    })
    .filter((o): o is KubeObject => o !== null && typeof o === "object");
}

function parseArgs(argv: string[]) {
  const documents: string[] = [];
  const required: string[] = [];
  const observed: string[] = [];
  let results = false;
  let converge = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a file`);
      return v;
    };
    if (arg === "--required" || arg === "-e") required.push(value());
    else if (arg === "--observed" || arg === "-o") observed.push(value());
    else if (arg === "--include-function-results" || arg === "-r") results = true;
    else if (arg === "--converge") converge = true;
    else if (arg.startsWith("-")) throw new Error(`unknown flag ${arg}`);
    else documents.push(arg);
  }
  if (documents.length !== 1) throw new Error("usage: npm run render -- <document.yaml> [--required <objects.yaml>]... [--observed <objects.yaml>]... [--converge] [-r]");
  if (converge && observed.length > 0) throw new Error("--converge and --observed do not go together: --converge computes what is observed");
  return { document: documents[0]!, required, observed, results, converge };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const [composite, ...extra] = readObjects(args.document);
  if (composite === undefined || extra.length > 0) throw new Error(`${args.document}: expected exactly one document`);
  const cluster = args.required.flatMap(readObjects);
  const observed: Record<string, KubeObject> = {};
  for (const o of args.observed.flatMap(readObjects)) {
    const name = (o.metadata?.annotations as Record<string, string> | undefined)?.["crossplane.io/composition-resource-name"];
    if (name === undefined) throw new Error(`observed ${o.kind} "${o.metadata?.name}" has no crossplane.io/composition-resource-name annotation`);
    observed[name] = o;
  }
  const { response } = args.converge ? (await renderConverged(composite, cluster)).at(-1)! : await renderLocally(composite, cluster, observed);
  const fatal = fatalMessages(response);
  if (fatal.length > 0) {
    process.stderr.write(`crossplane: error: ${fatal.join("\n")}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(renderOutput(composite, response, { includeResults: args.results }));
}

main().catch((error: unknown) => {
  process.stderr.write(`render: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
