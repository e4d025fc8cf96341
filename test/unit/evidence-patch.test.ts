// The collector's patch, judged by the real git CLI. Each case makes a repository, checks it out
// as Berth's checkout leaves it, lets the collector copy its baseline, does to the working tree
// and .git what a runtime does, and makes the patch. Then git is the judge:
// - the tree git itself makes of the runtime's working tree (`add -A` against a pristine clone,
//   with what the case expects left out put back) is the one `git apply --index` of the patch
//   gives on a fresh clone of the commit;
// - plain `git apply` takes the patch too;
// - what is left out is named, and nothing else is.
// The case table in docs/lifecycle.md is this table. Then the collector's answers.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { keptBaseline } from "../../functions/evidence/baseline.js";
import { type RunningCollector, startCollector } from "../../functions/evidence/collect.js";
import { collectedEvidenceSchema } from "../../functions/evidence/collected.js";
import { firstBytes, MAX_OUTPUT_BYTES, parseVerification, readVerification } from "../../functions/evidence/verification.js";
import { MAX_NAMED, pathName, worktreePatch } from "../../functions/evidence/worktree-patch.js";
import { tempDirs } from "../support/temp.js";

const tempDir = tempDirs();

const IDENTITY = ["-c", "user.email=test@berth.invalid", "-c", "user.name=test", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"];
/** git as a developer runs it, without this machine's own config. */
function git(cwd: string, args: string[], env: Record<string, string> = {}): string {
  return execFileSync("git", [...IDENTITY, ...args], {
    cwd,
    encoding: "latin1",
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", ...env },
  });
}

/** Writes `content` at `path` under `root`; a Buffer path is a name that is not UTF-8. */
function write(root: string, path: string | Buffer, content: string | Buffer): void {
  if (typeof path === "string") mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(Buffer.concat([Buffer.from(`${root}/`), Buffer.from(path)]), content);
}

interface Repository {
  dir: string;
  commit: string;
  /** A clone made before the runtime starts, with the checkout's settings: git's own view of the commit. */
  pristine: string;
}

interface Made {
  /** Files of the commit (path: content; a `-> target` string is a symbolic link). */
  files: Record<string, string | Buffer>;
  /** Run in the new repository before the commit (settings, attributes, an alternate). */
  setup?: (dir: string) => void;
  /** `git init` options (an object format). */
  init?: string[];
  /** Checkout settings; the pristine clone takes those of core (git's own view has no filter commands). */
  config?: Record<string, string>;
  /** Run on the checkout before the collector copies it. */
  after?: (dir: string) => void;
}

function repository(made: Made): Repository {
  const dir = join(tempDir("berth-evidence-repo-"), "src");
  mkdirSync(dir);
  git(dir, ["init", "-q", ...(made.init ?? [])]);
  for (const [key, value] of Object.entries(made.config ?? {})) git(dir, ["config", key, value]);
  for (const [path, content] of Object.entries(made.files)) {
    if (typeof content === "string" && content.startsWith("-> ")) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      symlinkSync(content.slice(3), join(dir, path));
    } else write(dir, path, content);
  }
  made.setup?.(dir);
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-q", "--allow-empty", "-m", "base"]);
  const commit = git(dir, ["rev-parse", "HEAD"]).trim();
  git(dir, ["checkout", "-q", "--detach", commit]);
  // As the checkout leaves it: every file written from the commit, the index fresh.
  rmSync(join(dir, ".git/index"));
  for (const path of Object.keys(made.files)) rmSync(join(dir, path), { force: true });
  git(dir, ["checkout", "-q", "-f", commit]);
  made.after?.(dir);
  const pristine = join(tempDir("berth-evidence-pristine-"), "src");
  git(dir, ["clone", "-q", "--no-local", "--no-checkout", dir, pristine]);
  for (const [key, value] of Object.entries(made.config ?? {})) if (key.startsWith("core.")) git(pristine, ["config", key, value]);
  return { dir, commit, pristine };
}

/** The tree git makes of `workTree` with the pristine clone's objects and settings, `leftOut` put back as the commit has them. */
function gitsOwnTree(repo: Repository, workTree: string, leftOut: string[]): string {
  const env = { GIT_DIR: join(repo.pristine, ".git"), GIT_WORK_TREE: workTree, GIT_INDEX_FILE: join(tempDir("berth-evidence-index-"), "index"), GIT_LITERAL_PATHSPECS: "1" };
  git(repo.pristine, ["read-tree", repo.commit], env);
  try {
    git(repo.pristine, ["add", "-A", "--ignore-errors"], env);
  } catch {
    // Paths git refuses are named by the collector; the rest is added.
  }
  for (const path of leftOut) git(repo.pristine, ["reset", "-q", repo.commit, "--", path], env);
  return git(repo.pristine, ["write-tree"], env).trim();
}

/** A fresh clone of the commit, the patch applied with `args`; returns the clone. */
function applied(repo: Repository, patch: Buffer, args: string[]): string {
  const clone = join(tempDir("berth-evidence-clone-"), "src");
  git(repo.pristine, ["clone", "-q", "--no-local", "--no-checkout", repo.pristine, clone]);
  git(clone, ["checkout", "-q", "--detach", repo.commit]);
  const file = join(clone, "..", "changes.patch");
  writeFileSync(file, patch);
  git(clone, ["apply", "--whitespace=nowarn", ...args, file]);
  return clone;
}

interface PatchCase {
  name: string;
  /** What Berth's collector did at 539ceab (isomorphic-git and a patch written in JavaScript). */
  before: string;
  repository: Made;
  runtime: (dir: string) => void;
  /** Paths the patch must name and leave out; none when omitted. */
  leftOut?: string[];
  files?: { added: number; modified: number; deleted: number };
}

/** What the checkout's filter command would create if anything ran it. */
const FILTER_RAN = join(tempDir("berth-evidence-filter-"), "ran");

const lines = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} ${i + 1}`).join("\n") + "\n";
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x01, 0xff, 0x00]);

export const PATCH_CASES: PatchCase[] = [
  {
    name: "text edits, additions, deletions, modes, links, line endings, a file that becomes a directory",
    before: "applied",
    repository: { files: { "README.md": lines(40, "line"), "gone.txt": "x\n", "noeol.txt": "a\nb", "crlf.txt": "one\r\ntwo\r\n", "run.sh": "#!/bin/sh\n", link: "-> README.md", swap: "file\n", "empty.txt": "" } },
    runtime: (d) => {
      write(d, "README.md", lines(40, "line").replace("line 3\n", "line three\n"));
      unlinkSync(join(d, "gone.txt"));
      write(d, "noeol.txt", "a\nb\nc");
      write(d, "crlf.txt", "one\r\n2\r\n");
      chmodSync(join(d, "run.sh"), 0o755);
      unlinkSync(join(d, "link"));
      symlinkSync("../outside/the/checkout", join(d, "link"));
      unlinkSync(join(d, "swap"));
      write(d, "swap/inside.txt", "now a directory\n");
      write(d, "dir with space/naïve \"quoted\".txt", "quoted path\n");
      write(d, "empty.txt", "not empty\n");
    },
    files: { added: 2, modified: 6, deleted: 2 },
  },
  {
    name: "binary files changed and added",
    before: "named only (`Binary files ... differ`): `git apply` refused the whole patch",
    repository: { files: { "logo.png": PNG, "a.txt": "a\n" } },
    runtime: (d) => {
      write(d, "logo.png", Buffer.concat([PNG, Buffer.from([1, 2, 3])]));
      write(d, "new.bin", Buffer.from([0, 1, 2, 3, 255]));
      write(d, "a.txt", "b\n");
    },
    files: { added: 1, modified: 2, deleted: 0 },
  },
  {
    name: "a Latin-1 text file",
    before: "called binary and named only: `git apply` refused the whole patch",
    repository: { files: { "latin1.txt": Buffer.from("caf\xe9\n", "latin1") } },
    runtime: (d) => write(d, "latin1.txt", Buffer.from("caf\xe9 au lait\n", "latin1")),
  },
  {
    name: "file names that are not UTF-8, and base paths isomorphic-git refuses (a backslash, `...`, ` /x`)",
    before: "the baseline failed (isomorphic-git: `The filepath \" \" contains unsafe character sequences`)",
    repository: { files: { "back\\slash.txt": "1\n", "...": "2\n", " /x": "3\n" } },
    runtime: (d) => {
      write(d, "back\\slash.txt", "one\n");
      write(d, "...", "two\n");
      write(d, " /x", "three\n");
      write(d, Buffer.from("n\xffme.txt", "latin1"), "not UTF-8\n");
    },
    files: { added: 1, modified: 3, deleted: 0 },
  },
  {
    name: ".gitattributes conversions on untouched files (eol=crlf, text=auto, ident, working-tree-encoding) and core.autocrlf",
    before: "6 files counted as modified where 1 was",
    repository: {
      files: {
        ".gitattributes": "*.crlf eol=crlf\n*.txt text=auto\n*.id ident\n*.utf16 text working-tree-encoding=UTF-16\n",
        "a.crlf": "one\ntwo\n",
        "b.txt": "three\n",
        "c.id": "$Id$\n",
        "d.utf16": Buffer.from("\ufeffwide\n", "utf16le"),
        "changed.txt": "before\n",
      },
      config: { "core.autocrlf": "true" },
    },
    runtime: (d) => write(d, "changed.txt", "after\r\n"),
    files: { added: 0, modified: 1, deleted: 0 },
  },
  {
    name: "a clean/smudge filter in the checkout's config",
    before: "the same: no command ran",
    repository: {
      files: { ".gitattributes": "*.secret filter=run\n", "a.secret": "kept\n" },
      config: { "filter.run.clean": `touch ${FILTER_RAN} && cat`, "filter.run.smudge": "cat" },
    },
    runtime: (d) => write(d, "b.txt", "new\n"),
    files: { added: 1, modified: 0, deleted: 0 },
  },
  {
    name: "paths git apply refuses: `.GIT/config`, `git~1/x`, a symbolic link .gitmodules",
    before: "carried and not named: `git apply` refused the whole patch",
    repository: { files: { "a.txt": "a\n" } },
    runtime: (d) => {
      write(d, ".GIT/config", "[core]\n");
      write(d, "git~1/x", "x\n");
      symlinkSync("a.txt", join(d, ".gitmodules"));
      write(d, "a.txt", "still carried\n");
    },
    leftOut: [".GIT/config", "git~1/x", ".gitmodules"],
    files: { added: 3, modified: 1, deleted: 0 },
  },
  {
    name: "the runtime removes .git",
    before: "500 (`cannot read a.txt (blob ...) from the checkout's .git`), and nothing was exported",
    repository: { files: { "a.txt": "a\n", "b.txt": "b\n" } },
    runtime: (d) => {
      rmSync(join(d, ".git"), { recursive: true });
      write(d, "a.txt", "changed\n");
    },
  },
  {
    name: "the runtime rewrites history and prunes",
    before: "500 (`Could not find <blob>`), and nothing was exported",
    repository: { files: { "a.txt": "a\n" } },
    runtime: (d) => {
      write(d, "a.txt", "rewritten\n");
      git(d, ["checkout", "-q", "--orphan", "fresh"]);
      git(d, ["add", "-A"]);
      git(d, ["commit", "-q", "-m", "history rewritten"]);
      git(d, ["branch", "-D", "main"]);
      git(d, ["reflog", "expire", "--expire=now", "--all"]);
      git(d, ["gc", "-q", "--prune=now"]);
      write(d, "a.txt", "and changed again\n");
    },
  },
  {
    name: "repositories inside the checkout: a clone with a commit, an empty `git init`",
    before: "not named; the nested repositories' files carried as the checkout's own",
    repository: { files: { "a.txt": "a\n" } },
    runtime: (d) => {
      const nested = join(d, "vendor/lib");
      mkdirSync(nested, { recursive: true });
      git(nested, ["init", "-q"]);
      write(nested, "f.txt", "f\n");
      git(nested, ["add", "-A"]);
      git(nested, ["commit", "-q", "-m", "nested"]);
      mkdirSync(join(d, "empty"));
      git(join(d, "empty"), ["init", "-q"]);
      write(d, "a.txt", "b\n");
    },
    leftOut: ["vendor/lib", "empty"],
    files: { added: 2, modified: 1, deleted: 0 },
  },
  {
    name: "a checkout in SHA-256 object format",
    before: "the patch failed after the runtime had run (`Could not find <sha-256 id>`)",
    repository: { files: { "a.txt": "a\n", "b.bin": PNG }, init: ["--object-format=sha256"] },
    runtime: (d) => {
      write(d, "a.txt", "b\n");
      write(d, "b.bin", Buffer.concat([PNG, PNG]));
    },
  },
  {
    name: "a checkout whose objects are in an alternate",
    before: "the patch failed after the runtime had run (`Could not find <blob>`)",
    repository: {
      files: { "a.txt": "a\n", "b.bin": PNG },
      after: (d) => {
        // Every object moved to a shared store the collector can read.
        git(d, ["repack", "-q", "-a", "-d"]);
        git(d, ["prune-packed"]);
        const shared = join(tempDir("berth-evidence-alternate-"), "objects");
        mkdirSync(shared);
        execFileSync("mv", [join(d, ".git/objects/pack"), shared]);
        mkdirSync(join(d, ".git/objects/pack"));
        writeFileSync(join(d, ".git/objects/info/alternates"), `${shared}\n`);
      },
    },
    runtime: (d) => write(d, "a.txt", "b\n"),
  },
  {
    name: "a file over the cap beside small changes",
    before: "counted and marked truncated, not named",
    repository: { files: { "a.txt": "a\n", "big.bin": "small\n" } },
    runtime: (d) => {
      write(d, "big.bin", Buffer.alloc(9 * 1024 * 1024, 7));
      write(d, "huge-new.log", Buffer.alloc(9 * 1024 * 1024, 65));
      write(d, "a.txt", "b\n");
    },
    leftOut: ["big.bin", "huge-new.log"],
    files: { added: 1, modified: 2, deleted: 0 },
  },
  {
    name: "the runtime removes the checkout directory",
    before: "500 (`cannot read a.txt ...`): the .git went with it",
    repository: { files: { "a.txt": "a\n", "sub/b.txt": "b\n" } },
    runtime: (d) => rmSync(d, { recursive: true }),
    files: { added: 0, modified: 0, deleted: 2 },
  },
];

describe("the working tree's patch, judged by git", () => {
  it.each(PATCH_CASES)("$name", async (c) => {
    const repo = repository(c.repository);
    rmSync(FILTER_RAN, { force: true });
    const baseline = await keptBaseline(repo.dir, tempDir("berth-evidence-baseline-"));
    expect(baseline.commit).toBe(repo.commit);
    c.runtime(repo.dir);

    const made = await worktreePatch(repo.dir, baseline);
    // No command of the checkout's config ran.
    expect(existsSync(FILTER_RAN)).toBe(false);
    expect(made.leftOut.map((l) => l.path).sort()).toEqual([...(c.leftOut ?? [])].sort());
    if (c.files) expect(made.files).toEqual(c.files);
    expect(made.patch.length).toBeGreaterThan(0);

    const workTree = existsSync(repo.dir) ? repo.dir : tempDir("berth-evidence-gone-");
    const want = gitsOwnTree(repo, workTree, c.leftOut ?? []);
    expect(want).not.toBe(git(repo.pristine, ["rev-parse", `${repo.commit}^{tree}`]).trim());
    const indexed = applied(repo, made.patch, ["--index"]);
    expect(git(indexed, ["write-tree"]).trim()).toBe(want);
    const plain = applied(repo, made.patch, []);
    git(plain, ["add", "-A"]);
    expect(git(plain, ["write-tree"]).trim()).toBe(want);
  });

  it("is the case table of docs/lifecycle.md", () => {
    const doc = readFileSync(join(import.meta.dirname, "../../docs/lifecycle.md"), "utf8");
    const rows = doc.split("\n").filter((line) => line.startsWith("| ") && !line.startsWith("| case") && !line.startsWith("| ---"));
    for (const c of PATCH_CASES) expect(rows.some((row) => row.startsWith(`| ${c.name} | ${c.before} | `) && (c.leftOut ?? []).every((p) => row.includes(`\`${p}\``))), c.name).toBe(true);
  });

  it("is empty when nothing changed, attributes or not", async () => {
    const repo = repository({ files: { ".gitattributes": "* text=auto eol=crlf\n", "a.txt": "a\nb\n", "b.png": PNG } });
    const baseline = await keptBaseline(repo.dir, tempDir("berth-evidence-baseline-"));
    expect(await worktreePatch(repo.dir, baseline)).toEqual({ patch: Buffer.alloc(0), leftOut: [], files: { added: 0, modified: 0, deleted: 0 } });
  });

  it("with no checkout, adds every file to an empty repository", async () => {
    const dir = join(tempDir("berth-evidence-nocheckout-"), "src");
    write(dir, "a.txt", "a\n");
    write(dir, "sub/b.bin", PNG);
    const baseline = await keptBaseline(dir, tempDir("berth-evidence-baseline-"));
    expect(baseline.commit).toBeNull();
    const { patch, files } = await worktreePatch(dir, baseline);
    expect(files).toEqual({ added: 2, modified: 0, deleted: 0 });
    const clone = join(tempDir("berth-evidence-clone-"), "src");
    mkdirSync(clone);
    git(clone, ["init", "-q"]);
    writeFileSync(join(clone, "..", "p"), patch);
    git(clone, ["apply", "--index", join(clone, "..", "p")]);
    expect(readFileSync(join(clone, "sub/b.bin"))).toEqual(PNG);
  });

  it("past the cap, keeps whole entries in git's order, names the rest, and what it keeps applies", async () => {
    const repo = repository({ files: { "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" } });
    const baseline = await keptBaseline(repo.dir, tempDir("berth-evidence-baseline-"));
    write(repo.dir, "a.txt", "a changed\n");
    write(repo.dir, "b.txt", lines(200, "big"));
    write(repo.dir, "c.txt", "c changed\n");
        // b.txt itself is under the cap; its part of the patch is not.
    const capped = await worktreePatch(repo.dir, baseline, 1600);
    expect(capped.patch.length).toBeLessThanOrEqual(1600);
    expect(capped.leftOut).toEqual([{ path: "b.txt", reason: "its part of the patch would pass the patch's cap of 1600 bytes" }]);
    expect(capped.files).toEqual({ added: 0, modified: 3, deleted: 0 });
    const clone = applied(repo, capped.patch, ["--index"]);
    expect(readFileSync(join(clone, "a.txt"), "utf8")).toBe("a changed\n");
    expect(readFileSync(join(clone, "b.txt"), "utf8")).toBe("b\n");
    expect(readFileSync(join(clone, "c.txt"), "utf8")).toBe("c changed\n");
  });

  it("past the cap, leaves out a file that became a directory together with what it became, so the rest applies", async () => {
    const repo = repository({ files: { "a.txt": "a\n", swap: lines(40, "file"), "z.txt": "z\n" } });
    const baseline = await keptBaseline(repo.dir, tempDir("berth-evidence-baseline-"));
    write(repo.dir, "a.txt", lines(40, "fills the cap"));
    unlinkSync(join(repo.dir, "swap"));
    write(repo.dir, "swap/inside.txt", "now a directory\n");
    write(repo.dir, "z.txt", "z changed\n");
    const full = await worktreePatch(repo.dir, baseline);
    const entry = (path: string) => full.patch.toString().split(/(?=^diff --git )/m).find((e) => e.startsWith(`diff --git a/${path} `))!;
    // Room for a.txt, swap/inside.txt and z.txt, not for the (longer) deletion of swap.
    const cap = entry("a.txt").length + entry("swap/inside.txt").length + entry("z.txt").length;
    const made = await worktreePatch(repo.dir, baseline, cap);
    expect(made.leftOut.map((l) => l.path)).toEqual(["swap", "swap/inside.txt"]);
    const clone = applied(repo, made.patch, ["--index"]);
    expect(readFileSync(join(clone, "swap"), "utf8")).toBe(lines(40, "file"));
    expect(readFileSync(join(clone, "z.txt"), "utf8")).toBe("z changed\n");
  });

  it("names at most MAX_NAMED changes it leaves out, and counts the rest", async () => {
    const repo = repository({ files: { "a.txt": "a\n" } });
    const baseline = await keptBaseline(repo.dir, tempDir("berth-evidence-baseline-"));
    for (let i = 0; i < MAX_NAMED + 5; i++) write(repo.dir, `many/${String(i).padStart(4, "0")}.txt`, "x".repeat(64));
    const made = await worktreePatch(repo.dir, baseline, 32);
    expect(made.files.added).toBe(MAX_NAMED + 5);
    expect(made.leftOut).toHaveLength(MAX_NAMED + 1);
    expect(made.leftOut[MAX_NAMED]).toEqual({ path: "", reason: "and 5 more changes left out, not named" });
  });

  it("does not take the checkout's index when an entry would hide its file (assume-unchanged, skip-worktree)", async () => {
    const repo = repository({ files: { "a.txt": "one\n", "b.txt": "two\n" } });
    git(repo.dir, ["update-index", "--assume-unchanged", "a.txt"]);
    git(repo.dir, ["update-index", "--skip-worktree", "b.txt"]);
    const baseline = await keptBaseline(repo.dir, tempDir("berth-evidence-baseline-"));
    write(repo.dir, "a.txt", "ONE\n");
    write(repo.dir, "b.txt", "TWO\n");
    const made = await worktreePatch(repo.dir, baseline);
    expect(made.files).toEqual({ added: 0, modified: 2, deleted: 0 });
  });

  it("a collector restarted while the runtime runs keeps the copy made at its first start", async () => {
    const repo = repository({ files: { "a.txt": "one\n" } });
    const dir = tempDir("berth-evidence-baseline-");
    await keptBaseline(repo.dir, dir);
    write(repo.dir, "a.txt", "two\n");
    git(repo.dir, ["commit", "-q", "-am", "the agent commits"]);
    const restarted = await keptBaseline(repo.dir, dir);
    expect(restarted.commit).toBe(repo.commit);
    expect((await worktreePatch(repo.dir, restarted)).patch.toString()).toContain("-one\n+two\n");
  });

  it("refuses, before the runtime starts, a checkout it cannot copy, naming why", async () => {
    const alternate = repository({ files: { "a.txt": "a\n" } });
    // The objects live in an alternate the collector cannot reach (another volume).
    const elsewhere = join(tempDir("berth-evidence-elsewhere-"), "objects");
    git(alternate.dir, ["repack", "-q", "-a", "-d"]);
    mkdirSync(elsewhere);
    execFileSync("cp", ["-a", join(alternate.dir, ".git/objects/pack"), elsewhere]);
    rmSync(join(alternate.dir, ".git/objects/pack"), { recursive: true });
    writeFileSync(join(alternate.dir, ".git/objects/info/alternates"), "/nonexistent/objects\n");
    await expect(keptBaseline(alternate.dir, tempDir("berth-evidence-baseline-"))).rejects.toThrow(/HEAD|object/);

    const big = repository({ files: { "a.bin": randomBytes(4096) } });
    await expect(keptBaseline(big.dir, tempDir("berth-evidence-baseline-"), 1024)).rejects.toThrow(/more than the 0.0 MiB the collector's volume keeps/);

    const worktree = join(tempDir("berth-evidence-linked-"), "src");
    write(worktree, ".git", "gitdir: /elsewhere\n");
    await expect(keptBaseline(worktree, tempDir("berth-evidence-baseline-"))).rejects.toThrow(/is not a directory/);
  });

  it("names paths as git does", () => {
    expect(pathName(Buffer.from("a/plain path.txt"))).toBe("a/plain path.txt");
    expect(pathName(Buffer.from("naïve"))).toBe("naïve");
    expect(pathName(Buffer.from('tab\there "q"'))).toBe('"tab\\there \\"q\\""');
    expect(pathName(Buffer.from("n\xffme", "latin1"))).toBe('"n\\377me"');
  });
});

describe("the collector's answers", () => {
  let collector: RunningCollector | undefined;
  afterEach(async () => {
    await collector?.close();
    collector = undefined;
  });
  const silent = pino({ level: "silent" });
  const settings = (checkoutDir: string, verificationFile: string) => ({ checkoutDir, port: 0, verificationFile, host: "127.0.0.1", baselineDir: tempDir("berth-evidence-baseline-"), baselineMaxBytes: 64 * 1024 * 1024 });

  it("waits for SIGTERM, then serves the evidence once; /done only afterwards", async () => {
    const { dir, commit } = repository({ files: { "a.txt": "a\n" } });
    const verificationFile = join(dir, "..", "verification.json");
    collector = await startCollector(settings(dir, verificationFile), silent);
    await collector.ready;
    const url = `http://127.0.0.1:${collector.port}`;
    expect(await (await fetch(`${url}/healthz`)).text()).toBe("ok");
    const waiting = await fetch(`${url}/evidence`);
    expect(waiting.status).toBe(503);
    expect(await waiting.json()).toEqual({ waiting: "the runtime has not finished" });
    // The runtime, on the same network, cannot end the collector before its evidence is read.
    expect((await fetch(`${url}/done`, { method: "POST" })).status).toBe(409);

    write(dir, "a.txt", "b\n");
    writeFileSync(verificationFile, JSON.stringify({ exitCode: 3, output: "2 tests failed" }));
    collector.runtimeEnded();
    const first = await fetch(`${url}/evidence`);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("application/json");
    const evidence = collectedEvidenceSchema.parse(await first.json());
    expect(evidence).toMatchObject({ commit, notCollected: null, leftOut: [], files: { added: 0, modified: 1, deleted: 0 }, verification: { exitCode: 3, output: "2 tests failed" } });
    expect(Buffer.from(evidence.patch!, "base64").toString()).toContain("-a\n+b\n");
    // Computed once: a later change is not seen.
    write(dir, "a.txt", "c\n");
    expect(await (await fetch(`${url}/evidence`)).json()).toEqual(evidence);

    let done = false;
    void collector.done.then(() => (done = true));
    expect((await fetch(`${url}/done`, { method: "POST" })).status).toBe(200);
    await collector.done;
    expect(done).toBe(true);
  });

  it("serves the outcome's verification and says why there is no patch when the working tree cannot be read", async () => {
    const { dir } = repository({ files: { "a.txt": "a\n" } });
    const verificationFile = join(dir, "..", "verification.json");
    collector = await startCollector(settings(dir, verificationFile), silent);
    await collector.ready;
    // The runtime replaces the checkout directory with a link to somewhere else.
    rmSync(dir, { recursive: true });
    symlinkSync("/etc", dir);
    writeFileSync(verificationFile, JSON.stringify({ exitCode: 0, output: "ok" }));
    collector.runtimeEnded();
    const res = await fetch(`http://127.0.0.1:${collector.port}/evidence`);
    expect(res.status).toBe(200);
    const evidence = collectedEvidenceSchema.parse(await res.json());
    expect(evidence).toMatchObject({ patch: null, verification: { exitCode: 0, output: "ok" } });
    expect(evidence.notCollected).toContain("is now a symbolic link");
  });

  it("never answers its startup probe when the checkout cannot be copied", async () => {
    const dir = join(tempDir("berth-evidence-broken-"), "src");
    write(dir, ".git/HEAD", "not a ref\n");
    collector = await startCollector(settings(dir, join(dir, "..", "none.json")), silent);
    await expect(collector.ready).rejects.toThrow(/cannot copy the checkout/);
    const probe = await fetch(`http://127.0.0.1:${collector.port}/healthz`);
    expect(probe.status).toBe(500);
    expect(await probe.text()).toContain("cannot copy the checkout");
  });
});

describe("the verification result, reported by the runtime", () => {
  it("is read and validated", async () => {
    const dir = tempDir("berth-evidence-verification-");
    const file = join(dir, "verification.json");
    expect(await readVerification(file)).toEqual({ verification: null });
    writeFileSync(file, JSON.stringify({ exitCode: 0, output: "ok\n" }));
    expect(await readVerification(file)).toEqual({ verification: { exitCode: 0, output: "ok\n" } });
    writeFileSync(file, "{not json");
    expect((await readVerification(file)).problem).toMatch(/is not JSON/);
    writeFileSync(file, JSON.stringify({ exitCode: 1.5, output: 3 }));
    const wrong = await readVerification(file);
    expect(wrong.verification).toBeNull();
    expect(wrong.problem).toContain("exitCode");
    expect(wrong.problem).toContain("output");
  });

  it("caps the output at 64 KiB without cutting a character", () => {
    const output = "é".repeat(MAX_OUTPUT_BYTES); // two bytes each
    const parsed = parseVerification(JSON.stringify({ exitCode: 1, output }));
    expect(Buffer.byteLength(parsed.verification!.output)).toBe(MAX_OUTPUT_BYTES);
    expect(firstBytes("aé", 2)).toBe("a");
    expect(firstBytes("abc", 5)).toBe("abc");
  });

  it("does not follow a link the runtime put in its place", async () => {
    const dir = tempDir("berth-evidence-verification-link-");
    writeFileSync(join(dir, "secret.json"), JSON.stringify({ exitCode: 0, output: "not the runtime's" }));
    symlinkSync(join(dir, "secret.json"), join(dir, "verification.json"));
    const read = await readVerification(join(dir, "verification.json"));
    expect(read.verification).toBeNull();
    expect(read.problem).toMatch(/symbolic link/);
  });
});
