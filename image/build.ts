// The function image, built without Docker from the pinned sources in image/sources.yaml:
// Node.js from the npm registry, the shared libraries it links from Debian packages, and the
// esbuild bundle, with the user, working directory, port and ENTRYPOINT of package/Dockerfile
// (read from it, so the two cannot drift). Every byte follows from those inputs: built twice, it
// has the same digest.
//
//   npm run image [-- --tag <ref>] [--version <release>] [--out <file>] [--json <file>] [--skip-bundle] [--gate | --evidence]
//
// --gate builds the MCP gate's image the same way, from package/mcp-gate/Dockerfile and its
// bundle (npm run bundle:gate): the same pinned Node.js and libraries, another bundle.
// --evidence builds the evidence program's image (the collector and the export) likewise, from
// package/evidence/Dockerfile and npm run bundle:evidence, with Debian's git besides (sources.yaml
// evidence.debian) in a layer of its own: the other layers are the function image's.
//
// writes an OCI image-layout archive (with Docker's manifest.json too) that `crossplane xpkg
// build --embed-runtime-image-tarball`, `ctr images import` and `docker load` all take.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gunzipSync } from "node:zlib";
import { parse } from "yaml";
import { z } from "zod";
import { accountFiles, buildImage, type BuiltImage, type ImageSpec, type Layer } from "./oci.js";
import { debDataTar, type PackageEntry, tarEntries } from "./archives.js";
import { fetchPinned } from "./pinned.js";
import { SHIPPED_ENTRY, type ShippedRuntime, shippedRuntime } from "./shipped.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const SOURCES_FILE = join(REPO, "image/sources.yaml");
const DEFAULT_CACHE = join(REPO, ".cache/image");

const absolutePath = z.string().regex(/^\/[^\0]*[^/]$/, "an absolute path without a trailing /");
const pin = { version: z.string().min(1), url: z.url({ protocol: /^https$/ }), sha256: z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lowercase hex") };
const debianPackages = z.array(z.strictObject({ package: z.string().min(1), ...pin, files: z.array(absolutePath).min(1) })).min(1);
const sourcesSchema = z.strictObject({
  node: z.strictObject({ package: z.string().min(1), ...pin, files: z.record(z.string().min(1), absolutePath) }),
  debian: debianPackages,
  /** What only the evidence image takes: git and the libraries it links beyond libc. */
  evidence: z.strictObject({ debian: debianPackages }),
});
export type ImageSources = z.infer<typeof sourcesSchema>;
type DebianPackage = ImageSources["debian"][number];

export function imageSources(file = SOURCES_FILE): ImageSources {
  const parsed = sourcesSchema.safeParse(parse(readFileSync(file, "utf8")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${file}: ${z.core.toDotPath(issue.path)}: ${issue.message}`);
  }
  return parsed.data;
}

/** The uid and gid the function runs as: distroless's nonroot. */
const NONROOT = 65532;

/** What the image is assembled from, once fetched and read. */
export interface ImageInputs {
  /** Files from the Debian packages, at their paths in the packages. */
  debian: PackageEntry[];
  /** Files from the Debian packages only this image takes (the evidence image's git); none for the others. */
  ownPackages: PackageEntry[];
  /** Files from the Node.js package, already at their image paths. */
  node: PackageEntry[];
  bundle: Buffer;
  runtime: ShippedRuntime;
}

const layerOf = (entries: PackageEntry[]): Layer => ({
  files: entries.flatMap((e) => (e.type === "file" ? [{ path: e.path, content: e.content, mode: e.mode & 0o7777 }] : [])),
  symlinks: entries.flatMap((e) => (e.type === "symlink" ? [{ path: e.path, target: e.target }] : [])),
});

/**
 * The image, from its inputs: three layers ordered from least to most often changed (the
 * libraries, Node.js, the bundle), so that a release changes only the last. An image's own
 * packages are a fourth, after the libraries: the layers around it stay the function image's,
 * which a node that runs both then holds once.
 */
export function functionImageSpec(name: string, inputs: ImageInputs, version: string): ImageSpec {
  const { runtime } = inputs;
  const [node, ...flags] = runtime.entrypoint;
  const script = flags.pop();
  if (!node || !script || script.includes("/")) throw new Error(`package/Dockerfile ENTRYPOINT ${JSON.stringify(runtime.entrypoint)}: expected [node, ...flags, bundle file name]`);
  if (!inputs.node.some((e) => e.path === node)) throw new Error(`image/sources.yaml: node.files puts no file at ${node}, which package/Dockerfile's ENTRYPOINT runs`);
  const [user, group] = runtime.user.split(":").map(Number);
  if (user !== NONROOT || group !== NONROOT) throw new Error(`package/Dockerfile runs as ${runtime.user}; the image is built for ${NONROOT}:${NONROOT}`);
  const libraries = layerOf(inputs.debian);
  return {
    name,
    layers: [
      {
        symlinks: libraries.symlinks,
        files: [...libraries.files!, ...accountFiles([{ name: "nonroot", uid: NONROOT, gid: NONROOT, home: "/home/nonroot" }])],
        dirs: [
          { path: "/home/nonroot", mode: 0o700, uid: NONROOT, gid: NONROOT },
          { path: "/tmp", mode: 0o1777 },
          // Mount points a container runtime fills. Node.js sizes its heap from /proc: run without
          // it (a bare chroot), the function's peak RSS grows by about a third.
          { path: "/proc" },
          { path: "/sys" },
          { path: "/dev" },
        ],
      },
      ...(inputs.ownPackages.length > 0 ? [layerOf(inputs.ownPackages)] : []),
      layerOf(inputs.node),
      { files: [{ path: `${runtime.workdir}/${script}`, content: inputs.bundle }] },
    ],
    config: {
      User: runtime.user,
      WorkingDir: runtime.workdir,
      Entrypoint: runtime.entrypoint,
      ExposedPorts: { [`${runtime.port}/tcp`]: {} },
      // Two releases of the same bundle are still two images.
      Labels: { "org.opencontainers.image.version": version },
    },
  };
}

/** Which section of image/sources.yaml lists the Debian packages only this image takes. */
export type OwnPackages = "evidence";

/** Downloads (once) and reads every pinned source. */
export async function fetchImageInputs(options: { sources?: ImageSources; cacheDir?: string; bundle: Buffer; runtime: ShippedRuntime; ownPackages?: OwnPackages }): Promise<ImageInputs> {
  const sources = options.sources ?? imageSources();
  const cache = options.cacheDir ?? DEFAULT_CACHE;
  const fetchOne = (p: { package: string; version: string; url: string; sha256: string }) =>
    fetchPinned({ url: p.url, sha256: p.sha256, path: join(cache, "downloads", p.url.split("/").pop()!), describe: `${p.package} ${p.version} (image/sources.yaml)` });
  const filesOf = async (packages: DebianPackage[]) =>
    (
      await Promise.all(
        packages.map(async (d) => {
          const { path } = await fetchOne(d);
          const what = `${d.package} ${d.version} (${path})`;
          return [...(await tarEntries(debDataTar(readFileSync(path), what), d.files, what)).values()];
        }),
      )
    ).flat();

  const [debian, ownPackages] = await Promise.all([filesOf(sources.debian), options.ownPackages ? filesOf(sources[options.ownPackages].debian) : []]);
  const { path: nodePath } = await fetchOne(sources.node);
  const nodeWhat = `${sources.node.package} ${sources.node.version} (${nodePath})`;
  const nodeFiles = await tarEntries(gunzipSync(readFileSync(nodePath)), Object.keys(sources.node.files).map((p) => `/${p}`), nodeWhat);
  const node = Object.entries(sources.node.files).map(([from, to]) => ({ ...nodeFiles.get(`/${from}`)!, path: to }));
  return { debian, ownPackages, node, bundle: options.bundle, runtime: options.runtime };
}

export interface FunctionImageOptions {
  name: string;
  /** The release it is (its org.opencontainers.image.version label). Default: package.json's version. */
  version?: string;
  bundlePath?: string;
  cacheDir?: string;
  dockerfile?: string;
  /** The Debian packages this image takes besides the function image's, if any. */
  ownPackages?: OwnPackages;
}

export async function buildFunctionImage(options: FunctionImageOptions): Promise<BuiltImage> {
  const bundlePath = options.bundlePath ?? join(REPO, SHIPPED_ENTRY);
  if (!existsSync(bundlePath)) throw new Error(`${bundlePath} does not exist: run npm run bundle first`);
  const runtime = shippedRuntime(options.dockerfile ?? join(REPO, "package/Dockerfile"));
  const inputs = await fetchImageInputs({ bundle: readFileSync(bundlePath), runtime, cacheDir: options.cacheDir, ownPackages: options.ownPackages });
  return buildImage(functionImageSpec(options.name, inputs, options.version ?? packageVersion()));
}

/** package.json's version: the release being built. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
}

/** The default reference: the package's version, on a registry name that never resolves. */
export function defaultImageName(version = packageVersion()): string {
  return `berth.local/function-berth:v${version}`;
}

/** The MCP gate's image: its Dockerfile and bundle in place of the function's. */
export const GATE = { dockerfile: join(REPO, "package/mcp-gate/Dockerfile"), bundlePath: join(REPO, "dist/mcp-gate.mjs"), bundleScript: "bundle:gate" };

export function buildGateImage(options: Omit<FunctionImageOptions, "bundlePath" | "dockerfile" | "ownPackages">): Promise<BuiltImage> {
  return buildFunctionImage({ ...options, bundlePath: GATE.bundlePath, dockerfile: GATE.dockerfile });
}

export function defaultGateImageName(version = packageVersion()): string {
  return `berth.local/mcp-gate:v${version}`;
}

/** The evidence program's image: its Dockerfile and bundle in place of the function's, and git. */
export const EVIDENCE = { dockerfile: join(REPO, "package/evidence/Dockerfile"), bundlePath: join(REPO, "dist/evidence.mjs"), bundleScript: "bundle:evidence" };

export function buildEvidenceImage(options: Omit<FunctionImageOptions, "bundlePath" | "dockerfile" | "ownPackages">): Promise<BuiltImage> {
  return buildFunctionImage({ ...options, bundlePath: EVIDENCE.bundlePath, dockerfile: EVIDENCE.dockerfile, ownPackages: "evidence" });
}

export function defaultEvidenceImageName(version = packageVersion()): string {
  return `berth.local/evidence:v${version}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values: opts } = parseArgs({
    options: {
      tag: { type: "string" },
      version: { type: "string" },
      out: { type: "string" },
      json: { type: "string" },
      "skip-bundle": { type: "boolean", default: false },
      gate: { type: "boolean", default: false },
      evidence: { type: "boolean", default: false },
    },
    allowPositionals: false,
  });
  const { gate, evidence } = opts;
  if (gate && evidence) {
    console.error("--gate and --evidence build different images: choose one");
    process.exit(2);
  }
  if (!opts["skip-bundle"]) {
    const b = spawnSync("npm", ["run", "-s", gate ? GATE.bundleScript : evidence ? EVIDENCE.bundleScript : "bundle"], { cwd: REPO, stdio: "inherit" });
    if (b.status !== 0) process.exit(1);
  }
  const version = (opts.version ?? packageVersion()).replace(/^v/, "");
  const name = opts.tag ?? (gate ? defaultGateImageName(version) : evidence ? defaultEvidenceImageName(version) : defaultImageName(version));
  const out = resolve(opts.out ?? join(DEFAULT_CACHE, gate ? "mcp-gate.oci.tar" : evidence ? "evidence.oci.tar" : "function-berth.oci.tar"));
  const image = await (gate ? buildGateImage({ name, version }) : evidence ? buildEvidenceImage({ name, version }) : buildFunctionImage({ name, version }));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, image.archive);
  const figures = {
    name,
    digest: image.digest,
    compressed_bytes: image.size,
    uncompressed_bytes: image.layers.reduce((n, l) => n + l.uncompressedSize, 0),
    layers: image.layers.map((l) => ({ digest: l.digest, size: l.size, uncompressed: l.uncompressedSize })),
    archive: out,
  };
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  console.log(`${name}\n  digest ${image.digest}\n  size ${mb(figures.compressed_bytes)} compressed, ${mb(figures.uncompressed_bytes)} uncompressed, ${image.layers.length} layers\n  written to ${out}`);
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify(figures, null, 2)}\n`);
}
