#!/usr/bin/env node
// npm run render -- <document.yaml> [--required <objects.yaml>]... [--observed <objects.yaml>]...
// Renders a workspace document locally, with no cluster, and prints what `crossplane render`
// prints for it.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { fatalMessages, renderLocally } from "../local-render.js";
import type { KubeObject } from "../model.js";
import { renderOutput } from "../render-output.js";

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
    else if (arg.startsWith("-")) throw new Error(`unknown flag ${arg}`);
    else documents.push(arg);
  }
  if (documents.length !== 1) throw new Error("usage: npm run render -- <document.yaml> [--required <objects.yaml>]... [--observed <objects.yaml>]... [-r]");
  return { document: documents[0]!, required, observed, results };
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
  const { response } = await renderLocally(composite, cluster, observed);
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
