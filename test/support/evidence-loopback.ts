// The evidence program's two processes on loopback, as the tests run them: a checkout made here,
// a real `evidence collect` serving it, the environment Berth gives `evidence export`, and (where
// test/conformance/controlplane/build.sh --node has built it) CNCF distribution with a CA made here.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import type http from "node:http";
import https from "node:https";
import { homedir } from "node:os";
import { join } from "node:path";
import { exportResultSchema, type ExportResult } from "../../functions/contracts/evidence-result.js";
import { freePort } from "./function-process.js";
import { makeTestPKI } from "./tls.js";

export const PASSWORD = "never-shown-pa55word";

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=test@berth.invalid", "-c", "user.name=test", "-c", "init.defaultBranch=main", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** CNCF distribution as test/conformance/controlplane/build.sh --node builds it, if it has. */
export function registryBinary(): string | undefined {
  const versions = readFileSync(join(import.meta.dirname, "../conformance/controlplane/versions.env"), "utf8");
  const version = /^DISTRIBUTION_VERSION=(\S+)$/m.exec(versions)?.[1];
  const root = join(process.env.BERTH_CACHE ?? join(homedir(), ".cache", "berth"), "bin");
  if (!version || !existsSync(root)) return undefined;
  const candidates = [join(root, `registry-${version}`), ...readdirSync(root).map((d) => join(root, d, `registry-${version}`))];
  return candidates.find((c) => existsSync(c));
}

export interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export function startProcess(file: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], env });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** `evidence <command>` from the source, through tsx, as the tests start the gate and the function. */
export const evidence = (command: string, env: Record<string, string>) => startProcess(process.execPath, ["--import", "tsx", "functions/evidence/main.ts", command], { PATH: process.env.PATH, ...env });

export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function httpsGet(url: string, ca: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on("error", reject);
  });
}

/** What a test starts, stopped by the test's afterEach through `cleanups`. */
export function evidenceLoopback(tempDir: (prefix: string) => string, cleanups: (() => Promise<void>)[]) {
  /**
   * CNCF distribution on loopback, serving TLS with a CA made here. With `redirect`, its redirect
   * storage middleware answers a blob's GET and HEAD with a 307 to that base URL and the blob's
   * path under `storageRoot`, as a registry backed by S3 sends clients to the bucket.
   */
  async function startRegistry(binary: string, options: { redirect?: string } = {}) {
    const pki = makeTestPKI(tempDir);
    const ca = readFileSync(join(pki.dir, "ca.crt"));
    const registryDir = tempDir("berth-evidence-registry-");
    const storageRoot = join(registryDir, "data");
    const host = `127.0.0.1:${await freePort()}`;
    writeFileSync(
      join(registryDir, "config.yml"),
      JSON.stringify({
        version: 0.1,
        log: { level: "warn", accesslog: { disabled: true } },
        storage: { filesystem: { rootdirectory: storageRoot } },
        ...(options.redirect ? { middleware: { storage: [{ name: "redirect", options: { baseurl: options.redirect } }] } } : {}),
        http: { addr: host, tls: { certificate: join(pki.dir, "server.crt"), key: join(pki.dir, "server.key") } },
      }),
    );
    const registry = startProcess(binary, ["serve", join(registryDir, "config.yml")], { PATH: process.env.PATH, OTEL_TRACES_EXPORTER: "none" });
    cleanups.push(registry.stop);
    await until("the registry", async () => ((await httpsGet(`https://${host}/v2/`, ca).catch(() => undefined))?.status === 200 ? true : undefined));
    return { host, ca, caFile: join(pki.dir, "ca.crt"), pki, storageRoot };
  }

  /** A checkout, and a collector serving it. */
  async function workload() {
    const dir = join(tempDir("berth-evidence-e2e-"), "workspace");
    const src = join(dir, "src");
    mkdirSync(join(dir, ".berth"), { recursive: true });
    mkdirSync(src);
    git(src, "init", "-q");
    writeFileSync(join(src, "app.js"), "console.log('hello');\n");
    writeFileSync(join(src, "remove-me.txt"), "old\n");
    git(src, "add", "-A");
    git(src, "commit", "-q", "-m", "base");
    const commit = git(src, "rev-parse", "HEAD").trim();
    git(src, "checkout", "-q", "--detach", commit);

    const port = await freePort();
    const baselineDir = join(dir, "collector");
    mkdirSync(baselineDir);
    const collector = evidence("collect", { BERTH_CHECKOUT_DIR: src, BERTH_EVIDENCE_PORT: String(port), BERTH_VERIFICATION_RESULT: join(dir, ".berth/verification.json"), BERTH_BASELINE_DIR: baselineDir });
    cleanups.push(collector.stop);
    await until("the collector's startup probe", async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined));
    return { dir, src, commit, port, collector };
  }

  /** What the runtime does, then its exit: the kubelet SIGTERMs the native sidecar. */
  function runtimeWorks(w: Awaited<ReturnType<typeof workload>>): void {
    writeFileSync(join(w.src, "app.js"), "console.log('hello, world');\n");
    execFileSync("rm", [join(w.src, "remove-me.txt")]);
    mkdirSync(join(w.src, "lib"));
    writeFileSync(join(w.src, "lib/new.js"), "export const x = 1;");
    writeFileSync(join(w.dir, ".berth/verification.json"), JSON.stringify({ exitCode: 0, output: "3 passed" }));
    w.collector.child.kill("SIGTERM");
  }

  /** The outcome as Berth recorded it, which the export is given. */
  const OUTCOME = { result: "Failed", reason: "WorkloadFailed", message: "the runtime exited with code 1", finishedAt: "2026-05-01T10:05:00Z" };

  /** The result the export left in its termination message. */
  const reported = (file: string): ExportResult => exportResultSchema.parse(JSON.parse(readFileSync(file, "utf8")));

  const exportEnv = (w: Awaited<ReturnType<typeof workload>>, repository: string, extra: Record<string, string>) => {
    const terminationLog = join(w.dir, "..", "termination-log");
    writeFileSync(terminationLog, "");
    return {
      env: {
        BERTH_OUTCOME: JSON.stringify(OUTCOME),
        BERTH_COLLECTOR_URL: `http://127.0.0.1:${w.port}`,
        BERTH_EVIDENCE_REPOSITORY: repository,
        BERTH_EVIDENCE_TAG: "ws-0123",
        BERTH_WORKSPACE_ID: "ws-0123",
        BERTH_SOURCE_REPOSITORY: "https://git.example/app.git",
        BERTH_SOURCE_REVISION: "main",
        BERTH_TERMINATION_LOG: terminationLog,
        ...extra,
      },
      terminationLog,
    };
  };

  return { startRegistry, workload, runtimeWorks, OUTCOME, reported, exportEnv };
}
