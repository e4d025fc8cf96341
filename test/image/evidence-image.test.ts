// The evidence image as it ships (npm run image -- --evidence): the function image's libraries and
// Node.js, and Debian's git with the two libraries it links beyond libc, in a layer of its own.
// The same digest from two independent builds, and a git that runs from the image's own files:
// its own loader and libraries, and, in the image's root filesystem as 65532, real work in a
// repository without anything of the host's.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildEvidenceImage, buildFunctionImage, EVIDENCE, imageSources } from "../../image/build.js";
import { type BuiltImage, unpackImage } from "../../image/oci.js";
import { shippedRuntime } from "../../image/shipped.js";
import { tempDirs } from "../support/temp.js";

const tempDir = tempDirs();
const NAME = "berth.local/evidence:test";
const isRoot = process.getuid?.() === 0;
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

let first: BuiltImage;
let second: BuiltImage;
let functionImage: BuiltImage;
let rootfs: string;

beforeAll(async () => {
  execFileSync("npm", ["run", "-s", EVIDENCE.bundleScript], { stdio: "inherit" });
  // Two builds that share nothing but the pins: each downloads its sources into its own cache.
  const caches = { first: tempDir("berth-evidence-image-first-"), second: tempDir("berth-evidence-image-second-") };
  for (const which of ["first", "second"] as const) {
    const image = await buildEvidenceImage({ name: NAME, cacheDir: caches[which] });
    const uncompressed = image.layers.reduce((n, l) => n + l.uncompressedSize, 0);
    console.log(`evidence image, ${which} build: ${image.digest}, ${mb(image.size)} compressed, ${mb(uncompressed)} uncompressed`);
    if (which === "first") first = image;
    else second = image;
  }
  // The function image but for its last layer, the bundle: the evidence program's will do, and
  // leaves dist/function-berth.mjs to the function image's suite, which bundles it meanwhile.
  functionImage = await buildFunctionImage({ name: "berth.local/function-berth:test", cacheDir: caches.first, bundlePath: EVIDENCE.bundlePath });
  rootfs = join(tempDir("berth-evidence-image-rootfs-"), "rootfs");
  await unpackImage(first, rootfs);
});

/** The image's git, started by the image's own loader, with only the image's libraries on its path. */
function imageGit(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
  const libraries = ["lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu"].map((d) => join(rootfs, d)).join(":");
  return spawnSync(join(rootfs, "lib64/ld-linux-x86-64.so.2"), ["--inhibit-cache", "--library-path", libraries, ...args], { encoding: "utf8", ...options });
}

describe("the evidence image, from its pinned sources", () => {
  it("has the same digest from two independent builds", () => {
    expect(second.digest).toBe(first.digest);
    expect(second.layers.map((l) => l.digest)).toEqual(first.layers.map((l) => l.digest));
  });

  it("is the function image's libraries and Node.js, git in a layer of its own, and its bundle", () => {
    const [libraries, , node] = first.layers.map((l) => l.digest);
    expect(first.layers).toHaveLength(4);
    expect([libraries, node]).toEqual(functionImage.layers.slice(0, 2).map((l) => l.digest));
  });

  it("holds git, its libraries and their copyright files, and no other program, git configuration, helper or template", () => {
    expect(readdirSync(join(rootfs, "usr/bin"))).toEqual(["git"]);
    const copyrights = imageSources().evidence.debian.map((d) => `usr/share/doc/${d.package}/copyright`);
    expect(copyrights.filter((f) => !existsSync(join(rootfs, f)))).toEqual([]);
    for (const absent of ["etc/gitconfig", "usr/lib/git-core", "usr/share/git-core", "bin/sh", "usr/bin/sh", "bin/busybox"]) expect(existsSync(join(rootfs, absent)), absent).toBe(false);
    expect(readdirSync(join(rootfs, "evidence"))).toEqual([shippedRuntime(EVIDENCE.dockerfile).entrypoint.at(-1)]);
    // Nothing set for git in the image's config: the collector gives each git its environment.
    expect(JSON.parse(first.config.bytes.toString()).config.Env).toBeUndefined();
  });

  it("links only the image's own loader and libraries", () => {
    const r = imageGit(["--list", join(rootfs, "usr/bin/git")]);
    expect(r.status, r.stderr).toBe(0);
    const resolved = [...r.stdout.matchAll(/=> (\S+)/g)].map((m) => m[1]!);
    expect(resolved.map((p) => p.replace(rootfs, "<rootfs>")).sort()).toEqual([
      "<rootfs>/lib/x86_64-linux-gnu/libc.so.6",
      "<rootfs>/lib/x86_64-linux-gnu/libz.so.1",
      "<rootfs>/lib64/ld-linux-x86-64.so.2",
      "<rootfs>/usr/lib/x86_64-linux-gnu/libpcre2-8.so.0",
    ]);
    expect(imageGit([join(rootfs, "usr/bin/git"), "--version"]).stdout).toBe("git version 2.39.5\n");
  });
});

describe.skipIf(!isRoot)("the evidence image's git, run in its own root filesystem as 65532 (needs root to chroot)", () => {
  /** git in the image's root, as the collector runs it: no system config, a HOME of its own. */
  const git = (args: string[], input?: string) =>
    spawnSync("unshare", [`--root=${rootfs}`, "--wd=/tmp", "--setuid=65532", "--setgid=65532", "/usr/bin/git", "--git-dir=/tmp/repo.git", ...args], {
      encoding: "utf8",
      env: { PATH: "/usr/bin", LC_ALL: "C", HOME: "/home/nonroot", GIT_CONFIG_NOSYSTEM: "1" },
      ...(input === undefined ? {} : { input }),
    });

  beforeAll(() => {
    // Every container gets /dev/null and /dev/urandom from its runtime (the OCI runtime spec's
    // default devices): git opens the first as it starts and reads the second to name a temporary
    // file. The bare root filesystem's /dev is empty.
    execFileSync("mknod", ["-m", "666", join(rootfs, "dev/null"), "c", "1", "3"]);
    execFileSync("mknod", ["-m", "666", join(rootfs, "dev/urandom"), "c", "1", "9"]);
  });

  it("makes a bare repository without templates, writes a blob and reads it back", () => {
    const init = git(["init", "--template=", "--bare"]);
    expect(init.status, init.stderr).toBe(0);
    const blob = "the collector's patch is made by git\n";
    const hash = git(["hash-object", "-w", "--stdin"], blob);
    expect(hash.status, hash.stderr).toBe(0);
    // A blob's name is the SHA-1 of its header and bytes.
    expect(hash.stdout.trim()).toBe(createHash("sha1").update(`blob ${Buffer.byteLength(blob)}\0${blob}`).digest("hex"));
    expect(git(["cat-file", "-t", hash.stdout.trim()]).stdout).toBe("blob\n");
    expect(git(["cat-file", "-p", hash.stdout.trim()]).stdout).toBe(blob);
    expect(readdirSync(join(rootfs, "tmp/repo.git")).sort()).toEqual(["HEAD", "config", "objects", "refs"]);
  });
});

if (!isRoot) console.log("the evidence image's git in its own root is skipped: running its root filesystem needs root (CI runs it)");
