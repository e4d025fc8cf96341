// The trusted baseline: a copy of the checked-out commit's tree (its tree and blob objects) and
// of the index as the checkout left it, made with git when the collector starts, into the
// collector's own volume. The kubelet starts the runtime only after the collector's startup
// probe answers, so what is copied predates anything the runtime does; afterwards the checkout's
// .git is the runtime's to delete or rewrite, and it is never read again.
//
// A checkout git cannot copy (alternates on another volume, a corrupt object, a commit larger
// than the collector's volume) fails here, before the runtime starts, naming why.
import { lstat, mkdir, readFile, rename, rm, writeFile, copyFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { git, gitOutput, gitPipe, type GitScope } from "./git-cli.js";

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

  const format = (await gitOutput(source, ["rev-parse", "--show-object-format"])).toString("utf8").trim();
  if (format !== "sha1" && format !== "sha256") throw new Error(`${source.gitDir}: object format ${format} is not one git 2.39 reads`);
  const commit = (await gitOutput(source, ["rev-parse", "--verify", "--end-of-options", "HEAD^{commit}"])).toString("utf8").trim();
  const tree = (await gitOutput(source, ["rev-parse", "--verify", "--end-of-options", `${commit}^{tree}`])).toString("utf8").trim();
  // The tree's objects, without the commit itself: the copy needs no history, so none of the
  // commit's parents are missing from it, and index-pack can check that every link is there.
  const listed = await gitOutput(source, ["rev-list", "--objects", "--no-object-names", "--max-count=1", commit], { maxOutputBytes: 256 * 1024 * 1024 });
  const objects = Buffer.from(listed.toString("latin1").split("\n").filter((oid) => oid !== "" && oid !== commit).map((oid) => `${oid}\n`).join(""), "latin1");
  const size = Number((await gitOutput(source, ["rev-list", "--objects", "--disk-usage", "--max-count=1", commit])).toString("utf8").trim());
  if (size > maxBytes) {
    throw new Error(`the checked-out commit's objects take ${mib(size)} in ${source.gitDir}, more than the ${mib(maxBytes)} the collector's volume keeps for its copy`);
  }

  await gitOutput(copy, ["init", "--quiet", "--bare", "--template=", `--object-format=${format}`, to.gitDir]);
  await gitPipe({ scope: source, args: ["pack-objects", "--quiet", "--stdout"], input: objects }, { scope: copy, args: ["index-pack", "--stdin", "--strict"] });
  await copySettings(source, copy, to.gitDir);

  // The checkout's index, if it is the commit's, keeps the files' stat data: git then hashes only
  // what changed. The runtime cannot forge it: any write to a file changes its ctime.
  const checkoutIndex = join(source.gitDir, "index");
  let indexed = false;
  try {
    await copyFile(checkoutIndex, to.indexFile);
    const same = await git(copy, ["diff-index", "--cached", "--quiet", "--ignore-submodules=none", tree]);
    indexed = same.code === 0;
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
  for (const key of ["core.autocrlf", "core.eol"]) {
    const value = await git(source, ["config", "--local", "--get", key]);
    if (value.code === 0) await gitOutput(copy, ["config", "--local", key, value.stdout.toString("utf8").trim()]);
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

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

