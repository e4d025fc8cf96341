// The evidence export end to end against a real registry: CNCF distribution (the registry the
// live suite runs, built by test/conformance/controlplane/build.sh --node) with a CA made here for
// 127.0.0.1, a real `evidence collect` serving a checkout made here, and a real `evidence export`
// given the recorded outcome and the collector's address as Berth gives them. The artifact is
// pulled back and checked, its patch applied by git. `npm run test:registry`; CI runs it after the
// build, where the registry always exists.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join, normalize } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { evidence, evidenceLoopback, git, httpsGet, PASSWORD, registryBinary } from "../support/evidence-loopback.js";
import { freePort } from "../support/function-process.js";
import { tempDirs } from "../support/temp.js";

const tempDir = tempDirs();

/** The registry's binary, or the test skipped, saying why. */
function binaryOrSkip(ctx: { skip: () => void }): string {
  const binary = registryBinary();
  if (!binary) {
    console.warn("skipped: no CNCF distribution binary under ~/.cache/berth/bin (test/conformance/controlplane/build.sh --node builds it)");
    ctx.skip();
  }
  return binary!;
}

describe("evidence collect and evidence export, pushing to CNCF distribution", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const { startRegistry, workload, runtimeWorks, OUTCOME, reported, exportEnv } = evidenceLoopback(tempDir, cleanups);

  it("pushes one artifact to a real registry, records it, and ends the collector", async (ctx) => {
    const binary = binaryOrSkip(ctx);
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
      changes: { files: { added: 1, modified: 1, deleted: 1 }, leftOut: [], notCollected: null },
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

  it("given no collector (the runtime never ran), pushes the outcome alone", async (ctx) => {
    const binary = binaryOrSkip(ctx);
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

  it("when the collector answers that it cannot collect, still pushes the outcome, saying why there are no changes", async (ctx) => {
    const binary = binaryOrSkip(ctx);
    const { host, ca, caFile } = await startRegistry(binary);
    const w = await workload();
    // A collector of another version, say, that could not make the evidence: its error is final.
    const failing = http.createServer((_req, res) => res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: "the checkout could not be read" })));
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => failing.close(() => resolve())));
    const { env, terminationLog } = exportEnv(w, `${host}/berth/evidence`, { SSL_CERT_FILE: caFile, BERTH_COLLECTOR_URL: `http://127.0.0.1:${(failing.address() as AddressInfo).port}` });
    const exporter = evidence("export", env);
    cleanups.push(exporter.stop);
    expect(await exporter.exited, exporter.output()).toBe(0);
    expect(reported(terminationLog)).toMatchObject({ state: "Exported", attempts: 1 });
    const digest = (reported(terminationLog) as { digest: string }).digest;
    const manifest = JSON.parse((await httpsGet(`https://${host}/v2/berth/evidence/manifests/${digest}`, ca, { accept: "application/vnd.oci.image.manifest.v1+json" })).body.toString());
    expect(manifest.layers.map((l: { annotations: Record<string, string> }) => l.annotations["org.opencontainers.image.title"])).toEqual(["outcome.json"]);
    expect(manifest.annotations["dev.berth.evidence.changes-not-collected"]).toBe("the collector could not collect: the checkout could not be read");
  });

  it("behind distribution's redirect storage middleware, pushes again: each blob's HEAD is redirected, and the credential stays with the registry", async (ctx) => {
    const binary = binaryOrSkip(ctx);
    // The blob store the registry redirects to: another origin, serving its storage root's files.
    const storagePort = await freePort();
    const { host, caFile, pki, storageRoot } = await startRegistry(binary, { redirect: `https://127.0.0.1:${storagePort}/` });
    const seen: { method: string; path: string; authorization?: string }[] = [];
    const store = https.createServer({ key: readFileSync(join(pki.dir, "server.key")), cert: readFileSync(join(pki.dir, "server.crt")) }, (req, res) => {
      const path = new URL(req.url!, "https://store").pathname;
      seen.push({ method: req.method!, path, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
      const file = normalize(join(storageRoot, path));
      if (!file.startsWith(`${storageRoot}/`) || !existsSync(file)) return void res.writeHead(404).end();
      res.writeHead(200, { "content-length": String(statSync(file).size) }).end(req.method === "GET" ? readFileSync(file) : undefined);
    });
    await new Promise<void>((resolve) => store.listen(storagePort, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => store.close(() => resolve())));

    const w = await workload();
    const auth = JSON.stringify({ auths: { [host]: { auth: Buffer.from(`robot:${PASSWORD}`).toString("base64") } } });
    // The outcome alone, twice: the second push finds every blob the first pushed, through the redirect.
    const digests: string[] = [];
    for (const tag of ["ws-0123", "ws-0124"]) {
      const { env, terminationLog } = exportEnv(w, `${host}/berth/evidence`, { SSL_CERT_FILE: caFile, BERTH_REGISTRY_AUTH: auth, BERTH_EVIDENCE_TAG: tag, BERTH_EXPORT_DEADLINE_SECONDS: "10" });
      delete (env as Record<string, string | undefined>).BERTH_COLLECTOR_URL;
      const exporter = evidence("export", env);
      cleanups.push(exporter.stop);
      expect(await exporter.exited, exporter.output()).toBe(0);
      expect(reported(terminationLog)).toMatchObject({ state: "Exported", tag, attempts: 1 });
      digests.push((reported(terminationLog) as { digest: string }).digest);
    }
    expect(digests[1]).toBe(digests[0]);
    // distribution redirects to the blob's data in its storage layout; each of the second push's two blobs (the empty config, outcome.json) was HEADed there.
    expect(seen.map((s) => s.method)).toEqual(["HEAD", "HEAD"]);
    for (const s of seen) expect(s.path).toMatch(/^\/docker\/registry\/v2\/blobs\/sha256\/[0-9a-f]{2}\/[0-9a-f]{64}\/data$/);
    expect(seen.filter((s) => s.authorization !== undefined)).toEqual([]);
  });
});
