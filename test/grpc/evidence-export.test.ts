// The evidence export end to end over loopback, as the two containers run in a cluster: a real
// `evidence collect` process serving a checkout made here, and a real `evidence export` process,
// given the recorded outcome and the collector's address as Berth gives them, pushing to CNCF
// distribution (the registry the live suite runs, with a CA made here for 127.0.0.1), whose
// artifact is then pulled back and checked, its patch applied by git. Then a registry that
// refuses everything: the termination message says why, the credential appears nowhere, and the
// export gives up at its deadline.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import type http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { exportResultSchema, type ExportResult } from "../../functions/evidence/result.js";
import { freePort } from "../support/function-process.js";
import { tempDirs } from "../support/temp.js";
import { makeTestPKI } from "../support/tls.js";

const tempDir = tempDirs();
const PASSWORD = "never-shown-pa55word";

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.email=test@berth.invalid", "-c", "user.name=test", "-c", "init.defaultBranch=main", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** CNCF distribution as test/conformance/controlplane/build.sh --node builds it, if it has. */
function registryBinary(): string | undefined {
  const versions = readFileSync(join(import.meta.dirname, "../conformance/controlplane/versions.env"), "utf8");
  const version = /^DISTRIBUTION_VERSION=(\S+)$/m.exec(versions)?.[1];
  const root = join(process.env.BERTH_CACHE ?? join(homedir(), ".cache", "berth"), "bin");
  if (!version || !existsSync(root)) return undefined;
  const candidates = [join(root, `registry-${version}`), ...readdirSync(root).map((d) => join(root, d, `registry-${version}`))];
  return candidates.find((c) => existsSync(c));
}

interface Proc {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

function startProcess(file: string, args: string[], env: NodeJS.ProcessEnv): Proc {
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
const evidence = (command: string, env: Record<string, string>) => startProcess(process.execPath, ["--import", "tsx", "functions/evidence/main.ts", command], { PATH: process.env.PATH, ...env });

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function httpsGet(url: string, ca: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
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

describe("evidence collect and evidence export over loopback", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** CNCF distribution on loopback, serving TLS with a CA made here. */
  async function startRegistry(binary: string) {
    const pki = makeTestPKI(tempDir);
    const ca = readFileSync(join(pki.dir, "ca.crt"));
    const registryDir = tempDir("berth-evidence-registry-");
    const host = `127.0.0.1:${await freePort()}`;
    writeFileSync(
      join(registryDir, "config.yml"),
      JSON.stringify({
        version: 0.1,
        log: { level: "warn", accesslog: { disabled: true } },
        storage: { filesystem: { rootdirectory: join(registryDir, "data") } },
        http: { addr: host, tls: { certificate: join(pki.dir, "server.crt"), key: join(pki.dir, "server.key") } },
      }),
    );
    const registry = startProcess(binary, ["serve", join(registryDir, "config.yml")], { PATH: process.env.PATH, OTEL_TRACES_EXPORTER: "none" });
    cleanups.push(registry.stop);
    await until("the registry", async () => ((await httpsGet(`https://${host}/v2/`, ca).catch(() => undefined))?.status === 200 ? true : undefined));
    return { host, ca, caFile: join(pki.dir, "ca.crt") };
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
    const collector = evidence("collect", { BERTH_CHECKOUT_DIR: src, BERTH_EVIDENCE_PORT: String(port), BERTH_VERIFICATION_RESULT: join(dir, ".berth/verification.json") });
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

  it("pushes one artifact to a real registry, records it, and ends the collector", async (ctx) => {
    const binary = registryBinary();
    if (!binary) {
      console.warn("skipped: no CNCF distribution binary under ~/.cache/berth/bin (test/conformance/controlplane/build.sh --node builds it)");
      ctx.skip();
      return;
    }
    const { host, ca, caFile } = await startRegistry(binary);

    const w = await workload();
    // The credential is not the registry's concern here (it has no auth): it must only never show.
    const auth = JSON.stringify({ auths: { [host]: { auth: Buffer.from(`robot:${PASSWORD}`).toString("base64") } } });
    const { env, terminationLog } = exportEnv(w, `${host}/berth/evidence`, { SSL_CERT_FILE: caFile, BERTH_REGISTRY_AUTH: auth });
    // Before the kubelet's SIGTERM the collector has nothing to give, and the runtime cannot end it.
    expect((await fetch(`http://127.0.0.1:${w.port}/evidence`)).status).toBe(503);
    expect((await fetch(`http://127.0.0.1:${w.port}/done`, { method: "POST" })).status).toBe(409);
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);
    // The export polls while the collector waits (503); then the runtime ends.
    await new Promise((resolve) => setTimeout(resolve, 500));
    runtimeWorks(w);

    expect(await exporter.exited, exporter.output()).toBe(0);
    // The collector was told it may end, and did.
    expect(await w.collector.exited, w.collector.output()).toBe(0);

    const last = reported(terminationLog);
    expect(last).toMatchObject({
      state: "Exported",
      repository: `${host}/berth/evidence`,
      tag: "ws-0123",
      verification: { exitCode: 0, output: "3 passed" },
      attempts: 1,
    });
    const digest = (last as { digest: string }).digest;

    // Pulled back from the registry: the manifest by tag has the recorded digest, and every blob is there.
    const manifestRes = await httpsGet(`https://${host}/v2/berth/evidence/manifests/ws-0123`, ca, { accept: "application/vnd.oci.image.manifest.v1+json" });
    expect(manifestRes.status).toBe(200);
    expect(`sha256:${createHash("sha256").update(manifestRes.body).digest("hex")}`).toBe(digest);
    expect(manifestRes.headers["docker-content-digest"]).toBe(digest);
    const manifest = JSON.parse(manifestRes.body.toString("utf8"));
    expect(manifest.artifactType).toBe("application/vnd.berth.evidence.v1");
    const layers: Record<string, Buffer> = {};
    for (const layer of manifest.layers as { digest: string; size: number; annotations: Record<string, string> }[]) {
      const blob = await httpsGet(`https://${host}/v2/berth/evidence/blobs/${layer.digest}`, ca);
      expect(blob.status).toBe(200);
      expect(blob.body.length).toBe(layer.size);
      expect(`sha256:${createHash("sha256").update(blob.body).digest("hex")}`).toBe(layer.digest);
      layers[layer.annotations["org.opencontainers.image.title"]!] = blob.body;
    }
    expect(Object.keys(layers)).toEqual(["outcome.json", "verification.json", "changes.patch"]);
    expect(JSON.parse(layers["outcome.json"]!.toString())).toEqual({
      workspaceID: "ws-0123",
      source: { repository: "https://git.example/app.git", revision: "main", commit: w.commit },
      outcome: OUTCOME,
    });
    expect(JSON.parse(layers["verification.json"]!.toString())).toEqual({ exitCode: 0, output: "3 passed", reportedBy: "runtime" });

    // The patch, applied by git on a clean clone of the commit, gives the runtime's files.
    const clone = join(tempDir("berth-evidence-e2e-clone-"), "src");
    git(w.src, "clone", "-q", "--no-checkout", w.src, clone);
    git(clone, "checkout", "-q", "--detach", w.commit);
    writeFileSync(join(clone, "..", "changes.patch"), layers["changes.patch"]!);
    git(clone, "apply", join(clone, "..", "changes.patch"));
    expect(readFileSync(join(clone, "app.js"), "utf8")).toBe("console.log('hello, world');\n");
    expect(readFileSync(join(clone, "lib/new.js"), "utf8")).toBe("export const x = 1;");
    expect(existsSync(join(clone, "remove-me.txt"))).toBe(false);

    // The credential appears in no log and no ConfigMap.
    const base64 = Buffer.from(`robot:${PASSWORD}`).toString("base64");
    for (const text of [exporter.output(), w.collector.output(), readFileSync(terminationLog, "utf8")]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(base64);
    }
  });

  it("against a registry that refuses everything: Failed/Refused after each attempt, exit 1 at the deadline", async () => {
    const pki = makeTestPKI(tempDir);
    const base64 = Buffer.from(`robot:${PASSWORD}`).toString("base64");
    const seen: string[] = [];
    // It lacks every blob, refuses every upload, and even echoes the Authorization header back in
    // its error, which the export must not repeat.
    const refusing = https.createServer({ key: readFileSync(join(pki.dir, "server.key")), cert: readFileSync(join(pki.dir, "server.crt")) }, (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      if (req.method === "HEAD") return void res.writeHead(404).end();
      res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ errors: [{ code: "DENIED", message: `not for ${req.headers.authorization ?? "anonymous"}` }] }));
    });
    await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => refusing.close(() => resolve())));
    const host = `127.0.0.1:${(refusing.address() as AddressInfo).port}`;

    const w = await workload();
    const auth = JSON.stringify({ auths: { [`https://${host}`]: { username: "robot", password: PASSWORD } } });
    const { env, terminationLog } = exportEnv(w, `${host}/berth/evidence`, { SSL_CERT_FILE: join(pki.dir, "ca.crt"), BERTH_REGISTRY_AUTH: auth, BERTH_EXPORT_DEADLINE_SECONDS: "3" });
    runtimeWorks(w);
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);

    expect(await exporter.exited, exporter.output()).toBe(1);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    const result = reported(terminationLog);
    expect(result).toMatchObject({ state: "Failed", reason: "Refused" });
    expect(result.state === "Failed" && result.attempts).toBeGreaterThanOrEqual(2);
    expect(result.state === "Failed" && result.message).toBe("POST a blob upload: the registry answered 403 DENIED: not for Basic ***");
    for (const text of [exporter.output(), readFileSync(terminationLog, "utf8")]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(base64);
    }
    // Never told it is done: the collector keeps serving until the pod's grace period ends.
    expect(w.collector.child.exitCode).toBeNull();
  });

  it("without a collector to answer: Failed/NoEvidence, exit 1 at the deadline", async () => {
    const w = await workload();
    // The collector is gone (killed at the end of the grace period, say).
    await w.collector.stop();
    const { env, terminationLog } = exportEnv(w, "127.0.0.1:1/berth/evidence", { BERTH_EXPORT_DEADLINE_SECONDS: "3" });
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);
    expect(await exporter.exited, exporter.output()).toBe(1);
    expect(reported(terminationLog)).toMatchObject({ state: "Failed", reason: "NoEvidence", message: expect.stringContaining("ECONNREFUSED") });
  });

  it("when the collector could not collect, says why at once and does not wait for the deadline", async () => {
    const w = await workload();
    // The runtime removed the checkout's objects, so the base of a changed file cannot be read.
    execFileSync("rm", ["-rf", join(w.src, ".git/objects")]);
    runtimeWorks(w);
    const { env, terminationLog } = exportEnv(w, "127.0.0.1:1/berth/evidence", { BERTH_EXPORT_DEADLINE_SECONDS: "600" });
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);
    expect(await exporter.exited, exporter.output()).toBe(1);
    expect(reported(terminationLog)).toEqual({
      state: "Failed",
      reason: "NoEvidence",
      message: expect.stringMatching(/^the collector could not collect: cannot read app\.js \(blob [0-9a-f]{40}\)/),
      attempts: 1,
      lastAttemptAt: expect.any(String),
    });
  });

  it("given no collector (the runtime never ran), pushes the outcome alone", async (ctx) => {
    const binary = registryBinary();
    if (!binary) {
      console.warn("skipped: no CNCF distribution binary under ~/.cache/berth/bin (test/conformance/controlplane/build.sh --node builds it)");
      ctx.skip();
      return;
    }
    const { host, ca, caFile } = await startRegistry(binary);
    const w = await workload();
    const { env, terminationLog } = exportEnv(w, `${host}/berth/evidence`, { SSL_CERT_FILE: caFile });
    delete (env as Record<string, string | undefined>).BERTH_COLLECTOR_URL;
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);
    expect(await exporter.exited, exporter.output()).toBe(0);
    const digest = (reported(terminationLog) as { digest: string }).digest;
    const manifest = JSON.parse((await httpsGet(`https://${host}/v2/berth/evidence/manifests/${digest}`, ca, { accept: "application/vnd.oci.image.manifest.v1+json" })).body.toString());
    expect(manifest.layers.map((l: { annotations: Record<string, string> }) => l.annotations["org.opencontainers.image.title"])).toEqual(["outcome.json"]);
    // The collector was not asked, and keeps waiting for its own end.
    expect(w.collector.child.exitCode).toBeNull();
  });
});
