// The real git CLI, as the collector runs it: Debian's git, shipped in the evidence image. The
// patch a reviewer applies with `git apply` is made by the same program, so renames, modes,
// symbolic links, line endings, attributes and binary files are whatever git says they are.
//
// Git reads configuration, hooks and attributes from many places, and several of them run
// commands (a filter's clean command, core.fsmonitor, an external diff, a textconv). Every
// place but the baseline copy's own config is shut here: no system or global config, a HOME
// with nothing in it, no hooks, no fsmonitor, no optional locks. The baseline copy's config is
// written by the collector (baseline.ts), never copied whole from the checkout.
import { spawn } from "node:child_process";
import { Transform } from "node:stream";

/** Debian's git in the evidence image; the same path on a Debian machine running the tests. */
export const GIT = process.env.BERTH_GIT ?? "/usr/bin/git";

/** Where git runs: the baseline copy, and the working tree and index it compares (if any). */
export interface GitScope {
  readonly gitDir: string;
  /** An empty directory of the collector's own, HOME and XDG_CONFIG_HOME alike. */
  readonly home: string;
  readonly workTree?: string;
  readonly indexFile?: string;
}

/** Settings that hold whatever the config file says: none of them may run a command. */
const FIXED_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.untrackedCache=false",
  "core.splitIndex=false",
  "core.quotePath=true",
  "core.safecrlf=false",
  "core.protectNTFS=true",
  "core.protectHFS=true",
  "core.symlinks=true",
  "core.fileMode=true",
  "core.ignoreCase=false",
  "core.precomposeUnicode=false",
  "diff.noprefix=false",
  "diff.mnemonicPrefix=false",
  "diff.relative=false",
  "diff.ignoreSubmodules=none",
  "diff.algorithm=myers",
  "diff.indentHeuristic=true",
  "submodule.recurse=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "advice.addEmbeddedRepo=false",
  "advice.addIgnoredFile=false",
].flatMap((setting) => ["-c", setting]);

export function gitEnv(scope: GitScope): NodeJS.ProcessEnv {
  return {
    PATH: "/usr/bin:/bin",
    LC_ALL: "C",
    HOME: scope.home,
    XDG_CONFIG_HOME: scope.home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_DIR: scope.gitDir,
    ...(scope.workTree === undefined ? {} : { GIT_WORK_TREE: scope.workTree }),
    ...(scope.indexFile === undefined ? {} : { GIT_INDEX_FILE: scope.indexFile }),
    // A path given to git is that path, never a pattern the runtime chose.
    GIT_LITERAL_PATHSPECS: "1",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_NO_REPLACE_OBJECTS: "1",
  };
}

export interface GitResult {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

export interface GitRun {
  readonly input?: Buffer | NodeJS.ReadableStream;
  /** More output than this fails the command rather than filling memory. */
  readonly maxOutputBytes?: number;
}

/** A git command that did not succeed: its arguments and git's own words. */
export class GitFailure extends Error {}

/** Runs `git <args>` in `scope`; resolves whatever the exit code, rejects only if git cannot run. */
export function git(scope: GitScope, args: readonly string[], run: GitRun = {}): Promise<GitResult> {
  const max = run.maxOutputBytes ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawn(GIT, [...FIXED_CONFIG, ...args], { env: gitEnv(scope), stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let size = 0;
    let stderr = "";
    let overflow = false;
    child.stdout.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        overflow = true;
        child.kill("SIGKILL");
      } else out.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 64 * 1024) stderr += chunk.toString("utf8");
    });
    child.once("error", (err) => reject(new GitFailure(`cannot run ${GIT}: ${err.message}`)));
    child.once("close", (code, signal) => {
      if (overflow) reject(new GitFailure(`git ${args[0]}: more than ${max} bytes of output`));
      else resolve({ code: code ?? (signal ? 128 : 1), stdout: Buffer.concat(out), stderr });
    });
    child.stdin.on("error", () => {
      // git may exit before reading all its input; its exit code says why.
    });
    if (run.input === undefined) child.stdin.end();
    else if (Buffer.isBuffer(run.input)) child.stdin.end(run.input);
    else run.input.pipe(child.stdin);
  });
}

/** Runs `git <args>` and returns its output; a non-zero exit rejects with git's message. */
export async function gitOutput(scope: GitScope, args: readonly string[], run: GitRun = {}): Promise<Buffer> {
  const result = await git(scope, args, run);
  if (result.code !== 0) throw new GitFailure(`git ${args.join(" ")}: ${gitMessage(result.stderr) || `exit ${result.code}`}`);
  return result.stdout;
}

/** Git's complaint, on one line: its fatal and error lines, else everything it said. */
export function gitMessage(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter(Boolean);
  const serious = lines.filter((l) => /^(fatal|error):/.test(l));
  return (serious.length > 0 ? serious : lines).join("; ").slice(0, 1000);
}

/** Raised when a pipe carried more than its bound: the producer is stopped, the consumer fails. */
export class PipeOverflow extends GitFailure {}

/**
 * One process's output into the next's input (`a | b`), without a shell (the image has none),
 * carrying at most `maxBytes`. Resolves with the last's output once both have succeeded.
 */
export async function gitPipe(from: { scope: GitScope; args: readonly string[]; input: Buffer }, to: { scope: GitScope; args: readonly string[] }, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer> {
  const producer = spawn(GIT, [...FIXED_CONFIG, ...from.args], { env: gitEnv(from.scope), stdio: ["pipe", "pipe", "pipe"] });
  producer.stdin.on("error", () => {
    // Its exit code says why it stopped reading.
  });
  producer.stdin.end(from.input);
  let producerErr = "";
  producer.stderr.on("data", (chunk: Buffer) => (producerErr += chunk.toString("utf8")));
  const produced = new Promise<number>((resolve, reject) => {
    producer.once("error", (err) => reject(new GitFailure(`cannot run ${GIT}: ${err.message}`)));
    producer.once("close", (code) => resolve(code ?? 1));
  });
  let carried = 0;
  let overflow = false;
  // Past the bound nothing more is passed on: the producer is stopped and the consumer reads a
  // truncated stream, which it refuses.
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      carried += chunk.length;
      if (carried <= maxBytes) return done(null, chunk);
      if (!overflow) producer.kill("SIGKILL");
      overflow = true;
      done();
    },
  });
  const [code, consumed] = await Promise.all([produced, git(to.scope, to.args, { input: producer.stdout.pipe(counted) })]);
  if (overflow) throw new PipeOverflow(`git ${from.args[0]}: more than ${maxBytes} bytes`);
  // When one fails the other usually does too (a broken pipe, a truncated stream): both are named.
  const failures = [
    ...(code !== 0 ? [`git ${from.args.join(" ")}: ${gitMessage(producerErr) || `exit ${code}`}`] : []),
    ...(consumed.code !== 0 ? [`git ${to.args.join(" ")}: ${gitMessage(consumed.stderr) || `exit ${consumed.code}`}`] : []),
  ];
  if (failures.length > 0) throw new GitFailure(failures.join("; "));
  return consumed.stdout;
}
