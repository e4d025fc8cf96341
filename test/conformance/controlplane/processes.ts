// The processes of a control plane or a node: each in its own process group with its log in
// the run folder, stopped in reverse order of start (SIGTERM, then SIGKILL), and never left
// behind: a detached watchdog kills every one of them (and runs a cleanup command, if given)
// when the Node process that started them dies without stopping them (SIGKILL, or a test
// runner being killed).
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export interface Proc {
  name: string;
  child: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
  exitCode?: number | null;
  /** Set once stop was asked for, so that its exit is not reported as a failure. */
  stopRequested?: boolean;
  /** How it was started, so that it can be started again the same way (relaunch). */
  command: { bin: string; args: string[]; env: NodeJS.ProcessEnv; cwd: string };
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

function signalGroup(p: Proc, sig: NodeJS.Signals): void {
  try {
    if (p.child.pid) process.kill(-p.child.pid, sig);
  } catch {
    p.child.kill(sig);
  }
}

export interface ProcessSetOptions {
  /** Folder whose path every process's command line or environment names (the watchdog checks it). */
  runDir: string;
  logDir: string;
  /** A file name under runDir for the pid list (one set per file). */
  pidFile: string;
  log: (msg: string) => void;
  /** A shell command the watchdog runs after killing the processes, if this Node process died first. */
  cleanupCommand?: string;
}

export class ProcessSet {
  readonly procs: Proc[] = [];
  private readonly pidFile: string;
  private readonly watchdog: ChildProcess;
  private readonly killAllSync = () => {
    for (const p of this.procs) if (p.exitCode === undefined) signalGroup(p, "SIGKILL");
    this.watchdog.kill("SIGKILL");
  };

  constructor(private readonly opts: ProcessSetOptions) {
    this.pidFile = join(opts.runDir, opts.pidFile);
    writeFileSync(this.pidFile, "");
    process.once("exit", this.killAllSync);
    // Kills every process listed in the pid file whose command line still names the run folder,
    // once this Node process is gone; then runs the cleanup command.
    this.watchdog = spawn(
      "/bin/sh",
      [
        "-c",
        'while kill -0 "$1" 2>/dev/null; do sleep 2; done; for p in $(cat "$2" 2>/dev/null); do ' +
          'if grep -qF "$3" "/proc/$p/cmdline" "/proc/$p/environ" 2>/dev/null; then kill -9 "-$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; fi; done; ' +
          'if [ -n "$4" ]; then sh -c "$4" >>"$5" 2>&1; fi',
        "berth-watchdog",
        String(process.pid),
        this.pidFile,
        opts.runDir,
        opts.cleanupCommand ?? "",
        join(opts.logDir, "watchdog-cleanup.log"),
      ],
      { detached: true, stdio: "ignore" },
    );
    this.watchdog.unref();
  }

  /** Starts a process in its own group (so signals reach its children), logging to <logDir>/<name>.log. */
  launch(name: string, bin: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd = this.opts.runDir): Proc {
    const logFile = join(this.opts.logDir, `${name}.log`);
    const fd = openSync(logFile, "a");
    const child = spawn(bin, args, { stdio: ["ignore", fd, fd], env: { ...process.env, BERTH_RUN_DIR: this.opts.runDir, ...env }, cwd, detached: true });
    closeSync(fd);
    const p: Proc = { name, child, logFile, exited: Promise.resolve(null), command: { bin, args, env, cwd } };
    p.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        p.exitCode = code ?? (signal ? -1 : null);
        if (!p.stopRequested) this.opts.log(`${name} exited (code ${code}, signal ${signal}); log ${logFile}`);
        resolve(p.exitCode);
      });
      child.on("error", (e) => {
        p.exitCode = -1;
        this.opts.log(`${name} failed to start: ${e}`);
        resolve(-1);
      });
    });
    this.procs.push(p);
    if (child.pid) appendFileSync(this.pidFile, `${child.pid}\n`);
    this.opts.log(`started ${name} (pid ${child.pid}); log ${logFile}`);
    return p;
  }

  /** The process started last under this name, if any. */
  find(name: string): Proc | undefined {
    return this.procs.find((p) => p.name === name);
  }

  /** SIGKILL to a process (its group), waiting until it has exited: a fault injected on purpose, so its exit is not reported as a failure. */
  async kill(p: Proc): Promise<void> {
    if (p.exitCode !== undefined) return;
    p.stopRequested = true;
    signalGroup(p, "SIGKILL");
    await p.exited;
  }

  /**
   * Starts an exited process again with the command, environment and folder it had, appending
   * to its log. It takes the old one's place in the set, so stop() keeps the order of start.
   */
  relaunch(p: Proc): Proc {
    if (p.exitCode === undefined) throw new Error(`${p.name} still runs (pid ${p.child.pid})`);
    const { bin, args, env, cwd } = p.command;
    const next = this.launch(p.name, bin, args, env, cwd);
    this.procs.splice(this.procs.indexOf(next), 1);
    this.procs.splice(this.procs.indexOf(p), 1, next);
    return next;
  }

  /** The process started last under this name; throws, naming the ones that run, if none. */
  named(name: string): Proc {
    const p = this.find(name);
    if (!p) throw new Error(`no process named ${name} (this set runs ${this.procs.map((x) => x.name).join(", ")})`);
    return p;
  }

  /**
   * A fault injected on purpose into the process named `name`: SIGKILL to its group at once, or
   * SIGTERM with 10 s to exit (then SIGKILL); resolves once it has exited.
   */
  async injectStop(name: string, signal: "SIGKILL" | "SIGTERM"): Promise<void> {
    const p = this.named(name);
    if (signal === "SIGTERM") await this.stopOne(p, 10_000);
    else await this.kill(p);
    this.opts.log(`${name} killed (${signal})`);
  }

  /**
   * Starts the process named `name` again (see relaunch) and waits until `ready(since)` answers
   * true, `since` being the time of the relaunch; without `ready`, until it has run a second.
   */
  async relaunchNamed(name: string, ready: ((since: number) => Promise<boolean>) | undefined, timeoutMs: number): Promise<void> {
    const since = Date.now();
    const p = this.relaunch(this.named(name));
    await this.poll(`${name} ready again`, p, ready ? () => ready(since) : async () => (await sleep(1000), true), timeoutMs);
    this.opts.log(`${name} relaunched (pid ${p.child.pid}), ready in ${Date.now() - since} ms`);
  }

  /**
   * Starts the process named `name` again if it has exited (a fault left it stopped), as
   * relaunchNamed does; resolves true if it had to, false if it was running. What a test's
   * `finally` calls, so that a fault it injected never outlives it.
   */
  async restore(name: string, ready: ((since: number) => Promise<boolean>) | undefined, timeoutMs: number): Promise<boolean> {
    if (this.named(name).exitCode === undefined) return false;
    await this.relaunchNamed(name, ready, timeoutMs);
    return true;
  }

  /** Throws, with the end of its log, if the process has exited. */
  alive(p: Proc): void {
    if (p.exitCode !== undefined) throw new Error(`${p.name} exited with ${p.exitCode}:\n${tail(p.logFile)}`);
  }

  /** SIGTERM, then SIGKILL after graceMs; resolves once it has exited. */
  async stopOne(p: Proc, graceMs = 10_000): Promise<void> {
    if (p.exitCode !== undefined) return;
    p.stopRequested = true;
    signalGroup(p, "SIGTERM");
    const t = setTimeout(() => signalGroup(p, "SIGKILL"), graceMs);
    await p.exited;
    clearTimeout(t);
  }

  /** Stops every process, newest first. */
  async stop(): Promise<void> {
    for (const p of this.procs) p.stopRequested = true;
    for (const p of [...this.procs].reverse()) await this.stopOne(p);
    this.watchdog.kill("SIGKILL");
    process.removeListener("exit", this.killAllSync);
  }

  /** Polls fn until true, throwing early if `p` exits and after `ms`. */
  async poll(what: string, p: Proc | undefined, fn: () => Promise<boolean>, ms: number): Promise<void> {
    const until = Date.now() + ms;
    let last: unknown;
    for (;;) {
      if (p) this.alive(p);
      try {
        if (await fn()) return;
      } catch (e) {
        last = e;
      }
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
