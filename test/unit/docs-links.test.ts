// The README is the map, and docs/ the territory: every link between them, and to the code and
// tests they cite, must lead somewhere. A moved file or a renamed heading fails here, not in a
// reader's browser.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import GithubSlugger from "github-slugger";
import { marked, type Token, type Tokens } from "marked";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`), "admission/README.md", "bench/README.md", "test/live/README.md"];

function tokens(file: string): Token[] {
  return marked.lexer(readFileSync(join(ROOT, file), "utf8"));
}

/** The anchors GitHub gives a page's headings (repeated headings get -1, -2, … as GitHub does). */
function anchors(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const out = new Set<string>();
  marked.walkTokens(tokens(file), (t) => {
    if (t.type === "heading") out.add(slugger.slug((t as Tokens.Heading).text));
  });
  return out;
}

/** Every link of a page that stays in the repository: its target path and anchor, as written. */
function localLinks(file: string): string[] {
  const out: string[] = [];
  marked.walkTokens(tokens(file), (t) => {
    if (t.type === "link" && !/^[a-z]+:/i.test((t as Tokens.Link).href)) out.push((t as Tokens.Link).href);
  });
  return out;
}

describe("links between the README, docs/ and the repository", () => {
  it("the README links every page in docs/", () => {
    const linked = new Set(localLinks("README.md").map((l) => l.split("#")[0]));
    const pages = PAGES.filter((p) => p.startsWith("docs/"));
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
  });

  it.each(PAGES)("%s: every local link leads to a file, and every anchor to a heading", (page) => {
    const broken: string[] = [];
    for (const link of localLinks(page)) {
      const [path, anchor] = link.split("#") as [string, string | undefined];
      const target = path === "" ? join(ROOT, page) : resolve(ROOT, dirname(page), decodeURI(path));
      if (!existsSync(target)) broken.push(`${link}: no file ${relative(ROOT, target)}`);
      else if (anchor && target.endsWith(".md") && !anchors(relative(ROOT, target)).has(anchor)) broken.push(`${link}: no heading with anchor #${anchor} in ${relative(ROOT, target)}`);
    }
    expect(broken).toEqual([]);
  });
});
