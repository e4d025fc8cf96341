// The export's parts as plain functions, and its push against small registries on loopback:
// the result line's schema, the artifact's bytes,
// the credential's lookup, and the distribution API with a token service, a refusing registry,
// a certificate the CA does not vouch for and a port nobody listens on.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CollectedEvidence } from "../../functions/evidence/collected.js";
import { ARTIFACT_TYPE, evidenceArtifact, MANIFEST_MEDIA_TYPE, PATCH_TRUNCATED } from "../../functions/evidence/oci-artifact.js";
import { bearerChallenge, credentialFor } from "../../functions/evidence/registry-auth.js";
import { parseRepository, PushFailure, pushArtifact } from "../../functions/evidence/registry-push.js";
import { exportResultSchema } from "../../functions/evidence/result.js";
import { freePort } from "../support/function-process.js";
import { tempDirs } from "../support/temp.js";
import { makeTestPKI } from "../support/tls.js";

const tempDir = tempDirs();

describe("exportResultSchema", () => {
  it("accepts both states as the export writes them", () => {
    const exported = { state: "Exported", repository: "10.0.0.5:5000/berth/evidence", tag: "ws-1", digest: `sha256:${"a".repeat(64)}`, exportedAt: "2026-05-01T10:01:00Z", verification: { exitCode: 1, output: "x" }, attempts: 2 };
    expect(exportResultSchema.parse(exported)).toEqual(exported);
    const failed = { state: "Failed", reason: "Refused", message: "PUT the manifest: the registry answered 403", attempts: 3, lastAttemptAt: "2026-05-01T10:01:00Z" };
    expect(exportResultSchema.parse(failed)).toEqual(failed);
  });
  it("refuses a multi-line message, an unknown reason and a long verification summary", () => {
    const failed = { state: "Failed", reason: "Refused", message: "one", attempts: 1, lastAttemptAt: "2026-05-01T10:01:00Z" };
    expect(exportResultSchema.safeParse({ ...failed, message: "one\ntwo" }).success).toBe(false);
    expect(exportResultSchema.safeParse({ ...failed, reason: "Timeout" }).success).toBe(false);
    const exported = { state: "Exported", repository: "r/x", tag: "t", digest: `sha256:${"a".repeat(64)}`, exportedAt: "2026-05-01T10:01:00Z", verification: { exitCode: 0, output: "x".repeat(1025) }, attempts: 1 };
    expect(exportResultSchema.safeParse(exported).success).toBe(false);
  });
});

const evidence: CollectedEvidence = {
  commit: "0123456789abcdef0123456789abcdef01234567",
  patch: "diff --git a/a b/a\n",
  patchTruncated: false,
  files: { added: 0, modified: 1, deleted: 0 },
  verification: { exitCode: 0, output: "all green" },
  collectedAt: "2026-05-01T10:00:30Z",
};
const inputs = { workspaceID: "ws-1", source: { repository: "https://git.example/app.git", revision: "main" }, outcome: { result: "Succeeded" as const, reason: "Completed" as const }, evidence };

describe("evidenceArtifact", () => {
  it("is an OCI 1.1 artifact with the empty config and titled layers, the same bytes every time", () => {
    const artifact = evidenceArtifact(inputs);
    expect(evidenceArtifact(inputs).manifest.equals(artifact.manifest)).toBe(true);
    expect(artifact.digest).toBe(`sha256:${createHash("sha256").update(artifact.manifest).digest("hex")}`);
    const manifest = JSON.parse(artifact.manifest.toString("utf8"));
    expect(manifest).toMatchObject({
      schemaVersion: 2,
      mediaType: MANIFEST_MEDIA_TYPE,
      artifactType: ARTIFACT_TYPE,
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", size: 2 },
      annotations: { "org.opencontainers.image.created": evidence.collectedAt, "dev.berth.workspace-id": "ws-1" },
    });
    expect(manifest.layers.map((l: { annotations: Record<string, string>; mediaType: string }) => [l.annotations["org.opencontainers.image.title"], l.mediaType])).toEqual([
      ["outcome.json", "application/vnd.berth.evidence.outcome.v1+json"],
      ["verification.json", "application/vnd.berth.evidence.verification.v1+json"],
      ["changes.patch", "text/x-diff"],
    ]);
    const [, outcomeBlob, verificationBlob, patchBlob] = artifact.blobs;
    expect(JSON.parse(outcomeBlob!.content.toString())).toEqual({
      workspaceID: "ws-1",
      source: { repository: "https://git.example/app.git", revision: "main", commit: evidence.commit },
      outcome: { result: "Succeeded", reason: "Completed" },
    });
    expect(JSON.parse(verificationBlob!.content.toString())).toEqual({ exitCode: 0, output: "all green", reportedBy: "runtime" });
    expect(patchBlob!.content.toString()).toBe(evidence.patch);
  });

  it("without a collector, carries the outcome alone and says why there are no changes", () => {
    const artifact = evidenceArtifact({ ...inputs, evidence: undefined });
    const manifest = JSON.parse(artifact.manifest.toString());
    expect(manifest.layers.map((l: { annotations: Record<string, string> }) => l.annotations["org.opencontainers.image.title"])).toEqual(["outcome.json"]);
    expect(manifest.annotations).toEqual({ "dev.berth.workspace-id": "ws-1", "dev.berth.evidence.changes-not-collected": "the runtime never ran, or its collector's time ran out" });
    expect(JSON.parse(artifact.blobs[1]!.content.toString()).source.commit).toBeNull();
  });

  it("leaves out verification.json when the runtime reported none, and marks a truncated patch", () => {
    const manifest = JSON.parse(evidenceArtifact({ ...inputs, evidence: { ...evidence, verification: null, patchTruncated: true } }).manifest.toString());
    expect(manifest.layers.map((l: { annotations: Record<string, string> }) => l.annotations)).toEqual([
      { "org.opencontainers.image.title": "outcome.json" },
      { "org.opencontainers.image.title": "changes.patch", [PATCH_TRUNCATED]: "true" },
    ]);
  });
});

describe("the push credential", () => {
  const auth = Buffer.from("robot:pa55:word").toString("base64");
  it("is the entry for the registry's host, by host or https://host", () => {
    expect(credentialFor(JSON.stringify({ auths: { "10.0.0.5:5000": { auth } } }), "10.0.0.5:5000")).toEqual({ username: "robot", password: "pa55:word" });
    expect(credentialFor(JSON.stringify({ auths: { "https://reg.example": { username: "u", password: "p" } } }), "reg.example")).toEqual({ username: "u", password: "p" });
    expect(credentialFor(JSON.stringify({ auths: { "other.example": { auth } } }), "reg.example")).toBeUndefined();
  });
  it("does not quote a config it cannot read", () => {
    expect(() => credentialFor('{"auths": "s3cret"', "reg.example")).toThrow(/not a Docker config JSON/);
    try {
      credentialFor('{"auths": "s3cret"', "reg.example");
    } catch (err) {
      expect((err as Error).message).not.toContain("s3cret");
    }
  });
  it("reads a Bearer challenge", () => {
    expect(bearerChallenge('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"')).toEqual({
      realm: "https://auth.example/token",
      service: "registry.example",
      scope: "repository:a/b:pull,push",
    });
    expect(bearerChallenge('Basic realm="registry"')).toBeUndefined();
  });
  it("names a repository host[:port]/path", () => {
    expect(parseRepository("10.0.0.5:5000/berth/evidence")).toEqual({ host: "10.0.0.5:5000", name: "berth/evidence" });
    expect(() => parseRepository("https://reg.example/x")).toThrow(/not an OCI repository/);
    expect(() => parseRepository("reg.example/Upper")).toThrow(/not an OCI repository/);
  });
});

/** A registry on loopback https, in memory: blobs and manifests, behind a token service. */
async function fakeRegistry(pki: { dir: string }, options: { token?: { user: string; password: string } } = {}) {
  const blobs = new Map<string, Buffer>();
  const manifests = new Map<string, Buffer>();
  const seen: { method: string; path: string; authorization?: string }[] = [];
  const TOKEN = "issued-token-1234";
  let base = "";
  const read = (req: IncomingMessage) =>
    new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks)));
    });
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, base);
    const body = await read(req);
    seen.push({ method: req.method!, path: url.pathname, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    if (url.pathname === "/token") {
      const expected = `Basic ${Buffer.from(`${options.token!.user}:${options.token!.password}`).toString("base64")}`;
      if (req.headers.authorization !== expected) return void res.writeHead(401).end();
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ token: TOKEN }));
    }
    if (options.token && req.headers.authorization !== `Bearer ${TOKEN}`) {
      return void res.writeHead(401, { "www-authenticate": `Bearer realm="${base}/token",service="fake",scope="repository:berth/evidence:pull"` }).end();
    }
    let m;
    if ((m = /^\/v2\/(.+)\/blobs\/(sha256:[0-9a-f]{64})$/.exec(url.pathname)) && req.method === "HEAD") return void res.writeHead(blobs.has(m[2]!) ? 200 : 404).end();
    if (/^\/v2\/.+\/blobs\/uploads\/$/.test(url.pathname) && req.method === "POST") {
      // Absolute, and with a query of its own: the digest must be added to it.
      return void res.writeHead(202, { location: `${base}/upload/session-1?_state=opaque` }).end();
    }
    if (url.pathname === "/upload/session-1" && req.method === "PUT") {
      const digest = url.searchParams.get("digest")!;
      if (url.searchParams.get("_state") !== "opaque" || `sha256:${createHash("sha256").update(body).digest("hex")}` !== digest) return void res.writeHead(400).end();
      blobs.set(digest, body);
      return void res.writeHead(201).end();
    }
    if ((m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url.pathname)) && req.method === "PUT") {
      manifests.set(m[2]!, body);
      return void res.writeHead(201, { "docker-content-digest": `sha256:${createHash("sha256").update(body).digest("hex")}` }).end();
    }
    res.writeHead(404).end();
  };
  const server = https.createServer({ key: readFileSync(join(pki.dir, "server.key")), cert: readFileSync(join(pki.dir, "server.crt")) }, (req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  base = `https://${host}`;
  return { host, blobs, manifests, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("pushArtifact", () => {
  const pki = makeTestPKI(tempDir);
  const ca = readFileSync(join(pki.dir, "ca.crt"));
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  const artifact = evidenceArtifact(inputs);

  it("pushes every blob and the manifest, getting a token with the credential when challenged", async () => {
    const registry = await fakeRegistry(pki, { token: { user: "robot", password: "pa55word" } });
    closers.push(registry.close);
    const digest = await pushArtifact({ repository: { host: registry.host, name: "berth/evidence" }, tag: "ws-1", artifact, credential: { username: "robot", password: "pa55word" }, ca });
    expect(digest).toBe(artifact.digest);
    expect(registry.manifests.get("ws-1")!.equals(artifact.manifest)).toBe(true);
    for (const blob of artifact.blobs) expect(registry.blobs.get(blob.digest)!.equals(blob.content)).toBe(true);
    // Basic first; after the challenge, the token; the credential itself only to the token service.
    expect(registry.seen[0]!.authorization).toMatch(/^Basic /);
    expect(registry.seen.find((s) => s.path === "/token")!.authorization).toMatch(/^Basic /);
    expect(registry.seen.filter((s) => s.path !== "/token").at(-1)!.authorization).toBe("Bearer issued-token-1234");
  });

  it("skips a blob the registry already has", async () => {
    const registry = await fakeRegistry(pki);
    closers.push(registry.close);
    await pushArtifact({ repository: { host: registry.host, name: "berth/evidence" }, tag: "ws-1", artifact, ca });
    const puts = registry.seen.filter((s) => s.method === "PUT").length;
    await pushArtifact({ repository: { host: registry.host, name: "berth/evidence" }, tag: "ws-2", artifact, ca });
    expect(registry.seen.filter((s) => s.method === "PUT").length).toBe(puts + 1);
  });

  it("fails as Refused when the token service refuses the credential", async () => {
    const registry = await fakeRegistry(pki, { token: { user: "robot", password: "right" } });
    closers.push(registry.close);
    const failure = await pushArtifact({ repository: { host: registry.host, name: "berth/evidence" }, tag: "ws-1", artifact, credential: { username: "robot", password: "wrong-password" }, ca }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PushFailure);
    expect((failure as PushFailure).reason).toBe("Refused");
    expect((failure as PushFailure).message).not.toContain("wrong-password");
  });

  it("fails as TLSError when the certificate is not the CA's, and as Unreachable when nothing listens", async () => {
    const registry = await fakeRegistry(pki);
    closers.push(registry.close);
    const other = readFileSync(join(makeTestPKI(tempDir).dir, "ca.crt"));
    const tls = await pushArtifact({ repository: { host: registry.host, name: "berth/evidence" }, tag: "ws-1", artifact, ca: other }).catch((e: unknown) => e);
    expect((tls as PushFailure).reason).toBe("TLSError");
    const port = await freePort();
    const unreachable = await pushArtifact({ repository: { host: `127.0.0.1:${port}`, name: "berth/evidence" }, tag: "ws-1", artifact, ca }).catch((e: unknown) => e);
    expect((unreachable as PushFailure).reason).toBe("Unreachable");
    expect((unreachable as PushFailure).message).toContain("ECONNREFUSED");
  });
});
