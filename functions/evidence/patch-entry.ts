// One file's part of the patch, in the form `git diff` writes and `git apply` reads: the
// `diff --git` header, the extended headers (new file, deleted file, mode change, index), then
// either the hunks or a "Binary files ... differ" line.
import { formatPatch, OMIT_HEADERS, structuredPatch, type StructuredPatchHunk } from "diff";
import type { FileMode } from "./baseline.js";

/** One side of a change: its blob id, mode and bytes. */
export interface Side {
  readonly oid: string;
  readonly mode: FileMode;
  readonly content: Buffer;
}

const NULL_OID = "0".repeat(40);

/** Lines of context around each change, as git writes by default. */
const CONTEXT = 3;

/**
 * The diff of two large, very different files is slow to find (Myers' algorithm costs about
 * lines × edits), and the runtime chooses the files. Past this many steps the file is written
 * as one hunk that removes every old line and adds every new one: as applicable, only longer.
 */
const DIFF_BUDGET = 20_000_000;

/**
 * The entry for `path`, changed from `before` to `after` (either absent for an added or deleted
 * file). Both present with the same mode and content is no change, and not asked for.
 */
export function patchEntry(path: string, before: Side | undefined, after: Side | undefined): string {
  const a = quotePath(`a/${path}`);
  const b = quotePath(`b/${path}`);
  const lines = [`diff --git ${a} ${b}`];
  if (!before && after) lines.push(`new file mode ${after.mode}`);
  else if (before && !after) lines.push(`deleted file mode ${before.mode}`);
  else if (before && after && before.mode !== after.mode) lines.push(`old mode ${before.mode}`, `new mode ${after.mode}`);
  const contentChanged = (before?.oid ?? NULL_OID) !== (after?.oid ?? NULL_OID);
  if (contentChanged) {
    const sameMode = before && after && before.mode === after.mode ? ` ${before.mode}` : "";
    lines.push(`index ${before?.oid ?? NULL_OID}..${after?.oid ?? NULL_OID}${sameMode}`);
  }
  const header = `${lines.join("\n")}\n`;
  if (!contentChanged) return header;

  const oldText = before ? textOf(before.content) : "";
  const newText = after ? textOf(after.content) : "";
  const from = before ? a : "/dev/null";
  const to = after ? b : "/dev/null";
  // The patch travels as a JSON string, which cannot carry bytes that are not UTF-8, and git
  // itself treats a file with a NUL as binary. Such a file is named, not carried: carrying it
  // would take git's binary patch format or a bundle, which the evidence does not include.
  if (oldText === undefined || newText === undefined) return `${header}Binary files ${from} and ${to} differ\n`;
  const hunks = lineHunks(oldText, newText);
  // An empty file added or deleted has no lines: git writes no ---/+++ for it, and neither do we.
  if (hunks.length === 0) return header;
  const body = formatPatch({ oldFileName: undefined, newFileName: undefined, oldHeader: undefined, newHeader: undefined, hunks }, OMIT_HEADERS);
  return `${header}--- ${from}\n+++ ${to}\n${body}`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The content as text, or undefined if it is binary: not valid UTF-8, or with a NUL byte. */
export function textOf(content: Buffer): string | undefined {
  if (content.includes(0)) return undefined;
  try {
    // ignoreBOM keeps a leading byte-order mark in the text, so that the patch reproduces it.
    return utf8.decode(content);
  } catch {
    return undefined;
  }
}

function lineHunks(oldText: string, newText: string): StructuredPatchHunk[] {
  const steps = countLines(oldText) + countLines(newText) + 1;
  const maxEditLength = Math.max(64, Math.floor(DIFF_BUDGET / steps));
  const found = structuredPatch("a", "b", oldText, newText, undefined, undefined, { context: CONTEXT, maxEditLength });
  return found ? found.hunks : replaceEverything(oldText, newText);
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n + 1;
}

/** One hunk that removes every old line and adds every new one. */
function replaceEverything(oldText: string, newText: string): StructuredPatchHunk[] {
  const removed = marked("-", oldText);
  const added = marked("+", newText);
  if (removed.count === 0 && added.count === 0) return [];
  return [{ oldStart: 1, oldLines: removed.count, newStart: 1, newLines: added.count, lines: [...removed.lines, ...added.lines] }];
}

function marked(sign: "-" | "+", text: string): { count: number; lines: string[] } {
  if (text === "") return { count: 0, lines: [] };
  const lines = text.split("\n");
  const lastHasNewline = lines[lines.length - 1] === "";
  if (lastHasNewline) lines.pop();
  const out = lines.map((line) => sign + line);
  if (!lastHasNewline) out.push("\\ No newline at end of file");
  return { count: lines.length, lines: out };
}

/**
 * A path as git writes it in a patch header: as is, or in double quotes with C escapes when it
 * holds a control character, a quote, a backslash or a byte outside ASCII (git's default
 * core.quotePath), which `git apply` unquotes.
 */
export function quotePath(path: string): string {
  if (!/[\u0000-\u001f"\\\u007f-\uffff]/.test(path)) return path;
  const escapes: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\" };
  let out = '"';
  for (const byte of Buffer.from(path, "utf8")) {
    if (escapes[byte]) out += escapes[byte];
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, "0")}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}
