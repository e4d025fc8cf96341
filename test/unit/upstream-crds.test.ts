// The loader of the pinned upstream CRDs: a folder given by BERTH_UPSTREAM_CRDS, or a download
// into the cache, each file checked by sha256; unavailable (with the reason) only when neither can
// be had. The downloads come from a real HTTP server on loopback standing in for GitHub and for
// the Go module proxy.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { strToU8, zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDirs } from "../support/temp.js";
import { goProxy, pinnedCRDs, upstreamCRDs } from "../support/upstream-crds.js";

const tempDir = tempDirs();

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const SANDBOX = "kind: CustomResourceDefinition\nmetadata: { name: sandboxes.agents.x-k8s.io }\n";
const POOL = "kind: CustomResourceDefinition\nmetadata: { name: workerpools.ate.dev }\n";
const COMMIT_A = "a".repeat(40);
const COMMIT_B = "b".repeat(40);
const CLAIM = "kind: CustomResourceDefinition\nmetadata: { name: sandboxclaims.extensions.agents.x-k8s.io }\n";

/** A pins file for two files in two repositories, as test/upstream-crds.yaml lays them out. */
function pins(dir: string, shas = { sandbox: sha256(SANDBOX), pool: sha256(POOL) }): string {
  const file = join(dir, "pins.yaml");
  writeFileSync(
    file,
    `sources:
  - repository: example/agent-sandbox
    commit: ${COMMIT_A}
    folder: agent-sandbox
    files:
      - { kind: Sandbox, path: k8s/crds/sandboxes.yaml, sha256: ${shas.sandbox} }
  - repository: example/substrate
    commit: ${COMMIT_B}
    folder: agent-substrate
    files:
      - { kind: WorkerPool, path: generated/workerpools.yaml, sha256: ${shas.pool} }
`,
  );
  return file;
}

function folderWith(files: Record<string, string>): string {
  const dir = tempDir("berth-crds-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("the committed pins", () => {
  it("name each provider kind once, each file in its own place", () => {
    const all = pinnedCRDs();
    expect(all.map((p) => p.kind).sort()).toEqual(["ActorTemplate", "Sandbox", "VolumeSnapshot", "VolumeSnapshotClass", "VolumeSnapshotContent", "WorkerPool"]);
    expect(new Set(all.map((p) => p.file)).size).toBe(all.length);
  });

  it("a malformed pins file is refused naming the field", () => {
    const dir = tempDir("berth-pins-");
    const file = pins(dir, { sandbox: "not-a-hash", pool: sha256(POOL) });
    expect(() => pinnedCRDs(file)).toThrow(`${file}: sources[0].files[0].sha256: a sha256 in lowercase hex`);
  });
});

describe("from BERTH_UPSTREAM_CRDS", () => {
  const pinsFile = pins(tempDir("berth-pins-"));

  it("takes every pinned file from the folder", async () => {
    const folder = folderWith({ "agent-sandbox/sandboxes.yaml": SANDBOX, "agent-substrate/workerpools.yaml": POOL });
    const crds = await upstreamCRDs({ folder, pinsFile });
    expect(crds).toEqual({
      available: true,
      source: `BERTH_UPSTREAM_CRDS=${folder} (2 files, sha256 checked)`,
      dir: folder,
      byKind: { Sandbox: join(folder, "agent-sandbox/sandboxes.yaml"), WorkerPool: join(folder, "agent-substrate/workerpools.yaml") },
      paths: [join(folder, "agent-sandbox/sandboxes.yaml"), join(folder, "agent-substrate/workerpools.yaml")],
    });
  });

  it("a file that differs from its pin is an error naming the file", async () => {
    const folder = folderWith({ "agent-sandbox/sandboxes.yaml": SANDBOX, "agent-substrate/workerpools.yaml": `${POOL}# edited\n` });
    await expect(upstreamCRDs({ folder, pinsFile })).rejects.toThrow(
      `upstream CRD ${folder}/agent-substrate/workerpools.yaml: sha256 ${sha256(`${POOL}# edited\n`)}, but example/substrate@bbbbbbbbbbbb generated/workerpools.yaml is pinned at ${sha256(POOL)}`,
    );
  });

  it("a missing file is an error naming it", async () => {
    const folder = folderWith({ "agent-sandbox/sandboxes.yaml": SANDBOX });
    await expect(upstreamCRDs({ folder, pinsFile })).rejects.toThrow(`upstream CRD ${folder}/agent-substrate/workerpools.yaml: missing from BERTH_UPSTREAM_CRDS=${folder}`);
  });
});

describe("downloaded into the cache", () => {
  const pinsFile = pins(tempDir("berth-pins-"));
  let served: Record<string, string> = {};
  const requests: string[] = [];
  let server: Server;
  let baseURL = "";

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url!);
      const body = served[req.url!];
      res.writeHead(body === undefined ? 404 : 200).end(body);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const upstream = { [`/example/agent-sandbox/${COMMIT_A}/k8s/crds/sandboxes.yaml`]: SANDBOX, [`/example/substrate/${COMMIT_B}/generated/workerpools.yaml`]: POOL };

  it("downloads each file once, then reads the cache", async () => {
    served = upstream;
    requests.length = 0;
    const cacheDir = tempDir("berth-crd-cache-");
    const first = await upstreamCRDs({ folder: undefined, cacheDir, baseURL, pinsFile });
    expect(first).toMatchObject({ available: true, source: `${cacheDir} (2 of 2 files downloaded now, sha256 checked)`, dir: cacheDir });
    expect(readFileSync(join(cacheDir, "agent-substrate/workerpools.yaml"), "utf8")).toBe(POOL);
    expect(requests.sort()).toEqual(Object.keys(upstream).sort());
    const second = await upstreamCRDs({ folder: undefined, cacheDir, baseURL, pinsFile });
    expect(second).toMatchObject({ available: true, source: `${cacheDir} (0 of 2 files downloaded now, sha256 checked)` });
    expect(requests).toHaveLength(2);
  });

  it("a download that differs from its pin is an error naming the address, and nothing is cached", async () => {
    served = { ...upstream, [`/example/agent-sandbox/${COMMIT_A}/k8s/crds/sandboxes.yaml`]: "tampered" };
    const cacheDir = tempDir("berth-crd-cache-");
    await expect(upstreamCRDs({ folder: undefined, cacheDir, baseURL, pinsFile })).rejects.toThrow(
      `upstream CRD downloaded from ${baseURL}/example/agent-sandbox/${COMMIT_A}/k8s/crds/sandboxes.yaml: sha256 ${sha256("tampered")}`,
    );
    expect(() => readFileSync(join(cacheDir, "agent-sandbox/sandboxes.yaml"))).toThrow(/ENOENT/);
  });

  it("a file the server does not have leaves the CRDs unavailable, with the reason", async () => {
    served = { [`/example/agent-sandbox/${COMMIT_A}/k8s/crds/sandboxes.yaml`]: SANDBOX };
    const cacheDir = tempDir("berth-crd-cache-");
    expect(await upstreamCRDs({ folder: undefined, cacheDir, baseURL, pinsFile })).toEqual({
      available: false,
      reason: `upstream CRDs unavailable: BERTH_UPSTREAM_CRDS is not set and cannot download ${baseURL}/example/substrate/${COMMIT_B}/generated/workerpools.yaml (HTTP 404)`,
    });
  });

  it("no network at all leaves them unavailable, with the cause", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const crds = await upstreamCRDs({ folder: undefined, cacheDir: tempDir("berth-crd-cache-"), baseURL: `http://127.0.0.1:${port}`, pinsFile });
    expect(crds.available).toBe(false);
    expect(crds.available === false && crds.reason).toMatch(/^upstream CRDs unavailable: BERTH_UPSTREAM_CRDS is not set and cannot download http:\/\/127\.0\.0\.1:\d+\/example\/.+ \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  });
});

describe("out of a Go module, as the module proxy serves it", () => {
  const MODULE = "example.com/Agent-Sandbox";
  // The proxy protocol spells capitals as "!" and the lower case.
  const ZIP_PATH = "/example.com/!agent-!sandbox/@v/v1.0.1.zip";
  const pinsFile = join(tempDir("berth-pins-"), "pins.yaml");
  writeFileSync(
    pinsFile,
    `sources:
  - module: ${MODULE}
    version: v1.0.1
    folder: agent-sandbox-v1.0.1
    files:
      - { kind: Sandbox, path: k8s/crds/sandboxes.yaml, sha256: ${sha256(SANDBOX)} }
`,
  );
  const moduleZip = (sandbox: string) =>
    Buffer.from(zipSync({ [`${MODULE}@v1.0.1/k8s/crds/sandboxes.yaml`]: strToU8(sandbox), [`${MODULE}@v1.0.1/k8s/crds/sandboxclaims.yaml`]: strToU8(CLAIM), [`${MODULE}@v1.0.1/go.mod`]: strToU8(`module ${MODULE}\n`) }));
  let zip = moduleZip(SANDBOX);
  const requests: string[] = [];
  let server: Server;
  let goProxyURL = "";

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url!);
      if (req.url === ZIP_PATH) res.writeHead(200, { "content-type": "application/zip" }).end(zip);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    goProxyURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("takes the pinned file out of the module's zip once, then reads the cache", async () => {
    zip = moduleZip(SANDBOX);
    requests.length = 0;
    const cacheDir = tempDir("berth-crd-cache-");
    expect(await upstreamCRDs({ folder: undefined, cacheDir, goProxyURL, pinsFile })).toMatchObject({ available: true, source: `${cacheDir} (1 of 1 files downloaded now, sha256 checked)` });
    expect(readFileSync(join(cacheDir, "agent-sandbox-v1.0.1/sandboxes.yaml"), "utf8")).toBe(SANDBOX);
    expect(await upstreamCRDs({ folder: undefined, cacheDir, goProxyURL, pinsFile })).toMatchObject({ available: true, source: `${cacheDir} (0 of 1 files downloaded now, sha256 checked)` });
    expect(requests).toEqual([ZIP_PATH]);
  });

  it("a module whose file differs from its pin is an error naming the module and the address, and nothing is cached", async () => {
    zip = moduleZip("tampered");
    const cacheDir = tempDir("berth-crd-cache-");
    await expect(upstreamCRDs({ folder: undefined, cacheDir, goProxyURL, pinsFile })).rejects.toThrow(
      `upstream CRD downloaded from ${goProxyURL}${ZIP_PATH}: sha256 ${sha256("tampered")}, but ${MODULE}@v1.0.1 k8s/crds/sandboxes.yaml (test/upstream-crds.yaml) is pinned at ${sha256(SANDBOX)}`,
    );
    expect(() => readFileSync(join(cacheDir, "agent-sandbox-v1.0.1/sandboxes.yaml"))).toThrow(/ENOENT/);
  });

  it("a module without the pinned file is an error naming it", async () => {
    zip = Buffer.from(zipSync({ [`${MODULE}@v1.0.1/go.mod`]: strToU8(`module ${MODULE}\n`) }));
    await expect(upstreamCRDs({ folder: undefined, cacheDir: tempDir("berth-crd-cache-"), goProxyURL, pinsFile })).rejects.toThrow(`upstream CRD ${MODULE}@v1.0.1 has no k8s/crds/sandboxes.yaml`);
  });

  it("the proxy is GOPROXY's first http(s) entry, else proxy.golang.org", () => {
    expect(goProxy({})).toBe("https://proxy.golang.org");
    expect(goProxy({ GOPROXY: "https://goproxy.example.com/,direct" })).toBe("https://goproxy.example.com");
    expect(goProxy({ GOPROXY: "off" })).toBe("https://proxy.golang.org");
    expect(goProxy({ GOPROXY: "direct|https://mirror.example.com" })).toBe("https://mirror.example.com");
  });

  it("a module pin needs a release version", () => {
    const file = join(tempDir("berth-pins-"), "pins.yaml");
    writeFileSync(file, `sources:\n  - { module: ${MODULE}, version: main, folder: x, files: [{ kind: Sandbox, path: a.yaml, sha256: ${sha256(SANDBOX)} }] }\n`);
    expect(() => pinnedCRDs(file)).toThrow(`${file}: sources[0].version: a release version such as v1.0.1`);
  });
});
