// The export's parts as plain functions, and its push against small registries on loopback:
// the result line's schema, the artifact's bytes,
// the credential's lookup, and the distribution API with a token service, a refusing registry,
// a certificate the CA does not vouch for and a port nobody listens on.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CollectedEvidence } from "../../functions/evidence/collected.js";
import { ARTIFACT_TYPE, CHANGES_LEFT_OUT, evidenceArtifact, MANIFEST_MEDIA_TYPE } from "../../functions/evidence/oci-artifact.js";
import { exportSettings } from "../../functions/evidence/export.js";
import { bearerChallenge, credentialFor } from "../../functions/evidence/registry-auth.js";
import { parseRepository, PushFailure, pushArtifact, type PushOptions, realmRefusal } from "../../functions/evidence/registry-push.js";
import { exportResultSchema } from "../../functions/contracts/evidence-result.js";
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
  patch: Buffer.from("diff --git a/a b/a\n").toString("base64"),
  notCollected: null,
  leftOut: [],
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
      changes: { files: evidence.files, leftOut: [], notCollected: null },
    });
    expect(JSON.parse(verificationBlob!.content.toString())).toEqual({ exitCode: 0, output: "all green", reportedBy: "runtime" });
    // git's bytes, as the collector made them.
    expect(patchBlob!.content.toString()).toBe("diff --git a/a b/a\n");
  });

  it("without a collector, carries the outcome alone and says why there are no changes", () => {
    const artifact = evidenceArtifact({ ...inputs, evidence: undefined });
    const manifest = JSON.parse(artifact.manifest.toString());
    expect(manifest.layers.map((l: { annotations: Record<string, string> }) => l.annotations["org.opencontainers.image.title"])).toEqual(["outcome.json"]);
    expect(manifest.annotations).toEqual({ "dev.berth.workspace-id": "ws-1", "dev.berth.evidence.changes-not-collected": "the runtime never ran, or its collector's time ran out" });
    expect(JSON.parse(artifact.blobs[1]!.content.toString()).source.commit).toBeNull();
  });

  it("leaves out verification.json when the runtime reported none, and counts what the patch leaves out", () => {
    const leftOut = [{ path: "big.bin", reason: "larger than the patch's cap" }];
    const artifact = evidenceArtifact({ ...inputs, evidence: { ...evidence, verification: null, leftOut } });
    const manifest = JSON.parse(artifact.manifest.toString());
    expect(manifest.layers.map((l: { annotations: Record<string, string> }) => l.annotations)).toEqual([
      { "org.opencontainers.image.title": "outcome.json" },
      { "org.opencontainers.image.title": "changes.patch", [CHANGES_LEFT_OUT]: "1" },
    ]);
    expect(JSON.parse(artifact.blobs[1]!.content.toString()).changes.leftOut).toEqual(leftOut);
  });

  it("without a patch, carries the outcome and verification and says why", () => {
    const artifact = evidenceArtifact({ ...inputs, evidence: { ...evidence, patch: null, notCollected: "the collector could not make the patch: /workspace/src is now a symbolic link" } });
    const manifest = JSON.parse(artifact.manifest.toString());
    expect(manifest.layers.map((l: { annotations: Record<string, string> }) => l.annotations["org.opencontainers.image.title"])).toEqual(["outcome.json", "verification.json"]);
    expect(manifest.annotations["dev.berth.evidence.changes-not-collected"]).toContain("is now a symbolic link");
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

type Seen = { method: string; path: string; authorization?: string };
const TOKEN = "issued-token-1234";
const sha256 = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

/** Answers, for a handler that returns whether it did. */
const answer = (res: ServerResponse, status: number, headers: Record<string, string> = {}, body?: Buffer | string): true => (res.writeHead(status, headers).end(body), true);

const read = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
  });

/**
 * A server on loopback (https unless told), recording every request with its Authorization
 * header; `handle` answers what it knows and returns false for a 404.
 */
async function loopback(pki: { dir: string } | undefined, handle: (req: IncomingMessage, url: URL, body: Buffer, res: ServerResponse) => boolean) {
  const seen: Seen[] = [];
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, "https://loopback");
    const body = await read(req);
    seen.push({ method: req.method!, path: url.pathname, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    if (!handle(req, url, body, res)) res.writeHead(404).end();
  };
  const server = pki
    ? https.createServer({ key: readFileSync(join(pki.dir, "server.key")), cert: readFileSync(join(pki.dir, "server.crt")) }, (req, res) => void handler(req, res))
    : http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Where a registry with the redirect storage middleware sends a blob: its data, and a moved upload's PUT. */
function storage(blobs: Map<string, Buffer>, url: URL, method: string, body: Buffer, res: ServerResponse): boolean {
  let m;
  if ((m = /^\/data\/(sha256:[0-9a-f]{64})$/.exec(url.pathname)) && (method === "HEAD" || method === "GET")) {
    const blob = blobs.get(m[1]!);
    return blob ? answer(res, 200, { "content-length": String(blob.length) }, method === "GET" ? blob : undefined) : answer(res, 404);
  }
  if (url.pathname === "/moved/session-1" && method === "PUT") return putBlob(blobs, url, body, res);
  return false;
}

/** The PUT that ends an upload: the session's own query kept, the digest added, the bytes that digest. */
function putBlob(blobs: Map<string, Buffer>, url: URL, body: Buffer, res: ServerResponse): true {
  const digest = url.searchParams.get("digest")!;
  if (url.searchParams.get("_state") !== "opaque" || sha256(body) !== digest) return answer(res, 400);
  blobs.set(digest, body);
  return answer(res, 201);
}

/** A token service on loopback https: the token for the credential, 401 for anything else. */
function tokenService(credential: { user: string; password: string }) {
  return (req: IncomingMessage, url: URL, _body: Buffer, res: ServerResponse): boolean => {
    if (url.pathname !== "/token") return false;
    if (req.headers.authorization !== basic(credential.user, credential.password)) return answer(res, 401);
    return answer(res, 200, { "content-type": "application/json" }, JSON.stringify({ token: TOKEN }));
  };
}

/**
 * A registry on loopback https, in memory: blobs and manifests, behind a token service (its own,
 * or at `realm`). With `redirect` (a base URL, or "self"), a blob it has and an upload's PUT are
 * answered 307 to there (storage's routes), as distribution's redirect middleware and S3-backed
 * registries do; `uploadLocation` replaces the Location of a started upload.
 */
async function fakeRegistry(pki: { dir: string }, options: { token?: { user: string; password: string }; realm?: string; redirect?: string; uploadLocation?: string; blobs?: Map<string, Buffer> } = {}) {
  const blobs = options.blobs ?? new Map<string, Buffer>();
  const manifests = new Map<string, Buffer>();
  let base = "";
  const token = options.token ? tokenService(options.token) : undefined;
  const handle = (req: IncomingMessage, url: URL, body: Buffer, res: ServerResponse): boolean => {
    if (token && !options.realm && token(req, url, body, res)) return true;
    if (options.token && req.headers.authorization !== `Bearer ${TOKEN}`) {
      return answer(res, 401, { "www-authenticate": `Bearer realm="${options.realm ?? `${base}/token`}",service="fake",scope="repository:berth/evidence:pull"` });
    }
    if (storage(blobs, url, req.method!, body, res)) return true;
    const redirect = options.redirect === "self" ? base : options.redirect;
    let m;
    if ((m = /^\/v2\/(.+)\/blobs\/(sha256:[0-9a-f]{64})$/.exec(url.pathname)) && req.method === "HEAD") {
      if (redirect && blobs.has(m[2]!)) return answer(res, 307, { location: `${redirect}/data/${m[2]}` });
      return answer(res, blobs.has(m[2]!) ? 200 : 404);
    }
    if (/^\/v2\/.+\/blobs\/uploads\/$/.test(url.pathname) && req.method === "POST") {
      // Absolute, and with a query of its own: the digest must be added to it.
      return answer(res, 202, { location: options.uploadLocation ?? `${base}/upload/session-1?_state=opaque` });
    }
    if (url.pathname === "/upload/session-1" && req.method === "PUT") {
      if (redirect) return answer(res, 307, { location: `${redirect}/moved/session-1${url.search}` });
      return putBlob(blobs, url, body, res);
    }
    if ((m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url.pathname)) && req.method === "PUT") {
      manifests.set(m[2]!, body);
      return answer(res, 201, { "docker-content-digest": sha256(body) });
    }
    return false;
  };
  const server = await loopback(pki, handle);
  const host = `127.0.0.1:${server.port}`;
  base = `https://${host}`;
  return { host, base, blobs, manifests, seen: server.seen, close: server.close };
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

  describe("as strict as oras-go about where it sends things", () => {
    const credential = { username: "robot", password: "pa55word" };
    const push = (host: string, tag: string, more: Partial<PushOptions> = {}) => pushArtifact({ repository: { host, name: "berth/evidence" }, tag, artifact, credential, ca, ...more });
    const refusal = (failure: unknown) => {
      expect(failure).toBeInstanceOf(PushFailure);
      return { reason: (failure as PushFailure).reason, message: (failure as PushFailure).message };
    };

    it("follows a registry's redirects of blobs to another origin, which never sees the credential", async () => {
      const blobs = new Map<string, Buffer>();
      const elsewhere = await loopback(pki, (req, url, body, res) => storage(blobs, url, req.method!, body, res));
      closers.push(elsewhere.close);
      const registry = await fakeRegistry(pki, { blobs, redirect: `https://127.0.0.1:${elsewhere.port}` });
      closers.push(registry.close);
      // The first push's uploads are redirected (307: the body is sent again); the second push's
      // HEADs find each blob where the registry redirects them.
      expect(await push(registry.host, "ws-1")).toBe(artifact.digest);
      expect(await push(registry.host, "ws-2")).toBe(artifact.digest);
      for (const blob of artifact.blobs) expect(blobs.get(blob.digest)!.equals(blob.content)).toBe(true);
      expect(elsewhere.seen.map((s) => `${s.method} ${s.path}`)).toEqual([...artifact.blobs.map(() => "PUT /moved/session-1"), ...artifact.blobs.map((b) => `HEAD /data/${b.digest}`)]);
      expect(registry.seen.every((s) => s.authorization === basic("robot", "pa55word"))).toBe(true);
    });

    it("carries the credential on a redirect to the registry's own origin", async () => {
      const registry = await fakeRegistry(pki, { redirect: "self" });
      closers.push(registry.close);
      await push(registry.host, "ws-1");
      await push(registry.host, "ws-2");
      const redirected = registry.seen.filter((s) => s.path.startsWith("/data/") || s.path.startsWith("/moved/"));
      expect(redirected.length).toBe(2 * artifact.blobs.length);
      expect(redirected.every((s) => s.authorization === basic("robot", "pa55word"))).toBe(true);
    });

    it("refuses an upload Location, or a redirect, to http://, and sends nothing there", async () => {
      const plain = await loopback(undefined, () => false);
      closers.push(plain.close);
      const downgraded = await fakeRegistry(pki, { uploadLocation: `http://127.0.0.1:${plain.port}/upload/session-1?_state=opaque` });
      closers.push(downgraded.close);
      expect(refusal(await push(downgraded.host, "ws-1").catch((e: unknown) => e))).toEqual({
        reason: "Refused",
        message: `POST a blob upload: the registry's upload Location http://127.0.0.1:${plain.port} is not https; the evidence and the credential are not sent there`,
      });
      const redirecting = await fakeRegistry(pki, { redirect: `http://127.0.0.1:${plain.port}` });
      closers.push(redirecting.close);
      expect(refusal(await push(redirecting.host, "ws-1").catch((e: unknown) => e))).toEqual({
        reason: "Refused",
        message: `PUT ${redirecting.base}/upload/session-1: the registry's redirect to http://127.0.0.1:${plain.port} is not https; the evidence and the credential are not sent there`,
      });
      expect(plain.seen).toEqual([]);
    });

    it("sends the credential to a token service on another host only when the profile names that host", async () => {
      const tokens = await loopback(pki, tokenService({ user: "robot", password: "pa55word" }));
      closers.push(tokens.close);
      // The registry is 127.0.0.1; its token service is localhost: the same machine, another host.
      const registry = await fakeRegistry(pki, { token: { user: "robot", password: "pa55word" }, realm: `https://localhost:${tokens.port}/token` });
      closers.push(registry.close);
      expect(refusal(await push(registry.host, "ws-1").catch((e: unknown) => e))).toEqual({
        reason: "Refused",
        message: `the registry's token service is on host localhost, neither the registry's (127.0.0.1) nor one the profile reviews for the evidence destination; the credential is not sent there (list it in the evidence destination's hosts in the WorkspaceProfile's spec.destinations to allow it)`,
      });
      expect(tokens.seen).toEqual([]);
      expect(await push(registry.host, "ws-1", { tokenRealmHosts: ["localhost"] })).toBe(artifact.digest);
      expect(tokens.seen).toEqual([{ method: "GET", path: "/token", authorization: basic("robot", "pa55word") }]);
      expect(registry.manifests.get("ws-1")!.equals(artifact.manifest)).toBe(true);
    });

    it("refuses a loopback or link-local token service even when named, unless it is the registry's own host", async () => {
      const options: { token: { user: string; password: string }; realm?: string } = { token: { user: "robot", password: "pa55word" } };
      const registry = await fakeRegistry(pki, options);
      closers.push(registry.close);
      for (const host of ["127.0.0.2", "169.254.169.254"]) {
        options.realm = `https://${host}:${registry.host.split(":")[1]}/token`;
        expect(refusal(await push(registry.host, "ws-1", { tokenRealmHosts: [host] }).catch((e: unknown) => e))).toEqual({
          reason: "Refused",
          message: `the registry's token service is on ${host}, a loopback or link-local address that is not the registry's host; the credential is not sent there`,
        });
      }
      expect(registry.seen.filter((s) => s.path === "/token")).toEqual([]);
      // As a URL gives the host: IPv6 in brackets, an IPv4-mapped address in hex.
      const hosts = ["https://[::1]/", "https://[fe80::1]/", "https://127.0.0.1/", "https://[::ffff:127.0.0.1]/", "https://169.254.1.1/"].map((u) => new URL(u).hostname);
      expect(hosts.map((h) => realmRefusal(h, "reg.example", hosts) !== undefined)).toEqual([true, true, true, true, true]);
      expect(realmRefusal("127.0.0.1", "127.0.0.1", [])).toBeUndefined();
      expect(realmRefusal("Auth.Example", "reg.example", ["auth.example"])).toBeUndefined();
    });
  });
});

describe("exportSettings", () => {
  const env = {
    BERTH_OUTCOME: JSON.stringify({ result: "Succeeded", reason: "Completed" }),
    BERTH_EVIDENCE_REPOSITORY: "reg.example/berth/evidence",
    BERTH_EVIDENCE_TAG: "ws-1",
    BERTH_WORKSPACE_ID: "ws-1",
    BERTH_SOURCE_REPOSITORY: "https://git.example/app.git",
    BERTH_SOURCE_REVISION: "main",
  };
  it("reads the token service's hosts the profile reviews, none by default", () => {
    expect(exportSettings(env).tokenRealmHosts).toEqual([]);
    expect(exportSettings({ ...env, BERTH_TOKEN_REALM_HOSTS: "auth.example, Token.Example" }).tokenRealmHosts).toEqual(["auth.example", "token.example"]);
  });
  it("refuses hosts that are not host names, naming the variable", () => {
    expect(() => exportSettings({ ...env, BERTH_TOKEN_REALM_HOSTS: "https://auth.example/token" })).toThrow("BERTH_TOKEN_REALM_HOSTS: must be host names separated by commas, without scheme, port or path");
    expect(() => exportSettings({ ...env, BERTH_TOKEN_REALM_HOSTS: "auth.example,,x" })).toThrow(/^BERTH_TOKEN_REALM_HOSTS: /);
  });
});
