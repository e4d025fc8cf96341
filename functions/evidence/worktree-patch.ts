// The proposed changes: the working tree at the checkout directory compared with the baseline
// copy's tree by git itself, as one patch `git apply` (and `git apply --index`) takes on a clean
// checkout of the baseline commit. Git decides everything git decides for a developer: .gitignore,
// .gitattributes' built-in conversions, modes, symbolic links, binary files (carried, in git's
// binary format). The runtime's .git plays no part: the index and objects are the baseline copy's.
//
// What the patch cannot carry is named, and left out whole, so that the rest still applies: a file
// over the cap, a repository inside the checkout (a gitlink), a path git refuses.
import { constants } from "node:fs";
import { access, lstat, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type Baseline, copyIndex } from "./baseline.js";
import { git, gitMessage, gitOutput, GitFailure, type GitScope } from "./git-cli.js";

/** The patch's bound: the collector serves it in one response and the export pushes it as one blob. */
export const MAX_PATCH_BYTES = 8 * 1024 * 1024;
/**
 * What git may write into the collector's volume while it stages the working tree: a patch of
 * MAX_PATCH_BYTES is at most this much content (git deflates and base85-encodes binary files).
 */
const STAGING_FACTOR = 4;

/** A change the patch does not carry, and why. */
export interface LeftOut {
  /** As git names it: the path itself when it is printable UTF-8, else in git's C quoting. */
  readonly path: string;
  readonly reason: string;
}

export interface WorktreePatch {
  /** git diff's bytes, whole entries in git's order; empty when nothing changed. */
  readonly patch: Buffer;
  readonly leftOut: readonly LeftOut[];
  /** Changed paths, each counted once, whether carried or left out. */
  readonly files: { added: number; modified: number; deleted: number };
}

const GITLINK = "160000";
const NESTED_REPOSITORY = "a repository inside the checkout (a git submodule or a clone): the patch does not carry another repository's commits";

export async function worktreePatch(checkoutDir: string, baseline: Baseline, maxBytes = MAX_PATCH_BYTES): Promise<WorktreePatch> {
  const workTree = await readableWorktree(checkoutDir, baseline);
  // Each patch starts from the baseline's index, so that the baseline itself is never changed.
  const indexFile = join(dirname(baseline.indexFile), "patch.index");
  await copyIndex(baseline.indexFile, indexFile);
  const scope: GitScope = { gitDir: baseline.gitDir, home: baseline.home, workTree, indexFile };
  const files = { added: 0, modified: 0, deleted: 0 };
  const leftOut: LeftOut[] = [];

  // 1. What changed: tracked files by the index's stat data, with their modes; new files by
  // git's ignore rules (a directory in that list is a repository of its own).
  const abbrev = baseline.objectFormat === "sha256" ? "64" : "40";
  const [trackedListing, untrackedListing] = await Promise.all([
    gitOutput(scope, ["diff-files", "-z", "--raw", "--no-renames", `--abbrev=${abbrev}`, "--ignore-submodules=none"], { maxOutputBytes: 256 * 1024 * 1024 }),
    gitOutput(scope, ["ls-files", "-z", "--others", "--exclude-standard"], { maxOutputBytes: 256 * 1024 * 1024 }),
  ]);

  // 2. Each change staged by name, within the bounds: git writes what it stages into the
  // collector's volume. By name (update-index), not by pathspec (add), so that the cost is the
  // changes' own, not the changes times the index.
  const staged: Buffer[] = [];
  let stagedBytes = 0;
  const consider = async (path: Buffer, isTracked: boolean): Promise<void> => {
    const leave = (reason: string) => {
      leftOut.push({ path: pathName(path), reason });
      if (isTracked) files.modified++;
      else files.added++;
    };
    const found = await inWorktree(workTree, path);
    if (found.kind === "other") return leave("not a file git can hold (a socket, a FIFO or a device)");
    if (found.kind === "unreadable") return leave("the collector cannot read it");
    if (found.size > maxBytes) return leave(`${found.size} bytes, larger than the patch's cap of ${maxBytes}`);
    if (stagedBytes + found.size > maxBytes * STAGING_FACTOR) return leave(`the changes before it in path order already fill the patch's cap of ${maxBytes} bytes`);
    stagedBytes += found.size;
    staged.push(path);
  };
  for (const entry of parseRaw(trackedListing)) {
    if (entry.oldMode === GITLINK) {
      leftOut.push({ path: pathName(entry.path), reason: NESTED_REPOSITORY });
      files.modified++;
    } else await consider(entry.path, true);
  }
  for (const path of nulList(untrackedListing)) {
    if (path[path.length - 1] === 0x2f) {
      leftOut.push({ path: pathName(path.subarray(0, -1)), reason: NESTED_REPOSITORY });
      files.added++;
    } else await consider(path, false);
  }

  if (staged.length > 0) {
    const updated = await git(scope, ["update-index", "--add", "--remove", "-z", "--stdin"], { input: Buffer.concat(staged.flatMap((p) => [p, Buffer.from([0])])) });
    if (updated.code !== 0) throw new GitFailure(`git update-index: ${gitMessage(updated.stderr) || `exit ${updated.code}`}`);
    // A path git refuses (`.GIT/config`, `git~1/x`, a symbolic link .gitmodules) would not apply.
    for (const line of updated.stderr.split("\n")) {
      const refused = /^Ignoring path (.*)$/.exec(line);
      if (!refused) continue;
      leftOut.push({ path: refused[1]!, reason: "a path git refuses to hold, which git apply would refuse too" });
      files.added++;
    }
  }

  // 3. What the index now holds that the baseline's tree does not; gitlinks are put back.
  const makePatch = () =>
    gitOutput(scope, ["diff", "--cached", "--binary", "--full-index", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none", baseline.tree], {
      maxOutputBytes: maxBytes * STAGING_FACTOR * 2,
    });
  // Made beside the listing, and again only if a gitlink has to be put back first.
  const [listing, first] = await Promise.all([gitOutput(scope, ["diff", "--cached", "--raw", "-z", "--no-renames", `--abbrev=${abbrev}`, "--ignore-submodules=none", baseline.tree], { maxOutputBytes: 256 * 1024 * 1024 }), makePatch()]);
  const raw = parseRaw(listing);
  const restore: Buffer[] = [];
  for (const entry of raw) {
    if (entry.oldMode === GITLINK || entry.newMode === GITLINK) {
      // A file the runtime replaced by a repository of its own: git staged it as a gitlink.
      leftOut.push({ path: pathName(entry.path), reason: NESTED_REPOSITORY });
      const base = entry.oldMode === "000000" ? `0 ${"0".repeat(Number(abbrev))}` : `${entry.oldMode} ${entry.oldOid}`;
      restore.push(Buffer.concat([Buffer.from(`${base}\t`), entry.path, Buffer.from([0])]));
    }
    if (entry.status === "A") files.added++;
    else if (entry.status === "D") files.deleted++;
    else files.modified++;
  }
  if (restore.length > 0) await gitOutput(scope, ["update-index", "-z", "--index-info"], { input: Buffer.concat(restore) });

  // 4. The patch, as git writes it for `git apply`; whole entries only, up to the cap.
  const diff = restore.length > 0 ? await makePatch() : first;
  if (diff.length <= maxBytes) return { patch: diff, leftOut: named(leftOut), files };
  return { patch: capped(diff, maxBytes, leftOut), leftOut: named(leftOut), files };
}

/**
 * The patch's entries that fit under `maxBytes`, in git's order, the rest named in `leftOut`. An
 * entry goes with every entry of a path above or below it (a file that became a directory is a
 * deletion and an addition, and git apply cannot make the one without the other).
 */
function capped(diff: Buffer, maxBytes: number, leftOut: LeftOut[]): Buffer {
  const entries = patchEntries(diff).map((entry) => ({ entry, path: entryPath(entry) }));
  const dropped = new Set<number>();
  let size = 0;
  for (const [i, { entry }] of entries.entries()) {
    if (size + entry.length > maxBytes) dropped.add(i);
    else size += entry.length;
  }
  const related = (a: Buffer, b: Buffer) => isUnder(a, b) || isUnder(b, a);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [i, { path }] of entries.entries()) {
      if (dropped.has(i) || ![...dropped].some((d) => related(entries[d]!.path, path))) continue;
      dropped.add(i);
      changed = true;
    }
  }
  for (const i of [...dropped].sort((a, b) => a - b)) {
    leftOut.push({ path: pathName(entries[i]!.path), reason: `its part of the patch would pass the patch's cap of ${maxBytes} bytes` });
  }
  return Buffer.concat(entries.filter((_, i) => !dropped.has(i)).map((e) => e.entry));
}

/** Whether `path` is `dir` itself or inside it. */
function isUnder(path: Buffer, dir: Buffer): boolean {
  return path.equals(dir) || (path.length > dir.length && path[dir.length] === 0x2f && path.subarray(0, dir.length).equals(dir));
}

/** The most changes named one by one: outcome.json carries them, and the runtime chooses how many there are. */
export const MAX_NAMED = 1000;

/** The first MAX_NAMED, and how many more there are. */
function named(leftOut: LeftOut[]): LeftOut[] {
  if (leftOut.length <= MAX_NAMED) return leftOut;
  return [...leftOut.slice(0, MAX_NAMED), { path: "", reason: `and ${leftOut.length - MAX_NAMED} more changes left out, not named` }];
}

/** The checkout directory as git may read it; an empty one of the collector's when it is gone. */
async function readableWorktree(checkoutDir: string, baseline: Baseline): Promise<string> {
  let top;
  try {
    top = await lstat(checkoutDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    // The runtime removed the checkout: every file of the commit is deleted.
    const empty = join(dirname(baseline.indexFile), "no-worktree");
    await mkdir(empty, { recursive: true });
    return empty;
  }
  if (top.isSymbolicLink()) throw new Error(`${checkoutDir} is now a symbolic link: the runtime replaced the checkout directory`);
  if (!top.isDirectory()) throw new Error(`${checkoutDir} is no longer a directory`);
  return checkoutDir;
}

/** What a changed path is now: gone, or a file or link to stage (with its size), or neither. */
async function inWorktree(workTree: string, path: Buffer): Promise<{ kind: "stage" | "unreadable" | "other"; size: number }> {
  const absolute = Buffer.concat([Buffer.from(`${workTree}/`), path]);
  let found;
  try {
    found = await lstat(absolute);
  } catch (err) {
    // Gone (or under what is now a file): staged as deleted.
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR") return { kind: "stage", size: 0 };
    throw err;
  }
  // A directory where a file was: the file is deleted, the directory's files are new of their own.
  if (found.isDirectory() || found.isSymbolicLink()) return { kind: "stage", size: 0 };
  if (!found.isFile()) return { kind: "other", size: 0 };
  // git stops at the first file it cannot read, so one is named here instead.
  const readable = await access(absolute, constants.R_OK).then(
    () => true,
    () => false,
  );
  return { kind: readable ? "stage" : "unreadable", size: found.size };
}

function nulList(output: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let start = 0; start < output.length; ) {
    const end = output.indexOf(0, start);
    if (end < 0) break;
    out.push(output.subarray(start, end));
    start = end + 1;
  }
  return out;
}

interface RawEntry {
  readonly oldMode: string;
  readonly newMode: string;
  readonly oldOid: string;
  readonly status: string;
  readonly path: Buffer;
}

/** `git diff --raw -z`: `:<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0` per change. */
function parseRaw(output: Buffer): RawEntry[] {
  const fields = nulList(output);
  const entries: RawEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [oldMode, newMode, oldOid, , status] = fields[i]!.toString("latin1").replace(/^:/, "").split(" ");
    entries.push({ oldMode: oldMode!, newMode: newMode!, oldOid: oldOid!, status: status!.charAt(0), path: fields[i + 1]! });
  }
  return entries;
}

/** The patch's entries, each from its `diff --git` line: no hunk or binary line starts so. */
function patchEntries(patch: Buffer): Buffer[] {
  const marker = Buffer.from("\ndiff --git ");
  const entries: Buffer[] = [];
  let start = 0;
  for (let next = patch.indexOf(marker); next >= 0; next = patch.indexOf(marker, next + 1)) {
    entries.push(patch.subarray(start, next + 1));
    start = next + 1;
  }
  entries.push(patch.subarray(start));
  return entries;
}

/**
 * The path of an entry, from `diff --git a/<path> b/<path>`: without renames both names are the
 * same, so the header's two halves are of equal length, quoted or not, spaces or not.
 */
function entryPath(entry: Buffer): Buffer {
  const line = entry.subarray(0, entry.indexOf(10)).toString("latin1").slice("diff --git ".length);
  const first = line.slice(0, (line.length - 1) / 2);
  const bytes = first.startsWith('"') ? unquote(first.slice(1, -1)) : Buffer.from(first, "latin1");
  return bytes.subarray(2);
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 };

/** The bytes of a name git quoted (core.quotePath): C escapes and three-digit octal. */
function unquote(quoted: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < quoted.length; i++) {
    const c = quoted[i]!;
    if (c !== "\\") {
      bytes.push(c.charCodeAt(0));
      continue;
    }
    const octal = /^[0-7]{3}/.exec(quoted.slice(i + 1));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(ESCAPES[quoted[i + 1]!] ?? quoted.charCodeAt(i + 1));
      i += 1;
    }
  }
  return Buffer.from(bytes);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A path to show: as it is when it is printable UTF-8, else in git's C quoting. */
export function pathName(bytes: Buffer): string {
  try {
    const text = utf8.decode(bytes);
    if (!/[\u0000-\u001f"\\\u007f]/.test(text)) return text;
  } catch {
    // Not UTF-8: quoted below.
  }
  const escapes: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r", 34: '\\"', 92: "\\\\" };
  let out = '"';
  for (const byte of bytes) {
    if (escapes[byte]) out += escapes[byte];
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, "0")}`;
    else out += String.fromCharCode(byte);
  }
  return `${out}"`;
}
