// The collector's patch, checked against the real git: a repository made here, a working tree
// changed the ways an agent changes one, and `git apply` of the patch on a clean clone of the
// checked-out commit, which must give back the same files, byte for byte, mode for mode (binary
// files are named in the patch, not carried, and are left out of the comparison). Then the
// baseline's defences: a blob changed in .git after the start, a HEAD moved after the start, and
// the verification result the runtime writes.
import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { gitBlobId, keptBaseline, readBaseline, TamperedBlob } from "../../functions/evidence/baseline.js";
import { type RunningCollector, startCollector } from "../../functions/evidence/collect.js";
import { collectedEvidenceSchema } from "../../functions/evidence/collected.js";
import { quotePath } from "../../functions/evidence/patch-entry.js";
import { firstBytes, MAX_OUTPUT_BYTES, parseVerification, readVerification } from "../../functions/evidence/verification.js";
import { worktreePatch } from "../../functions/evidence/worktree-patch.js";
import { tempDirs } from "../support/temp.js";

const tempDir = tempDirs();

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=test@berth.invalid", "-c", "user.name=test", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function write(root: string, path: string, content: string | Buffer): void {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), content);
}

/** A repository with one commit holding `files`, checked out detached as the checkout container leaves it. */
function repository(files: Record<string, string | Buffer>, setup?: (dir: string) => void): { dir: string; commit: string } {
  const dir = join(tempDir("berth-evidence-repo-"), "src");
  mkdirSync(dir);
  git(dir, "init", "-q");
  for (const [path, content] of Object.entries(files)) write(dir, path, content);
  setup?.(dir);
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "base");
  const commit = git(dir, "rev-parse", "HEAD").trim();
  git(dir, "checkout", "-q", "--detach", commit);
  return { dir, commit };
}

/** Every file and link under `root` but .git: path -> mode and content (a link's is its target). */
function snapshot(root: string, skip: (path: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string, prefix: string) => {
    for (const name of readdirSync(dir)) {
      if (name === ".git") continue;
      const path = prefix + name;
      const absolute = join(dir, name);
      const stat = lstatSync(absolute);
      if (stat.isDirectory()) walk(absolute, `${path}/`);
      else if (skip(path)) continue;
      else if (stat.isSymbolicLink()) out.set(path, `link -> ${readlinkSync(absolute)}`);
      else out.set(path, `${stat.mode & 0o100 ? "755" : "644"} ${readFileSync(absolute).toString("base64")}`);
    }
  };
  walk(root, "");
  return out;
}

/** Applies `patch` with the real git on a fresh clone of `commit`, and returns the clone's snapshot. */
function applyOnClone(origin: string, commit: string | null, patch: string, exclude: string[] = []): string {
  const clone = join(tempDir("berth-evidence-clone-"), "src");
  if (commit) {
    git(origin, "clone", "-q", "--no-checkout", origin, clone);
    git(clone, "checkout", "-q", "--detach", commit);
  } else {
    mkdirSync(clone);
    git(clone, "init", "-q");
  }
  const patchFile = join(clone, "..", "changes.patch");
  writeFileSync(patchFile, patch);
  git(clone, "apply", "--whitespace=nowarn", ...exclude.map((p) => `--exclude=${p}`), patchFile);
  return clone;
}

const lines = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} ${i + 1}`).join("\n") + "\n";

describe("the working tree's patch, applied by git", () => {
  it("reproduces every text file, link and mode the runtime left, and names the binary files", async () => {
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x01, 0xff]);
    const { dir, commit } = repository(
      {
        "README.md": lines(40, "line"),
        "src/deleted.txt": "going away\n",
        "src/kept.txt": "unchanged\n",
        "noeol.txt": "first\nlast without newline",
        "gains-eol.txt": "no newline yet",
        "becomes-empty.txt": "something\n",
        "empty-deleted.txt": "",
        "crlf.txt": "one\r\ntwo\r\nthree\r\n",
        "bom.txt": "\ufeffwith a byte-order mark\n",
        "run.sh": "#!/bin/sh\necho hi\n",
        "logo.bin": binary,
        "latin1.txt": Buffer.from("caf\xe9\n", "latin1"),
        "link-changed": "",
        "rewritten.txt": lines(20_000, "old"),
        ".gitignore": "build/\n",
      },
      (d) => {
        rmSync(join(d, "link-changed"));
        symlinkSync("README.md", join(d, "link-changed"));
      },
    );
    const baseline = await readBaseline(dir);
    expect(baseline.commit).toBe(commit);

    // The runtime's work.
    write(dir, "README.md", lines(40, "line").replace("line 3\n", "line three\n").replace("line 30\n", "line 30\nline 30.5\n"));
    unlinkSync(join(dir, "src/deleted.txt"));
    unlinkSync(join(dir, "empty-deleted.txt"));
    write(dir, "new/deeper/added.txt", "hello\nworld\n");
    write(dir, "new/empty.txt", "");
    write(dir, "noeol.txt", "first\nsecond\nlast without newline");
    write(dir, "gains-eol.txt", "no newline yet\n");
    write(dir, "becomes-empty.txt", "");
    write(dir, "crlf.txt", "one\r\n2\r\nthree\r\n");
    write(dir, "bom.txt", "\ufeffwith a byte-order mark, changed\n");
    chmodSync(join(dir, "run.sh"), 0o755);
    write(dir, "logo.bin", Buffer.concat([binary, Buffer.from([0x02])]));
    write(dir, "new/picture.bin", Buffer.from([0, 1, 2, 3]));
    write(dir, "latin1.txt", Buffer.from("caf\xe9 au lait\n", "latin1"));
    write(dir, "build/out.txt", "ignored by .gitignore, yet the agent's output\n");
    write(dir, "dir with space/naïve \"quoted\".txt", "quoted path\n");
    rmSync(join(dir, "link-changed"));
    symlinkSync("new/deeper/added.txt", join(dir, "link-changed"));
    symlinkSync("../outside/the/checkout", join(dir, "new/link"));
    write(dir, "rewritten.txt", lines(20_000, "new"));
    mkdirSync(join(dir, "vendor/lib/.git"), { recursive: true });
    write(dir, "vendor/lib/.git/HEAD", "a nested repository's git dir is not part of the patch\n");

    const { patch, truncated, files } = await worktreePatch(dir, baseline);
    expect(truncated).toBe(false);
    // Deleted: src/deleted.txt, empty-deleted.txt. Added: new/deeper/added.txt, new/empty.txt,
    // new/picture.bin, build/out.txt, the quoted one, new/link.
    expect(files).toEqual({ added: 6, modified: 11, deleted: 2 });
    const binaries = ["logo.bin", "new/picture.bin", "latin1.txt"];
    expect(patch).toContain("diff --git a/logo.bin b/logo.bin\nindex ");
    expect(patch).toContain("\nBinary files a/logo.bin and b/logo.bin differ\n");
    expect(patch).toContain("\nBinary files /dev/null and b/new/picture.bin differ\n");
    expect(patch).toContain("diff --git a/new/empty.txt b/new/empty.txt\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n");
    expect(patch).toContain("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n");
    expect(patch).toContain("\n--- a/src/deleted.txt\n+++ /dev/null\n");
    expect(patch).toContain("\\ No newline at end of file\n");
    expect(patch).not.toContain(".git/");
    expect(patch).not.toContain("kept.txt");
    // Paths in byte order, as git writes them (the quoted one aside).
    const order = [...patch.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(order).toContain("new/deeper/added.txt");
    expect(order).toEqual([...order].sort((a, b) => Buffer.compare(Buffer.from(a!), Buffer.from(b!))));

    // Not UTF-8, so named as binary: the patch travels as a JSON string.
    expect(patch).toContain("\nBinary files a/latin1.txt and b/latin1.txt differ\n");
    const clone = applyOnClone(dir, commit, patch, binaries);
    const isBinary = (p: string) => binaries.includes(p);
    expect(snapshot(clone, isBinary)).toEqual(snapshot(dir, (p) => isBinary(p) || p.startsWith("vendor/lib/.git")));
  });

  it("with no checkout, adds every file to an empty repository", async () => {
    const dir = join(tempDir("berth-evidence-nocheckout-"), "src");
    write(dir, "a.txt", "a\n");
    write(dir, "sub/b.txt", "b");
    const baseline = await readBaseline(dir);
    expect(baseline.commit).toBeNull();
    const { patch, files } = await worktreePatch(dir, baseline);
    expect(files).toEqual({ added: 2, modified: 0, deleted: 0 });
    const clone = applyOnClone(dir, null, patch);
    expect(snapshot(clone)).toEqual(snapshot(dir));
  });

  it("with no checkout directory at all, proposes nothing", async () => {
    const dir = join(tempDir("berth-evidence-nodir-"), "missing");
    const baseline = await readBaseline(dir);
    expect(await worktreePatch(dir, baseline)).toEqual({ patch: "", truncated: false, files: { added: 0, modified: 0, deleted: 0 } });
  });

  it("past the cap, keeps whole entries only, says so, and what it keeps still applies", async () => {
    const { dir, commit } = repository({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" });
    const baseline = await readBaseline(dir);
    write(dir, "a.txt", "a changed\n");
    write(dir, "b.txt", lines(200, "big"));
    write(dir, "c.txt", "c changed\n");
    const full = await worktreePatch(dir, baseline);
    const capped = await worktreePatch(dir, baseline, 1024);
    expect(Buffer.byteLength(full.patch)).toBeGreaterThan(1024);
    expect(capped.truncated).toBe(true);
    expect(capped.files).toEqual(full.files);
    expect(Buffer.byteLength(capped.patch)).toBeLessThanOrEqual(1024);
    expect(capped.patch).toContain("diff --git a/a.txt b/a.txt");
    expect(capped.patch).not.toContain("b.txt");
    // A smaller entry after the one that did not fit is kept.
    expect(capped.patch).toContain("diff --git a/c.txt b/c.txt");
    const clone = applyOnClone(dir, commit, capped.patch);
    expect(readFileSync(join(clone, "a.txt"), "utf8")).toBe("a changed\n");
    expect(readFileSync(join(clone, "b.txt"), "utf8")).toBe("b\n");
    expect(readFileSync(join(clone, "c.txt"), "utf8")).toBe("c changed\n");
  });

  it("quotes paths the way git does", () => {
    expect(quotePath("a/plain path.txt")).toBe("a/plain path.txt");
    expect(quotePath('a/tab\there "q" \\')).toBe('"a/tab\\there \\"q\\" \\\\"');
    expect(quotePath("a/naïve")).toBe('"a/na\\303\\257ve"');
  });
});

describe("the trusted baseline", () => {
  it("gives the id git gives", () => {
    const { dir } = repository({ "x.txt": "some content\n" });
    expect(gitBlobId(Buffer.from("some content\n"))).toBe(git(dir, "rev-parse", "HEAD:x.txt").trim());
  });

  it("refuses a base blob changed in .git after the start: it does not hash to its id", async () => {
    const { dir } = repository({ "a.txt": "original\n", "b.txt": "other\n" });
    const baseline = await readBaseline(dir);
    const oid = git(dir, "rev-parse", "HEAD:a.txt").trim();
    // The runtime rewrites the loose object so that the patch would hide what it changed.
    const object = join(dir, ".git/objects", oid.slice(0, 2), oid.slice(2));
    chmodSync(object, 0o644);
    writeFileSync(object, deflateSync(Buffer.from("blob 8\0innocent")));
    write(dir, "a.txt", "original\nplus a backdoor\n");
    const failure = await worktreePatch(dir, baseline).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(TamperedBlob);
    expect((failure as Error).message).toContain(`blob ${oid}`);
    expect((failure as Error).message).toContain("hashes to");
  });

  it("keeps the commit read at the start when HEAD is moved afterwards", async () => {
    const { dir, commit } = repository({ "a.txt": "one\n" });
    const baseline = await readBaseline(dir);
    write(dir, "a.txt", "two\n");
    git(dir, "commit", "-q", "-am", "the agent commits");
    expect(git(dir, "rev-parse", "HEAD").trim()).not.toBe(commit);
    const { patch, files } = await worktreePatch(dir, baseline);
    expect(baseline.commit).toBe(commit);
    expect(files.modified).toBe(1);
    expect(patch).toContain("-one\n+two\n");
  });

  it("a collector restarted while the runtime runs reads the baseline it kept, not the .git the runtime changed", async () => {
    const { dir, commit } = repository({ "a.txt": "one\n" });
    const kept = join(tempDir("berth-evidence-kept-"), "baseline.json");
    expect((await keptBaseline(dir, kept)).commit).toBe(commit);
    // The runtime commits, and moves HEAD; then the kubelet restarts the collector.
    write(dir, "a.txt", "two\n");
    git(dir, "commit", "-q", "-am", "the agent commits");
    const restarted = await keptBaseline(dir, kept);
    expect(restarted.commit).toBe(commit);
    expect((await worktreePatch(dir, restarted)).patch).toContain("-one\n+two\n");
    // Without the kept file, a second read would take the runtime's HEAD: the file is what protects it.
    expect((await keptBaseline(dir, undefined)).commit).not.toBe(commit);
  });

  it("reads packed objects and verifies them too", async () => {
    const { dir, commit } = repository({ "a.txt": lines(50, "packed") });
    git(dir, "gc", "-q", "--prune=now");
    expect(readdirSync(join(dir, ".git/objects/pack")).some((f) => f.endsWith(".pack"))).toBe(true);
    const baseline = await readBaseline(dir);
    write(dir, "a.txt", lines(50, "packed").replace("packed 7\n", "changed 7\n"));
    const { patch } = await worktreePatch(dir, baseline);
    const clone = applyOnClone(dir, commit, patch);
    expect(readFileSync(join(clone, "a.txt"), "utf8")).toBe(readFileSync(join(dir, "a.txt"), "utf8"));
  });
});

describe("the collector's answers", () => {
  let collector: RunningCollector | undefined;
  afterEach(async () => {
    await collector?.close();
    collector = undefined;
  });
  const silent = pino({ level: "silent" });

  it("waits for SIGTERM, then serves the evidence once; /done only afterwards", async () => {
    const { dir, commit } = repository({ "a.txt": "a\n" });
    const verificationFile = join(dir, "..", "verification.json");
    collector = await startCollector({ checkoutDir: dir, port: 0, verificationFile, host: "127.0.0.1" }, silent);
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
    expect(evidence).toMatchObject({ commit, patchTruncated: false, files: { added: 0, modified: 1, deleted: 0 }, verification: { exitCode: 3, output: "2 tests failed" } });
    // Computed once: a later change is not seen.
    write(dir, "a.txt", "c\n");
    expect(await (await fetch(`${url}/evidence`)).json()).toEqual(evidence);

    let done = false;
    void collector.done.then(() => (done = true));
    expect((await fetch(`${url}/done`, { method: "POST" })).status).toBe(200);
    await collector.done;
    expect(done).toBe(true);
  });

  it("answers 500 with the error when a base blob was tampered with", async () => {
    const { dir } = repository({ "a.txt": "original\n" });
    collector = await startCollector({ checkoutDir: dir, port: 0, verificationFile: join(dir, "..", "none.json"), host: "127.0.0.1" }, silent);
    await collector.ready;
    const oid = git(dir, "rev-parse", "HEAD:a.txt").trim();
    const object = join(dir, ".git/objects", oid.slice(0, 2), oid.slice(2));
    chmodSync(object, 0o644);
    writeFileSync(object, deflateSync(Buffer.from("blob 4\0fake")));
    write(dir, "a.txt", "changed\n");
    collector.runtimeEnded();
    const res = await fetch(`http://127.0.0.1:${collector.port}/evidence`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toContain(`blob ${oid}`);
  });

  it("answers 500 when the checkout's .git cannot be read", async () => {
    const dir = join(tempDir("berth-evidence-broken-"), "src");
    write(dir, ".git/HEAD", "not a ref\n");
    collector = await startCollector({ checkoutDir: dir, port: 0, verificationFile: join(dir, "..", "none.json"), host: "127.0.0.1" }, silent);
    await collector.ready;
    // The startup probe still passes: the runtime runs, and the error is the evidence's.
    expect((await fetch(`http://127.0.0.1:${collector.port}/healthz`)).status).toBe(200);
    collector.runtimeEnded();
    const res = await fetch(`http://127.0.0.1:${collector.port}/evidence`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: string }).error).toContain("cannot read the checkout");
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
