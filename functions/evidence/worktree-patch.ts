// The proposed changes: every file under the checkout directory compared with the baseline
// tree, as one patch that `git apply` takes on a clean checkout of the baseline commit. The
// working tree is walked as it is, .gitignore or not: what the agent left is what it proposes,
// including what it (or its tools) would have git ignore.
import fs from "node:fs";
import { lstat, open, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { type Baseline, type FileMode, gitBlobId, gitBlobIdOfFile } from "./baseline.js";
import { patchEntry, type Side } from "./patch-entry.js";

/** The patch's bound: the collector serves it in one response and the export pushes it as one blob. */
export const MAX_PATCH_BYTES = 8 * 1024 * 1024;

export interface WorktreePatch {
  /** Whole file entries, in path order; empty when nothing changed. */
  readonly patch: string;
  /** Some changed file's entry is not in the patch: it would have passed MAX_PATCH_BYTES. */
  readonly truncated: boolean;
  /** Changed paths, each counted once, whether its entry is in the patch or not. */
  readonly files: { added: number; modified: number; deleted: number };
}

/** A file of the working tree, before its content is read. */
interface WorktreeFile {
  readonly mode: FileMode;
  readonly size: number;
}

/**
 * Compares the working tree at `checkoutDir` with `baseline`. A base blob that does not hash to
 * its id rejects the whole patch (Baseline.readBlob): a patch made against other content than
 * the commit's would not say what the agent changed.
 */
export async function worktreePatch(checkoutDir: string, baseline: Baseline, maxBytes = MAX_PATCH_BYTES): Promise<WorktreePatch> {
  const worktree = await listWorktree(checkoutDir, baseline.submodules);
  const paths = [...new Set([...baseline.files.keys(), ...worktree.keys()])].sort(byteOrder);
  const files = { added: 0, modified: 0, deleted: 0 };
  const entries: string[] = [];
  let size = 0;
  let truncated = false;
  const include = (entry: string): void => {
    const bytes = Buffer.byteLength(entry);
    // Whole entries only, so that what is in the patch still applies; a later, smaller entry
    // may still fit.
    if (size + bytes > maxBytes) truncated = true;
    else {
      entries.push(entry);
      size += bytes;
    }
  };

  for (const path of paths) {
    const base = baseline.files.get(path);
    const found = worktree.get(path);
    const absolute = join(checkoutDir, path);
    if (base && found) {
      // The working tree's id decides whether the file changed, without reading .git.
      if (found.size > maxBytes && found.mode !== "120000") {
        if ((await gitBlobIdOfFile(absolute, found.size)) === base.oid && found.mode === base.mode) continue;
        files.modified++;
        truncated = true;
        continue;
      }
      const after = await readSide(absolute, found);
      if (after.oid === base.oid && after.mode === base.mode) continue;
      files.modified++;
      const before = after.oid === base.oid ? { ...base, content: after.content } : { ...base, content: await baseline.readBlob(base.oid, path) };
      // A symbolic link that became a file, or the other way round, is two entries, as git writes it.
      if ((before.mode === "120000") !== (after.mode === "120000")) {
        include(patchEntry(path, before, undefined) + patchEntry(path, undefined, after));
      } else {
        include(patchEntry(path, before, after));
      }
    } else if (base) {
      files.deleted++;
      include(patchEntry(path, { ...base, content: await baseline.readBlob(base.oid, path) }, undefined));
    } else if (found) {
      files.added++;
      if (found.size > maxBytes && found.mode !== "120000") truncated = true;
      else include(patchEntry(path, undefined, await readSide(absolute, found)));
    }
  }
  return { patch: entries.join(""), truncated, files };
}

/**
 * Every regular file and symbolic link under `root`, by path relative to it. Nothing is followed:
 * a link is a file whose content is its target, as git stores it, so a link the runtime made to
 * somewhere outside the checkout shows as that link and never as what it points to.
 */
async function listWorktree(root: string, submodules: ReadonlySet<string>): Promise<Map<string, WorktreeFile>> {
  const found = new Map<string, WorktreeFile>();
  let top;
  try {
    top = await lstat(root);
  } catch (err) {
    // No checkout directory at all: nothing was left in it.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return found;
    throw err;
  }
  if (top.isSymbolicLink()) throw new Error(`${root} is now a symbolic link: the runtime replaced the checkout directory`);
  if (!top.isDirectory()) throw new Error(`${root} is not a directory`);
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      // Git tracks no path through a directory named .git, at any depth, and git apply refuses
      // one: the checkout's own repository and any the agent cloned inside are left out.
      if (entry.name === ".git") continue;
      const path = prefix + entry.name;
      const absolute = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!submodules.has(path)) await walk(absolute, `${path}/`);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        const stat = await lstat(absolute);
        if (stat.isSymbolicLink()) found.set(path, { mode: "120000", size: stat.size });
        // Git records one executable bit: the owner's.
        else if (stat.isFile()) found.set(path, { mode: stat.mode & 0o100 ? "100755" : "100644", size: stat.size });
      }
      // Sockets, FIFOs and devices are not files git can hold.
    }
  };
  await walk(root, "");
  return found;
}

/** A working-tree file's content and id. O_NOFOLLOW: a path that became a link is not followed. */
async function readSide(file: string, found: WorktreeFile): Promise<Side> {
  let content: Buffer;
  if (found.mode === "120000") {
    content = await readlink(file, { encoding: "buffer" });
  } else {
    const handle = await open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      content = await handle.readFile();
    } finally {
      await handle.close();
    }
  }
  return { oid: gitBlobId(content), mode: found.mode, content };
}

/** Git sorts paths by their bytes; JavaScript's < compares UTF-16 units, which differs past U+FFFF. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
