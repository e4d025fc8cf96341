// docs/code-layout.md is how a contributor finds the flow, so it must be the tree: every source
// folder under functions/ has its row, every file of the folder is named in that row, every name
// in a row is a file of that folder, and every folder at the top of the repository is on the page.
// A file added, moved or deleted without the page fails here.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const PAGE = readFileSync(join(ROOT, "docs/code-layout.md"), "utf8");

/** The page's table rows: the folder of the first cell, and the backticked names in the rest. */
function rows(): { folder: string; names: string[] }[] {
  const out: { folder: string; names: string[] }[] = [];
  marked.walkTokens(marked.lexer(PAGE), (t) => {
    if (t.type !== "table") return;
    for (const row of (t as Tokens.Table).rows) {
      const folder = /^`([^`]+\/)`$/.exec(row[0]?.text.trim() ?? "")?.[1];
      if (folder === undefined) continue;
      out.push({ folder, names: [...(row[1]?.text ?? "").matchAll(/`([^`/]+\.ts)`/g)].map((m) => m[1] as string) });
    }
  });
  return out;
}

/** Every folder under functions/ that holds TypeScript, with its own files (not its subfolders'). */
function sourceFolders(): Map<string, string[]> {
  const folders = new Map<string, string[]>();
  for (const file of readdirSync(join(ROOT, "functions"), { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".ts")) continue;
    const at = file.lastIndexOf("/");
    const folder = `functions/${at < 0 ? "" : `${file.slice(0, at)}/`}`;
    folders.set(folder, [...(folders.get(folder) ?? []), file.slice(at + 1)]);
  }
  return folders;
}

const IGNORED = new Set(readFileSync(join(ROOT, ".gitignore"), "utf8").split("\n").map((l) => l.trim().replace(/\/$/, "")).filter(Boolean));

describe("docs/code-layout.md", () => {
  const table = rows();
  const byFolder = new Map(table.map((r) => [r.folder, r.names]));

  it("has a row for every source folder under functions/, and for no other", () => {
    const folders = [...sourceFolders().keys()].sort();
    expect(folders.length).toBeGreaterThan(5);
    expect(table.map((r) => r.folder).filter((f) => f.startsWith("functions/") && f !== "functions/").sort()).toEqual(folders);
  });

  it("names in each folder's row exactly the files of that folder", () => {
    const wrong = [...sourceFolders()].flatMap(([folder, files]) => {
      const named = new Set(byFolder.get(folder) ?? []);
      return [
        ...files.filter((f) => !named.has(f)).map((f) => `${folder}${f} is not named in its row`),
        ...[...named].filter((n) => !files.includes(n)).map((n) => `${folder}${n} is named but does not exist`),
      ];
    });
    expect(wrong).toEqual([]);
  });

  it("names every folder at the top of the repository, and only folders that exist", () => {
    const top = readdirSync(ROOT, { withFileTypes: true })
      .filter((e) => e.isDirectory() && e.name !== ".git" && !IGNORED.has(e.name))
      .map((e) => `${e.name}/`);
    expect(top.filter((folder) => !byFolder.has(folder)).map((f) => `${f} has no row`)).toEqual([]);
    const listed = table.map((r) => r.folder).filter((f) => f === "functions/" || !f.startsWith("functions/"));
    expect(listed.filter((folder) => !top.includes(folder)).map((f) => `${f} does not exist`)).toEqual([]);
  });
});
