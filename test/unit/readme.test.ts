// The README is a newcomer's first five minutes, so what it shows must be what the repository
// holds: each workspace it prints is a valid document and an abridged copy of the example file it
// names (every field it shows has the example's value), and every file its commands name exists.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { marked, type Tokens } from "marked";
import { parse, parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { parseDocument } from "../../functions/contracts/parse-document.js";
import { developerWorkspaceSchema, executionWorkspaceSchema } from "../../functions/berth/schema/documents.js";

const ROOT = resolve(import.meta.dirname, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const blocks = marked.lexer(README).filter((t): t is Tokens.Code => t.type === "code");
const SCHEMAS = { DeveloperWorkspace: developerWorkspaceSchema, ExecutionWorkspace: executionWorkspaceSchema } as const;

/** Where `shown` is not part of `full`: objects by key, and each list item somewhere in the full list. */
function notIn(shown: unknown, full: unknown, path: string): string[] {
  if (Array.isArray(shown)) {
    if (!Array.isArray(full)) return [`${path}: the example has no list here`];
    return shown.flatMap((item, i) => (full.some((f) => notIn(item, f, "").length === 0) ? [] : [`${path}[${i}]: not in the example's list`]));
  }
  if (shown !== null && typeof shown === "object") {
    if (full === null || typeof full !== "object" || Array.isArray(full)) return [`${path}: the example has no object here`];
    return Object.entries(shown).flatMap(([k, v]) => notIn(v, (full as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return shown === full ? [] : [`${path}: ${JSON.stringify(shown)} in the README, ${JSON.stringify(full)} in the example`];
}

describe("the README", () => {
  const workspaces = blocks.filter((b) => b.lang === "yaml").map((b) => parse(b.text) as { kind?: string });

  it("shows one DeveloperWorkspace and one ExecutionWorkspace, each a valid document", () => {
    expect(workspaces.map((w) => w.kind)).toEqual(["DeveloperWorkspace", "ExecutionWorkspace"]);
    for (const w of workspaces) {
      const parsed = parseDocument(SCHEMAS[w.kind as keyof typeof SCHEMAS], w);
      expect(parsed.ok ? [] : parsed.problems, w.kind).toEqual([]);
    }
  });

  it("shows each workspace as an abridged copy of the example it names", () => {
    for (const [i, w] of workspaces.entries()) {
      const before = README.slice(0, README.indexOf(blocks.filter((b) => b.lang === "yaml")[i]?.raw ?? "\0"));
      const named = [...before.matchAll(/`(examples\/[a-z-]+\.yaml)`/g)].map((m) => m[1] as string);
      const file = named.find((f) => (parse(readFileSync(join(ROOT, f), "utf8")) as { kind?: string }).kind === w.kind);
      expect(file, `the example file of the ${w.kind}`).toBeDefined();
      const example = parseAllDocuments(readFileSync(join(ROOT, file as string), "utf8"))[0]?.toJS();
      expect(notIn(w, example, w.kind ?? "")).toEqual([]);
    }
  });

  it("names only files that exist in its commands", () => {
    const files = blocks.filter((b) => b.lang === "sh").flatMap((b) => [...b.text.matchAll(/\b((?:examples|install)\/[\w./-]+)/g)].map((m) => m[1] as string));
    expect(files.length).toBeGreaterThan(3);
    expect(files.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });
});
