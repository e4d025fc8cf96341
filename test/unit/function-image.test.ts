// The function image built without Docker (image/): its runtime settings are package/
// Dockerfile's, its bytes follow from its inputs alone, and bad sources or packages are refused
// with an error naming the field or file. These tests build from small stand-in inputs; the real
// pinned sources are downloaded, built twice and run by the image suite (npm run test:image).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { arMembers, debDataTar, readTar, tarEntries, type PackageEntry } from "../../image/archives.js";
import { EVIDENCE, functionImageSpec, imageSources, type ImageInputs } from "../../image/build.js";
import { buildImage, tarOf } from "../../image/oci.js";
import { shippedRuntime } from "../../image/shipped.js";
import { tempDirs } from "../support/temp.js";

const tempDir = tempDirs();

const file = (path: string, content: string, mode = 0o644): PackageEntry => ({ path, mode, type: "file", content: Buffer.from(content) });

function inputs(overrides: Partial<ImageInputs> = {}): ImageInputs {
  return {
    debian: [
      file("/lib/x86_64-linux-gnu/libc.so.6", "libc", 0o755),
      { path: "/lib64/ld-linux-x86-64.so.2", mode: 0o777, type: "symlink", target: "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" },
    ],
    ownPackages: [],
    node: [file("/nodejs/bin/node", "node", 0o755), file("/nodejs/LICENSE", "MIT")],
    bundle: Buffer.from("export {};\n"),
    runtime: shippedRuntime(),
    ...overrides,
  };
}

/** Every path in a built image's layers, with its tar header. */
async function pathsOf(spec: ReturnType<typeof functionImageSpec>) {
  const image = await buildImage(spec);
  const all: { layer: number; name: string; type: string; mode: number; uid: number }[] = [];
  for (const [i, layer] of image.layers.entries()) {
    await readTar(gunzipSync(layer.bytes), (h) => all.push({ layer: i, name: `/${h.name.replace(/\/$/, "")}`, type: h.type!, mode: h.mode!, uid: h.uid! }));
  }
  return { image, all };
}

describe("the function image", () => {
  it("runs what package/Dockerfile runs: its ENTRYPOINT, WORKDIR, EXPOSE and the nonroot user", async () => {
    const runtime = shippedRuntime();
    expect(runtime.entrypoint[0]).toBe("/nodejs/bin/node");
    expect(runtime.entrypoint.at(-1)).toBe("function-berth.mjs");
    const spec = functionImageSpec("berth.local/function-berth:test", inputs(), "1.2.3");
    expect(spec.config).toEqual({
      User: "65532:65532",
      WorkingDir: "/function",
      Entrypoint: runtime.entrypoint,
      ExposedPorts: { "9443/tcp": {} },
      Labels: { "org.opencontainers.image.version": "1.2.3" },
    });
  });

  it("holds the libraries, Node.js and the bundle in three layers, least changed first, and no shell", async () => {
    const { all } = await pathsOf(functionImageSpec("berth.local/function-berth:test", inputs(), "1.2.3"));
    const where = (name: string) => all.find((e) => e.name === name);
    expect(where("/lib/x86_64-linux-gnu/libc.so.6")).toMatchObject({ layer: 0, type: "file", mode: 0o755 });
    expect(where("/lib64/ld-linux-x86-64.so.2")).toMatchObject({ layer: 0, type: "symlink" });
    expect(where("/etc/passwd")).toMatchObject({ layer: 0 });
    expect(where("/home/nonroot")).toMatchObject({ layer: 0, type: "directory", uid: 65532, mode: 0o700 });
    expect(where("/tmp")).toMatchObject({ layer: 0, type: "directory", mode: 0o1777 });
    expect(where("/nodejs/bin/node")).toMatchObject({ layer: 1, mode: 0o755 });
    expect(where("/function/function-berth.mjs")).toMatchObject({ layer: 2, mode: 0o644 });
    expect(all.filter((e) => /\/(sh|bash|busybox)$/.test(e.name))).toEqual([]);
  });

  it("is reproducible: the same inputs give the same digest; a new bundle changes only the last layer", async () => {
    const a = await buildImage(functionImageSpec("berth.local/function-berth:a", inputs(), "1.2.3"));
    const b = await buildImage(functionImageSpec("berth.local/function-berth:b", inputs(), "1.2.3"));
    expect(b.digest).toBe(a.digest); // the tag is not part of the manifest
    const c = await buildImage(functionImageSpec("berth.local/function-berth:a", inputs({ bundle: Buffer.from("export const x = 1;\n") }), "1.2.3"));
    expect(c.digest).not.toBe(a.digest);
    expect(c.layers.map((l) => l.digest).slice(0, 2)).toEqual(a.layers.map((l) => l.digest).slice(0, 2));
    expect(c.layers[2]!.digest).not.toBe(a.layers[2]!.digest);
    // The next release of the same bundle: the same layers, another image.
    const next = await buildImage(functionImageSpec("berth.local/function-berth:a", inputs(), "1.2.4"));
    expect(next.digest).not.toBe(a.digest);
    expect(next.layers.map((l) => l.digest)).toEqual(a.layers.map((l) => l.digest));
  });

  it("puts an image's own packages in a layer of their own after the libraries, the function image's layers around it unchanged", async () => {
    const plain = await pathsOf(functionImageSpec("berth.local/evidence:test", inputs(), "1.2.3"));
    const git = [file("/usr/bin/git", "git", 0o755), { path: "/lib/x86_64-linux-gnu/libz.so.1", mode: 0o777, type: "symlink" as const, target: "libz.so.1.2.13" }];
    const withGit = await pathsOf(functionImageSpec("berth.local/evidence:test", inputs({ ownPackages: [git] }), "1.2.3"));
    expect(withGit.all.filter((e) => e.layer === 1 && e.type !== "directory")).toEqual([
      { layer: 1, name: "/lib/x86_64-linux-gnu/libz.so.1", type: "symlink", mode: 0o777, uid: 0 },
      { layer: 1, name: "/usr/bin/git", type: "file", mode: 0o755, uid: 0 },
    ]);
    const [libraries, own, ...rest] = withGit.image.layers.map((l) => l.digest);
    expect([libraries, ...rest]).toEqual(plain.image.layers.map((l) => l.digest));
    expect(own).not.toBe(libraries);
  });

  it("is refused when the sources put no Node.js where the ENTRYPOINT runs it", () => {
    expect(() => functionImageSpec("berth.local/f:t", inputs({ node: [file("/usr/bin/node", "node", 0o755)] }), "1.2.3")).toThrow(
      "image/sources.yaml: node.files puts no file at /nodejs/bin/node, which package/Dockerfile's ENTRYPOINT runs",
    );
  });

  it("is refused when the Dockerfile's final stage is not a nonroot base", () => {
    const dockerfile = join(tempDir("berth-dockerfile-"), "Dockerfile");
    writeFileSync(dockerfile, 'FROM node:22 AS build\nFROM gcr.io/distroless/nodejs22-debian12\nWORKDIR /function\nEXPOSE 9443\nENTRYPOINT ["/nodejs/bin/node", "f.mjs"]\n');
    expect(() => shippedRuntime(dockerfile)).toThrow("the final stage must be a :nonroot base (FROM gcr.io/distroless/nodejs22-debian12)");
  });
});

describe("image/sources.yaml", () => {
  it("pins every source by https URL and sha256, Node.js 22 among them", () => {
    const sources = imageSources();
    expect(sources.node.version).toMatch(/^22\./);
    expect(sources.debian.map((d) => d.package)).toEqual(["libc6", "libstdc++6", "libgcc-s1", "gcc-12-base"]);
    expect(sources.evidence.debian.map((d) => `${d.package} ${d.version}`)).toEqual(["git 1:2.39.5-0+deb12u3", "libpcre2-8-0 10.42-1+deb12u2", "zlib1g 1:1.2.13.dfsg-1+deb12u1"]);
    expect(sources.shell.debian.map((d) => d.package)).toEqual(["bash", "dash", "coreutils", "grep", "sed", "findutils", "diffutils", "libtinfo6", "libselinux1", "libacl1", "libattr1", "libgmp10"]);
  });

  it("and package/evidence/Dockerfile takes the same git: the same .debs by URL and sha256, the same files", () => {
    const lines = readFileSync(EVIDENCE.dockerfile, "utf8").split("\n");
    const debs = lines.flatMap((l) => /^ADD --checksum=sha256:([0-9a-f]{64}) (\S+) \/debs\/$/.exec(l)?.slice(1, 3) ?? []);
    const start = lines.findIndex((l) => l.endsWith("cp --archive --parents \\"));
    const end = lines.findIndex((l, i) => i > start && l.trim() === "/git/");
    const files = lines.slice(start + 1, end).map((l) => `/${l.trim().replace(/ \\$/, "")}`);
    const { evidence } = imageSources();
    expect({ debs, files }).toEqual({ debs: evidence.debian.flatMap((d) => [d.sha256, d.url]), files: evidence.debian.flatMap((d) => d.files) });
    expect(lines).toContain("COPY --from=git /git/ /");
    // The final stage still reads as the image build.ts makes of it.
    expect(shippedRuntime(EVIDENCE.dockerfile)).toEqual({
      entrypoint: ["/nodejs/bin/node", "--max-semi-space-size=1", "--optimize-for-size", "evidence.mjs"],
      workdir: "/evidence",
      port: 9090,
      user: "65532:65532",
    });
  });

  it.each([
    ["node.url: Invalid URL", (s: string) => s.replace("url: https://registry.npmjs.org", "url: http://registry.npmjs.org")],
    ["debian[0].sha256: a sha256 in lowercase hex", (s: string) => s.replace(/(- package: libc6\n\s+version: \S+\n\s+url: \S+\n\s+sha256: )[0-9a-f]+/, "$1nothex")],
    ["debian[1].files[0]: an absolute path without a trailing /", (s: string) => s.replace("      - /usr/lib/x86_64-linux-gnu/libstdc++.so.6\n", "      - usr/lib/x86_64-linux-gnu/libstdc++.so.6\n")],
    ["evidence.debian[0].url: Invalid URL", (s: string) => s.replace("url: https://deb.debian.org/debian/pool/main/g/git/", "url: http://deb.debian.org/debian/pool/main/g/git/")],
  ])("a bad field is an error naming it: %s", async (message, edit) => {
    const broken = join(tempDir("berth-sources-"), "sources.yaml");
    writeFileSync(broken, edit(readFileSync("image/sources.yaml", "utf8")));
    expect(() => imageSources(broken)).toThrow(`${broken}: ${message}`);
  });
});

describe("reading the packages", () => {
  /** An ar archive as dpkg writes it: the magic, then 60-byte headers and 2-byte aligned members. */
  function ar(members: [string, Buffer][]): Buffer {
    const parts: Buffer[] = [Buffer.from("!<arch>\n")];
    for (const [name, data] of members) {
      parts.push(Buffer.from(`${name.padEnd(16)}${"0".padEnd(12)}${"0".padEnd(6)}${"0".padEnd(6)}${"100644".padEnd(8)}${String(data.length).padEnd(10)}\`\n`, "latin1"), data);
      if (data.length % 2) parts.push(Buffer.from("\n"));
    }
    return Buffer.concat(parts);
  }

  it("takes the named files and symlinks out of a .deb's data tar, and names the ones it lacks", async () => {
    const data = await tarOf([
      { header: { name: "./lib/", type: "directory" } },
      { header: { name: "./lib/libx.so.1", type: "file", size: 3, mode: 0o755 }, content: Buffer.from("elf") },
      { header: { name: "./lib/libx.so", type: "symlink", linkname: "libx.so.1" } },
    ]);
    const deb = ar([["debian-binary", Buffer.from("2.0\n")], ["control.tar.gz", gzipSync(Buffer.alloc(0))], ["data.tar.gz", gzipSync(data)]]);
    expect([...arMembers(deb, "x.deb").keys()]).toEqual(["debian-binary", "control.tar.gz", "data.tar.gz"]);
    const entries = await tarEntries(debDataTar(deb, "x.deb"), ["/lib/libx.so.1", "/lib/libx.so"], "x.deb");
    expect(entries.get("/lib/libx.so.1")).toMatchObject({ type: "file", mode: 0o755, content: Buffer.from("elf") });
    expect(entries.get("/lib/libx.so")).toMatchObject({ type: "symlink", target: "libx.so.1" });
    await expect(tarEntries(debDataTar(deb, "x.deb"), ["/lib/libx.so.1", "/lib/liby.so.1"], "x.deb")).rejects.toThrow("x.deb has no /lib/liby.so.1");
  });

  it("refuses what is not a .deb, naming it", () => {
    expect(() => arMembers(Buffer.from("PK\x03\x04 a zip"), "y.deb")).toThrow("y.deb is not an ar archive");
    expect(() => debDataTar(ar([["debian-binary", Buffer.from("2.0\n")]]), "z.deb")).toThrow("z.deb has no data.tar.xz or data.tar.gz (members: debian-binary)");
  });
});

describe("the Function package around the image (crossplane xpkg build --embed-runtime-image-tarball)", () => {
  /** A package as `xpkg build -o` writes it (docker-save layout): the image's layers, then package layers. */
  async function xpkg(image: Awaited<ReturnType<typeof buildImage>>, edit: (config: any) => void = () => {}): Promise<Buffer> {
    const base = { digest: `sha256:${"b".repeat(64)}`, diffID: `sha256:${"c".repeat(64)}` };
    const config = JSON.parse(image.config.bytes.toString());
    config.rootfs.diff_ids.push(base.diffID);
    config.config.Labels = { ...config.config.Labels, [`io.crossplane.xpkg:${base.digest}`]: "base" };
    edit(config);
    const configBytes = Buffer.from(JSON.stringify(config));
    const layers = [...image.layers.map((l) => l.digest), base.digest].map((d) => `${d.slice("sha256:".length)}.tar.gz`);
    const manifest = Buffer.from(JSON.stringify([{ Config: "sha256:cfg", RepoTags: null, Layers: layers }]));
    return tarOf([
      { header: { name: "sha256:cfg", type: "file", size: configBytes.length }, content: configBytes },
      { header: { name: "manifest.json", type: "file", size: manifest.length }, content: manifest },
    ]);
  }

  it("passes when the package is the image's layers and settings, then labelled package layers; names each difference otherwise", async () => {
    const { embeddedImageProblems } = await import("../../image/xpkg.js");
    const image = await buildImage(functionImageSpec("berth.local/function-berth:test", inputs(), "1.2.3"));
    expect(await embeddedImageProblems(await xpkg(image), image)).toEqual([]);
    expect(await embeddedImageProblems(await xpkg(image, (c) => (c.config.Entrypoint = ["/bin/sh"])), image)).toEqual([
      `Entrypoint: the package has ["/bin/sh"], the image ${JSON.stringify(shippedRuntime().entrypoint)}`,
    ]);
    expect(await embeddedImageProblems(await xpkg(image, (c) => (c.config.Labels = {})), image)).toEqual([
      "layers: after the image's 3, a layer is not one of the package's (labels: {})",
      "layers: no package layer labelled base (package.yaml)",
    ]);
    const other = await buildImage(functionImageSpec("berth.local/function-berth:test", inputs({ bundle: Buffer.from("export const y = 2;\n") }), "1.2.3"));
    expect((await embeddedImageProblems(await xpkg(other), image))[0]).toMatch(/^layers: the package starts with /);
  });
});
