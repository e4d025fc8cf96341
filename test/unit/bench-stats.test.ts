// bench/stats.ts is the one quantile behind every p50, p99 and median the benchmarks print
// (docs/performance.md). Its values are checked against numpy.quantile's default (R-7, linear
// interpolation); and no other file under bench/ or test/ may define its own median, quantile or
// percentile, since six copies with four definitions is how the figures drifted apart (issue 49).
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { median, quantile } from "../../bench/stats.js";

const ROOT = resolve(import.meta.dirname, "../..");
const STATS = "bench/stats.ts";

describe("bench/stats.ts", () => {
  it("interpolates linearly between closest ranks, as numpy.quantile does by default", () => {
    // numpy.quantile([1, 2, 3, 4], q) for q = 0.25, 0.5, 0.75, 0.9: 1.75, 2.5, 3.25, 3.7
    expect(quantile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.75)).toBe(3.25);
    expect(quantile([1, 2, 3, 4], 0.9)).toBeCloseTo(3.7, 12);
    // 1..100: numpy gives p50 50.5, p90 90.1, p99 99.01
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(hundred, 0.5)).toBe(50.5);
    expect(quantile(hundred, 0.9)).toBeCloseTo(90.1, 9);
    expect(quantile(hundred, 0.99)).toBeCloseTo(99.01, 9);
    // a value that sits exactly on a rank is returned as it is
    expect(quantile([10, 20, 30, 40, 50], 0.25)).toBe(20);
    expect(quantile([7], 0.99)).toBe(7);
  });

  it("sorts numerically, whatever order the samples came in", () => {
    expect(quantile([10, 9, 100, 1, 2], 0.5)).toBe(9);
    expect(quantile([3, -1, 2], 0)).toBe(-1);
  });

  it("is the least value at q = 0 and the greatest at q = 1", () => {
    const xs = [5, 3, 9, 1, 7, 2];
    expect(quantile(xs, 0)).toBe(1);
    expect(quantile(xs, 1)).toBe(9);
  });

  it("gives the usual median: the middle value for an odd count, the mean of the two middle ones for an even count", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([5, 1, 4, 2, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([1, 2])).toBe(1.5);
    expect(median([0.1, 0.2])).toBe((0.1 + 0.2) / 2);
    expect(median([9.8, 12.3, 7.1, 10.4, 8.0, 11.9, 9.9, 21.8, 9.2, 10.0])).toBe((9.9 + 10.0) / 2);
    expect(median([42])).toBe(42);
  });

  it("refuses an empty input, a value that is not a finite number, and q outside [0, 1], with a clear error", () => {
    expect(() => quantile([], 0.5)).toThrow(/no values/);
    expect(() => median([])).toThrow(RangeError);
    expect(() => median([1, Number.NaN, 3])).toThrow(/finite number.*NaN/);
    expect(() => quantile([1, Number.POSITIVE_INFINITY], 0.5)).toThrow(/finite number/);
    expect(() => quantile([1, 2], 1.5)).toThrow(/between 0 and 1/);
    expect(() => quantile([1, 2], -0.1)).toThrow(/between 0 and 1/);
    expect(() => quantile([1, 2], Number.NaN)).toThrow(/between 0 and 1/);
  });

  it("leaves its input as it was", () => {
    const xs = [3, 1, 2, 5, 4];
    const frozen = Object.freeze([...xs]);
    quantile(xs, 0.99);
    median(xs);
    expect(xs).toEqual([3, 1, 2, 5, 4]);
    expect(median(frozen)).toBe(3);
  });
});

// ---- one definition ------------------------------------------------------------------------

/** Every script under bench/ and test/ (not node_modules, not test data), relative to the repository. */
function scripts(): string[] {
  return ["bench", "test"].flatMap((top) =>
    readdirSync(join(ROOT, top), { recursive: true, encoding: "utf8" })
      .filter((f) => /\.[cm]?[jt]s$/.test(f) && !f.split("/").includes("node_modules"))
      .map((f) => `${top}/${f}`),
  );
}

const NAMES = ["median", "quantile", "percentile"].join("|");
/**
 * A definition of one of the names: `function median(`, `const quantile =`, `let percentile:`,
 * an object or class member `median(xs) {` / `median: (xs) =>`, `export` or `async` before any.
 */
const DEFINITION = new RegExp(
  [
    String.raw`\bfunction\s*\*?\s*(?:${NAMES})\s*[<(]`,
    String.raw`\b(?:const|let|var)\s+(?:${NAMES})\s*[:=]`,
    String.raw`^\s*(?:(?:public|private|protected|static|async)\s+)*(?:${NAMES})\s*\([^)]*\)\s*(?::[^{]*)?\{`,
    String.raw`^\s*(?:${NAMES})\s*:\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]*)?=>|[A-Za-z_$][\w$]*\s*=>)`,
  ].join("|"),
  "im",
);

/** The lines of `text` that define one of the names, read with their strings emptied and their line comments cut. */
function definitions(text: string): string[] {
  const code = (line: string) => line.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""').replace(/\/\/.*$/, "");
  return text.split("\n").filter((line) => DEFINITION.test(code(line)));
}

describe("one median, quantile and percentile under bench/ and test/", () => {
  it("recognises a definition in each form it may take, and not a call", () => {
    const defined = [
      "function median(xs: number[]) {",
      "export function quantile<T>(xs: T[], q: number) {",
      "const median = (xs: number[]) => xs[0];",
      "export const percentile: (xs: number[]) => number = (xs) => xs[0]!;",
      "let quantile = function (xs) {",
      "  median(xs: number[]): number {",
      "  static percentile(xs) {",
      "  quantile: (xs, q) => xs[q],",
      "  median: function (xs) {",
    ];
    expect(defined.filter((line) => definitions(line).length === 0)).toEqual([]);
    const notDefined = ["const m = median(xs);", "p50: quantile(samples, 0.5),", "import { median, quantile } from \"./stats.js\";", "// the median of five rounds", "medianMs: median(startups),"];
    expect(notDefined.filter((line) => definitions(line).length > 0)).toEqual([]);
  });

  it("are defined in bench/stats.ts and nowhere else", () => {
    const files = scripts();
    expect(files).toContain(STATS);
    expect(files.length).toBeGreaterThan(20);
    expect(definitions(readFileSync(join(ROOT, STATS), "utf8")).length).toBeGreaterThanOrEqual(2);
    const copies = files.filter((f) => f !== STATS).flatMap((f) => definitions(readFileSync(join(ROOT, f), "utf8")).map((line) => `${f}: ${line.trim()}`));
    expect(copies).toEqual([]);
  });
});
