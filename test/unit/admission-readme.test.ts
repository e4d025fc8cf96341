// admission/README.md's table of policies is the operator's list of what ships: it must name
// every ValidatingAdmissionPolicy in admission/policies.yaml, no other, and for each the
// bindings policies.yaml holds for it. A policy added, renamed or dropped fails here until the
// table says so.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const ROOT = resolve(import.meta.dirname, "../..");

interface Manifest {
  kind?: string;
  metadata?: { name?: string };
  spec?: { policyName?: string };
}

/** The ValidatingAdmissionPolicies of policies.yaml, each with the names of its bindings there. */
function policiesOf(text: string): Map<string, string[]> {
  const docs = parseAllDocuments(text).map((d) => d.toJS() as Manifest | null).filter((d): d is Manifest => d !== null);
  const out = new Map<string, string[]>();
  for (const d of docs) if (d.kind === "ValidatingAdmissionPolicy") out.set(d.metadata!.name!, []);
  for (const d of docs) {
    if (d.kind !== "ValidatingAdmissionPolicyBinding") continue;
    const bound = out.get(d.spec!.policyName!);
    if (bound === undefined) throw new Error(`binding ${d.metadata?.name} names no policy of policies.yaml: ${d.spec?.policyName}`);
    bound.push(d.metadata!.name!);
  }
  return out;
}

/** The code spans of a table cell, as written. */
function codeSpans(cell: Tokens.TableCell): string[] {
  const out: string[] = [];
  marked.walkTokens(cell.tokens, (t) => {
    if (t.type === "codespan") out.push((t as Tokens.Codespan).text);
  });
  return out;
}

/** The README's policy table: each row's policy (its first cell's code span) and the code spans of its binding cell. */
function tableOf(markdown: string): Map<string, string[]> {
  const tables = marked.lexer(markdown).filter((t): t is Tokens.Table => t.type === "table" && t.header[0]?.text === "policy");
  if (tables.length !== 1) throw new Error(`want one table whose first column is "policy", found ${tables.length}`);
  const table = tables[0]!;
  const bindingColumn = table.header.findIndex((h) => h.text === "binding");
  if (bindingColumn < 0) throw new Error('the policy table has no "binding" column');
  const out = new Map<string, string[]>();
  for (const row of table.rows) {
    const names = codeSpans(row[0]!);
    if (names.length !== 1) throw new Error(`a row's policy cell must name one policy in backticks: ${JSON.stringify(row[0]!.text)}`);
    if (out.has(names[0]!)) throw new Error(`policy ${names[0]} is listed twice`);
    out.set(names[0]!, codeSpans(row[bindingColumn]!));
  }
  return out;
}

/** What differs between policies.yaml and the table, one line each; empty when they agree. */
function differences(policies: Map<string, string[]>, table: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const name of policies.keys()) if (!table.has(name)) out.push(`${name}: in policies.yaml, missing from the table`);
  for (const name of table.keys()) if (!policies.has(name)) out.push(`${name}: in the table, no such policy in policies.yaml`);
  for (const [name, bindings] of policies) {
    const cell = table.get(name);
    if (cell === undefined) continue;
    for (const b of bindings) if (!cell.includes(b)) out.push(`${name}: its binding ${b} is not named in its row`);
    // A name in the binding cell that looks like a binding (no placeholder) must be one of this policy's.
    for (const b of cell) if (/^berth-[a-z0-9-]+$/.test(b) && !bindings.includes(b)) out.push(`${name}: its row names the binding ${b}, which policies.yaml does not hold for it`);
  }
  return out;
}

const POLICIES = readFileSync(join(ROOT, "admission/policies.yaml"), "utf8");
const README = readFileSync(join(ROOT, "admission/README.md"), "utf8");

describe("admission/README.md's policy table", () => {
  it("names every policy of policies.yaml, no other, each with its bindings", () => {
    const policies = policiesOf(POLICIES);
    expect(policies.size).toBeGreaterThan(0);
    expect(differences(policies, tableOf(README))).toEqual([]);
  });

  it("fails on a policy missing from the table, a table row naming none, and a binding not named", () => {
    const policies = new Map([["berth-a", ["berth-a"]], ["berth-b", []]]);
    expect(differences(policies, new Map([["berth-a", ["berth-a"]]]))).toEqual(["berth-b: in policies.yaml, missing from the table"]);
    expect(differences(policies, new Map([["berth-a", ["berth-a"]], ["berth-b", []], ["berth-c", []]]))).toEqual(["berth-c: in the table, no such policy in policies.yaml"]);
    expect(differences(policies, new Map([["berth-a", []], ["berth-b", ["berth-b"]]]))).toEqual([
      "berth-a: its binding berth-a is not named in its row",
      "berth-b: its row names the binding berth-b, which policies.yaml does not hold for it",
    ]);
    expect(differences(policies, new Map([["berth-a", ["berth-a"]], ["berth-b", ["berth-class-<class>"]]]))).toEqual([]);
  });
});
