// The trusted baseline: a copy of the checked-out commit's tree (its tree and blob objects) and
// of the index as the checkout left it, made with git when the collector starts, into the
// collector's own volume. The kubelet starts the runtime only after the collector's startup
// probe answers, so what is copied predates anything the runtime does; afterwards the checkout's
// .git is the runtime's to delete or rewrite, and it is never read again.
//
// A checkout git cannot copy (alternates on another volume, a corrupt object, a commit larger
// than the collector's volume) fails here, before the runtime starts, naming why.
import { copyFile, lstat, mkdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { git, gitOutput, gitPipe, type GitScope, PipeOverflow } from "./git-cli.js";

export interface Baseline {
  /** The checked-out commit; null when there was no checkout (no .git): every file is then added. */
  readonly commit: string | null;
  /** What the patch is made against: the commit's tree, or git's empty tree without a checkout. */
  readonly tree: string;
  readonly objectFormat: "sha1" | "sha256";
  /** The copy: a bare repository holding only the commit's tree. */
  readonly gitDir: string;
  /** The index of the commit as checked out; each patch starts from a copy of it. */
  readonly indexFile: string;
  /** An empty directory, git's HOME. */
  readonly home: string;
}

/** What is kept beside the copy, written last: a copy without it is unfinished and made again. */
const keptSchema = z.strictObject({ commit: z.string().nullable(), tree: z.string(), objectFormat: z.enum(["sha1", "sha256"]) });

/** The default bound of the copy: what the collector's volume holds, less room for the patch's objects. */
export const MAX_BASELINE_BYTES = 768 * 1024 * 1024;

/**
 * The baseline in `dir`: the one made at the collector's first start, or, if there is none yet,
 * a new copy of `checkoutDir`'s commit. A collector the kubelet restarts while the runtime runs
 * finds its copy and never reads the checkout's .git again: the runtime may have changed it.
 */
export async function keptBaseline(checkoutDir: string, dir: string, maxBytes = MAX_BASELINE_BYTES): Promise<Baseline> {
  const paths = { gitDir: join(dir, "baseline.git"), indexFile: join(dir, "baseline.index"), home: join(dir, "home") };
  const keptFile = join(dir, "baseline.json");
  const kept = await readFile(keptFile, "utf8").then(
    (text) => keptSchema.parse(JSON.parse(text)),
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    },
  );
  if (kept !== undefined) return { ...kept, ...paths };

  // An unfinished copy (the collector stopped while copying) is made again from the start.
  await rm(paths.gitDir, { recursive: true, force: true });
  await rm(paths.indexFile, { force: true });
  await mkdir(paths.home, { recursive: true });
  const made = await copyCheckout(checkoutDir, { ...paths }, maxBytes);
  const temp = `${keptFile}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(made));
  await rename(temp, keptFile);
  return { ...made, ...paths };
}

async function copyCheckout(checkoutDir: string, to: { gitDir: string; indexFile: string; home: string }, maxBytes: number): Promise<z.infer<typeof keptSchema>> {
  const source: GitScope = { gitDir: join(checkoutDir, ".git"), home: to.home };
  const copy: GitScope = { gitDir: to.gitDir, home: to.home, indexFile: to.indexFile };
  const found = await lstat(source.gitDir).then(
    (s) => s,
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    },
  );

  if (found === undefined) {
    // No checkout: an empty repository and an empty index, so that every file is added.
    await gitOutput(copy, ["init", "--quiet", "--bare", "--template=", to.gitDir]);
    const tree = (await gitOutput(copy, ["mktree"], { input: Buffer.alloc(0) })).toString("utf8").trim();
    await gitOutput(copy, ["read-tree", tree]);
    return { commit: null, tree, objectFormat: "sha1" };
  }
  if (!found.isDirectory()) {
    throw new Error(`${source.gitDir} is not a directory (a linked worktree or a submodule's checkout keeps its repository elsewhere): the collector copies the commit from a .git directory only`);
  }

  const [format, commit, tree] = (await gitOutput(source, ["rev-parse", "--show-object-format", "HEAD^{commit}", "HEAD^{tree}"])).toString("utf8").trim().split("\n");
  if (format !== "sha1" && format !== "sha256") throw new Error(`${source.gitDir}: object format ${format} is not one git 2.39 reads`);
  if (commit === undefined || tree === undefined) throw new Error(`${source.gitDir}: HEAD names no commit`);
  await gitOutput(copy, ["init", "--quiet", "--bare", "--template=", `--object-format=${format}`, to.gitDir]);
  try {
    // The tree and what it holds, not the commit: the copy needs no history, so nothing it links
    // to is missing from it, and index-pack checks every link. No delta search (--window=0): the
    // copy is read once, on the same node, and searching costs seconds on a large tree.
    await gitPipe({ scope: source, args: ["pack-objects", "--revs", "--window=0", "--quiet", "--stdout"], input: Buffer.from(`${tree}\n`) }, { scope: copy, args: ["index-pack", "--stdin", "--strict"] }, maxBytes);
  } catch (err) {
    if (!(err instanceof PipeOverflow)) throw err;
    throw new Error(`the checked-out commit's objects take more than the ${mib(maxBytes)} the collector's volume keeps for its copy (packed)`);
  }
  await copySettings(source, copy, to.gitDir);

  // The checkout's index, if it is the commit's, keeps the files' stat data: git then hashes only
  // what changed. The runtime cannot forge it: any write to a file changes its ctime.
  const checkoutIndex = join(source.gitDir, "index");
  let indexed = false;
  try {
    await copyIndex(checkoutIndex, to.indexFile);
    const same = await git(copy, ["diff-index", "--cached", "--quiet", "--ignore-submodules=none", tree]);
    // An entry marked assume-unchanged or skip-worktree would hide its file's changes from git.
    const tags = same.code === 0 ? (await gitOutput(copy, ["ls-files", "-z", "-v"], { maxOutputBytes: 256 * 1024 * 1024 })).toString("latin1").split("\0") : [];
    indexed = same.code === 0 && tags.every((entry) => entry === "" || entry.startsWith("H "));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  if (!indexed) {
    await rm(to.indexFile, { force: true });
    await gitOutput(copy, ["read-tree", tree]);
  }
  return { commit, tree, objectFormat: format };
}

/**
 * What of the checkout's own settings shapes the patch without running anything: its line-ending
 * settings, and its info/attributes and info/exclude. Nothing else is copied: a filter, diff or
 * fsmonitor command in the checkout's config is never run.
 */
async function copySettings(source: GitScope, copy: GitScope, copyDir: string): Promise<void> {
  const settings = await git(source, ["config", "--local", "-z", "--get-regexp", "^core\\.(autocrlf|eol)$"]);
  for (const entry of settings.code === 0 ? settings.stdout.toString("utf8").split("\0") : []) {
    const newline = entry.indexOf("\n");
    if (newline > 0) await gitOutput(copy, ["config", "--local", entry.slice(0, newline), entry.slice(newline + 1)]);
  }
  await mkdir(join(copyDir, "info"), { recursive: true });
  for (const file of ["attributes", "exclude"]) {
    const content = await readFile(join(source.gitDir, "info", file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    });
    if (content !== undefined) await writeFile(join(copyDir, "info", file), content);
  }
}

/**
 * Copies an index with its modification time. Git trusts an entry's stat data only when the file
 * was last changed before the index was written, and re-reads the content of any entry changed in
 * the same second ("racily clean"); a copy with a later time would make git trust a file the
 * runtime rewrote, at the same size, within the second the checkout wrote it.
 */
export async function copyIndex(from: string, to: string): Promise<void> {
  await copyFile(from, to);
  const { atime, mtime } = await stat(from);
  await utimes(to, atime, mtime);
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

