// The trusted baseline: the checked-out commit and the whole tree of that commit, read from the
// checkout's .git once, when the collector starts. The kubelet starts the runtime only after the
// collector's startup probe answers, so what is read here predates anything the runtime does.
// Afterwards .git is the runtime's to tamper with: refs are never read again, and a base file's
// content is read by the blob id remembered here and used only if it hashes to that id.
import { createHash } from "node:crypto";
import fs from "node:fs";
import { lstat, open, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import git from "isomorphic-git";

/** The modes of what a tree can hold as a file: regular, executable, symbolic link. */
export type FileMode = "100644" | "100755" | "120000";

export interface BaselineFile {
  readonly oid: string;
  readonly mode: FileMode;
}

export interface Baseline {
  /** The checked-out commit; null when there was no checkout (no .git): every file is then added. */
  readonly commit: string | null;
  /** Every file of the commit's tree, by path. */
  readonly files: ReadonlyMap<string, BaselineFile>;
  /** Submodules' paths: their files belong to another repository, so the patch leaves them out. */
  readonly submodules: ReadonlySet<string>;
  /** A base file's content, read by blob id and verified against it. */
  readBlob(oid: string, path: string): Promise<Buffer>;
}

/** Raised when a base blob's content does not hash to its id: .git was changed after the start. */
export class TamperedBlob extends Error {}

/** The id git gives a file's content: sha1 of `blob <length>\0<content>`. */
export function gitBlobId(content: Uint8Array): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

/** The same id, for a file too large to hold in memory, read as a stream. */
export async function gitBlobIdOfFile(file: string, size: number): Promise<string> {
  const hash = createHash("sha1").update(`blob ${size}\0`);
  const handle = await open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    let read = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false })) {
      hash.update(chunk as Buffer);
      read += (chunk as Buffer).length;
    }
    // The runtime has exited, so a file that changes size while it is read is not its doing;
    // still, an id of other bytes than `size` says would be no file's id.
    if (read !== size) throw new Error(`${file} changed while it was read`);
  } finally {
    await handle.close();
  }
  return hash.digest("hex");
}

const NO_CHECKOUT: Baseline = {
  commit: null,
  files: new Map(),
  submodules: new Set(),
  readBlob: (oid, path) => Promise.reject(new Error(`no checkout, yet ${path} (blob ${oid}) was asked for`)),
};

/** Reads HEAD and its whole tree. A checkout directory without .git is no checkout. */
export async function readBaseline(checkoutDir: string): Promise<Baseline> {
  const gitdir = join(checkoutDir, ".git");
  const exists = await lstat(gitdir).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return false;
      throw err;
    },
  );
  if (!exists) return NO_CHECKOUT;
  // One cache for every read: isomorphic-git keeps packfile indexes in it.
  const cache = {};
  const commit = await git.resolveRef({ fs, gitdir, ref: "HEAD" });
  const { commit: parsed } = await git.readCommit({ fs, gitdir, oid: commit, cache });
  const files = new Map<string, BaselineFile>();
  const submodules = new Set<string>();
  const walk = async (treeOid: string, prefix: string): Promise<void> => {
    const { tree } = await git.readTree({ fs, gitdir, oid: treeOid, cache });
    for (const entry of tree) {
      const path = prefix + entry.path;
      if (entry.type === "tree") await walk(entry.oid, `${path}/`);
      else if (entry.type === "commit") submodules.add(path);
      else files.set(path, { oid: entry.oid, mode: fileMode(entry.mode) });
    }
  };
  await walk(parsed.tree, "");
  return { commit, files, submodules, readBlob: (oid, path) => readVerifiedBlob(gitdir, cache, oid, path) };
}

/**
 * The baseline kept where only the collector can write (its own emptyDir), read at its first
 * start. A collector the kubelet restarts while the runtime runs must not read `.git` again: the
 * runtime may have changed it by then. The file holds what was read; base contents are still
 * read by blob id and verified, so the file names nothing it cannot prove.
 */
export async function keptBaseline(checkoutDir: string, file: string | undefined): Promise<Baseline> {
  if (file !== undefined) {
    const kept = await readFile(file, "utf8").then(
      (text) => JSON.parse(text) as { commit: string | null; files: [string, BaselineFile][]; submodules: string[] },
      (err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") return undefined;
        throw err;
      },
    );
    if (kept !== undefined) {
      if (kept.commit === null) return NO_CHECKOUT;
      const gitdir = join(checkoutDir, ".git");
      const cache = {};
      return { commit: kept.commit, files: new Map(kept.files), submodules: new Set(kept.submodules), readBlob: (oid, path) => readVerifiedBlob(gitdir, cache, oid, path) };
    }
  }
  const read = await readBaseline(checkoutDir);
  if (file !== undefined) {
    const temp = `${file}.${process.pid}.tmp`;
    await writeFile(temp, JSON.stringify({ commit: read.commit, files: [...read.files], submodules: [...read.submodules] }));
    await rename(temp, file);
  }
  return read;
}

/** Git writes 100664 and other group-writable modes in old trees; it reads them as 100644. */
function fileMode(mode: string): FileMode {
  if (mode === "120000" || mode === "100755") return mode;
  return "100644";
}

/**
 * Reads a blob and checks it is what its id names. isomorphic-git verifies loose objects only
 * when asked for their content and packed ones not at all, so the object is asked for in its
 * raw form and hashed here, whichever way it is stored.
 */
async function readVerifiedBlob(gitdir: string, cache: object, oid: string, path: string): Promise<Buffer> {
  let read;
  try {
    read = await git.readObject({ fs, gitdir, oid, format: "wrapped", cache });
  } catch (err) {
    throw new Error(`cannot read ${path} (blob ${oid}) from the checkout's .git: ${err instanceof Error ? err.message : String(err)}`);
  }
  const changed = (actual: string) => new TamperedBlob(`${path}: blob ${oid} in the checkout's .git hashes to ${actual}: it was changed after the checkout, so the patch cannot be made against it`);
  if (read.format === "wrapped") {
    // A loose object as stored, `<type> <length>\0<content>`: its id is the hash of all of it.
    const object = Buffer.from(read.object);
    const actual = createHash("sha1").update(object).digest("hex");
    if (actual !== oid) throw changed(actual);
    const nul = object.indexOf(0);
    if (!object.subarray(0, nul).toString("latin1").startsWith("blob ")) throw new TamperedBlob(`${path}: ${oid} in the checkout's .git is not a blob`);
    return object.subarray(nul + 1);
  }
  if (read.format !== "content" || read.type !== "blob") throw new TamperedBlob(`${path}: ${oid} in the checkout's .git is not a blob`);
  const content = Buffer.from(read.object);
  const actual = gitBlobId(content);
  if (actual !== oid) throw changed(actual);
  return content;
}
