// The function image as it ships, built without Docker from its pinned sources (npm run image):
// the same digest from two independent builds (each downloading its own sources), small, whole
// (every library Node.js links is in it, and nothing else runs: no shell), and working: its
// ENTRYPOINT, run in its own root filesystem as 65532, answers RunFunction over TLS exactly as
// the function does in process.
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, cpSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFunctionImage } from "../../image/build.js";
import { type BuiltImage, unpackImage } from "../../image/oci.js";
import { rootfsCommand, shippedRuntime } from "../../image/shipped.js";
import { CASES, expected } from "../cases.js";
import { EXECUTION_CASES } from "../execution-cases.js";
import { connect, type FunctionProcess, type RunFunctionClient, startFunction } from "../support/function-process.js";
import { tempDirs } from "../support/temp.js";
import { makeTestPKI } from "../support/tls.js";

const tempDir = tempDirs();
const NAME = "berth.local/function-berth:test";
/** The distroless nodejs22-debian12 image's compressed size, the bar this one must not exceed. */
const SIZE_LIMIT_BYTES = 60e6;
const isRoot = process.getuid?.() === 0;
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

let first: BuiltImage;
let second: BuiltImage;
let rootfs: string;

beforeAll(async () => {
  execFileSync("npm", ["run", "-s", "bundle"], { stdio: "inherit" });
  // Two builds that share nothing but the pins: each downloads its sources into its own cache.
  for (const which of ["first", "second"] as const) {
    const t = Date.now();
    const image = await buildFunctionImage({ name: NAME, cacheDir: tempDir(`berth-image-${which}-`) });
    const uncompressed = image.layers.reduce((n, l) => n + l.uncompressedSize, 0);
    console.log(`image, ${which} build: ${image.digest}, ${mb(image.size)} compressed, ${mb(uncompressed)} uncompressed, in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    if (which === "first") first = image;
    else second = image;
  }
  rootfs = join(tempDir("berth-image-rootfs-"), "rootfs");
  await unpackImage(first, rootfs);
});

describe("the function image, from its pinned sources", () => {
  it("has the same digest from two independent builds", () => {
    expect(second.digest).toBe(first.digest);
    expect(second.layers.map((l) => l.digest)).toEqual(first.layers.map((l) => l.digest));
  });

  it(`is small: at most ${mb(SIZE_LIMIT_BYTES)} compressed`, () => {
    expect(first.size).toBeLessThanOrEqual(SIZE_LIMIT_BYTES);
  });

  it("holds Node.js, the libraries it links, the bundle and the accounts, and no shell or other program", () => {
    expect(readdirSync(rootfs).sort()).toEqual(["dev", "etc", "function", "home", "lib", "lib64", "nodejs", "proc", "sys", "tmp", "usr"]);
    for (const shell of ["bin/sh", "bin/bash", "usr/bin/sh", "bin/busybox"]) expect(existsSync(join(rootfs, shell))).toBe(false);
    expect(readdirSync(join(rootfs, "nodejs/bin"))).toEqual(["node"]);
    expect(readdirSync(join(rootfs, "function"))).toEqual([shippedRuntime().entrypoint.at(-1)]);
  });
});

describe.skipIf(!isRoot)("the function image, run in its own root filesystem (needs root to chroot)", () => {
  let fn: FunctionProcess;
  let client: RunFunctionClient;

  beforeAll(async () => {
    // The certificates where Crossplane's package runtime mounts them (the SDK's default folder).
    const pki = makeTestPKI(tempDir);
    const [uid, gid] = shippedRuntime().user.split(":").map(Number) as [number, number];
    const tls = join(rootfs, "tls/server");
    cpSync(pki.serverDir, tls, { recursive: true });
    for (const f of ["", ...readdirSync(tls)]) chownSync(join(tls, f), uid, gid);
    fn = await startFunction({ command: rootfsCommand(rootfs), tlsDir: "/tls/server", env: {} });
    client = connect(fn.address, pki.clientDir);
  });

  afterAll(async () => {
    client?.close();
    await fn?.stop();
  });

  it("finds every library Node.js links inside the image", () => {
    const r = spawnSync("unshare", [`--root=${rootfs}`, "/lib64/ld-linux-x86-64.so.2", "--list", "/nodejs/bin/node"], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("not found");
    expect(r.stdout).toContain("libstdc++.so.6 => /usr/lib/x86_64-linux-gnu/libstdc++.so.6");
  });

  it("runs its ENTRYPOINT as 65532, with the Node.js of its sources", () => {
    const status = execFileSync("cat", [`/proc/${fn.process.pid}/status`], { encoding: "utf8" });
    expect(status).toMatch(/^Uid:\s+65532\s+65532\s+65532\s+65532$/m);
    const version = spawnSync("unshare", [`--root=${rootfs}`, "--setuid=65532", "--setgid=65532", "/nodejs/bin/node", "--version"], { encoding: "utf8" });
    expect(version.stdout.trim()).toMatch(/^v22\./);
  });

  it.each([...CASES, ...EXECUTION_CASES])("answers over TLS as the function does in process: $name", async (c) => {
    expect(JSON.parse(JSON.stringify(await client.runFunction(c.req)))).toEqual(expected(c));
  });
});

if (!isRoot) console.log("the image's run checks are skipped: running its root filesystem needs root (CI runs them)");
