// docs/operations.md says which TTL values the function takes ("The three TTLs take ..."): the
// examples before "This is not Go's duration syntax" must parse, and those after must not, as
// the function's own parser reads them. A parser that starts taking Go's syntax, or stops taking
// one of the examples, fails here until the page says so.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseDuration } from "../../functions/berth/respond/ttl.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** The paragraph's code spans: those before "This is not Go's" (accepted) and those after, up to the first error message (refused). */
function documented(markdown: string): { accepted: string[]; refused: string[] } {
  const paragraph = markdown.split(/\n\s*\n/).find((p) => p.startsWith("The three TTLs take"));
  if (paragraph === undefined) throw new Error('docs/operations.md has no paragraph "The three TTLs take ..."');
  const [before, after] = paragraph.split("This is not Go's duration syntax") as [string, string | undefined];
  if (after === undefined) throw new Error("the paragraph no longer says what it refuses");
  const spans = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  return { accepted: spans(before), refused: spans(after.split("stops the function")[0]!) };
}

describe("docs/operations.md: the TTL values the page says are taken and refused", () => {
  const { accepted, refused } = documented(readFileSync(join(ROOT, "docs/operations.md"), "utf8"));

  it("names examples of both", () => {
    expect(accepted.length).toBeGreaterThan(3);
    expect(refused.length).toBeGreaterThan(2);
  });

  it.each(accepted)("%s is taken", (text) => {
    expect(parseDuration(text)).toBeGreaterThan(0);
  });

  it.each(refused)("%s is refused", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});
