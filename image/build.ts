// The function image, built without Docker from the pinned sources in image/sources.yaml:
// Node.js from the npm registry, the shared libraries it links from Debian packages, and the
// esbuild bundle, with the user, working directory, port and ENTRYPOINT of package/Dockerfile
// (read from it, so the two cannot drift). Every byte follows from those inputs: built twice, it
// has the same digest.
//
//   npm run image [-- --tag <ref>] [--version <release>] [--out <file>] [--json <file>] [--skip-bundle] [--gate | --evidence | --runtime opencode|codex]
//
// --gate builds the MCP gate's image the same way, from package/mcp-gate/Dockerfile and its
// bundle (npm run bundle:gate): the same pinned Node.js and libraries, another bundle.
// --runtime builds a reference runtime's image: the evidence image's layers, a shell (sources.yaml
// shell.debian) in a layer after git's, the agent's binaries from its npm package (sources.yaml
// runtimes), and functions/runtimes/<agent>/main.ts, bundled.
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
import { RUNTIME_PATHS } from "../functions/contracts/runtime-env.js";

/** The reference runtimes Berth ships an image for. */
export const RUNTIME_AGENTS = ["opencode", "codex"] as const;
export type RuntimeAgent = (typeof RUNTIME_AGENTS)[number];

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const SOURCES_FILE = join(REPO, "image/sources.yaml");
const DEFAULT_CACHE = join(REPO, ".cache/image");

const absolutePath = z.string().regex(/^\/[^\0]*[^/]$/, "an absolute path without a trailing /");
const pin = { version: z.string().min(1), url: z.url({ protocol: /^https$/ }), sha256: z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lowercase hex") };
const debianPackages = z.array(z.strictObject({ package: z.string().min(1), ...pin, files: z.array(absolutePath).min(1) })).min(1);
/** An agent's npm package, pinned, and where each file taken from it goes in the image. */
const agentSource = z.strictObject({ package: z.string().min(1), ...pin, files: z.record(z.string().min(1), absolutePath) });
const sourcesSchema = z.strictObject({
  node: z.strictObject({ package: z.string().min(1), ...pin, files: z.record(z.string().min(1), absolutePath) }),
  debian: debianPackages,
  /** What only the evidence image takes: git and the libraries it links beyond libc. */
  evidence: z.strictObject({ debian: debianPackages }),
  /** What only the runtime images take besides git: bash, /bin/sh, coreutils and the like, and the libraries they link. */
  shell: z.strictObject({ debian: debianPackages }),
  /** The reference runtimes' agents, each an npm package of its Linux binary, and the files taken from it. */
  runtimes: z.strictObject({ opencode: agentSource, codex: agentSource } satisfies Record<RuntimeAgent, typeof agentSource>),
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
  /**
   * Files from the Debian packages only this image takes, one list per section of sources.yaml
   * and each a layer (the evidence image's git; the runtime images' git, then their shell); none
   * for the others.
   */
  ownPackages: PackageEntry[][];
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
 * packages come after the libraries, a layer per section: the layers around them stay the
 * function image's, which a node that runs both then holds once.
 */
export function functionImageSpec(name: string, inputs: ImageInputs, version: string): ImageSpec {
  const { runtime } = inputs;
  const [node, ...flags] = runtime.entrypoint;
  const script = flags.pop();
  if (!node || !script || script.includes("/")) throw new Error(`package/Dockerfile ENTRYPOINT ${JSON.stringify(runtime.entrypoint)}: expected [node, ...flags, bundle file name]`);
  if (!inputs.node.some((e) => e.path === node)) throw new Error(`image/sources.yaml: node.files puts no file at ${node}, which package/Dockerfile's ENTRYPOINT runs`);
  const [user, group] = runtime.user.split(":").map(Number);
  if (user !== NONROOT || group !== NONROOT) throw new Error(`package/Dockerfile runs as ${runtime.user}; the image is built for ${NONROOT}:${NONROOT}`);
  return {
    name,
    layers: [...baseLayers(inputs), { files: [{ path: `${runtime.workdir}/${script}`, content: inputs.bundle }] }],
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

/**
 * What every image of Berth's starts from, least often changed first: the libraries with the
 * nonroot account, an image's own Debian packages (if any, a layer per section, in the order
 * given), Node.js. The layers a node already holds for one image it then holds for all.
 */
function baseLayers(inputs: ImageInputs): Layer[] {
  const libraries = layerOf(inputs.debian);
  return [
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
    ...inputs.ownPackages.map(layerOf),
    layerOf(inputs.node),
  ];
}

/** A section of image/sources.yaml that lists Debian packages only some images take. */
export type OwnPackages = "evidence" | "shell";

/** Downloads (once) and reads every pinned source. */
export async function fetchImageInputs(options: { sources?: ImageSources; cacheDir?: string; bundle: Buffer; runtime: ShippedRuntime; ownPackages?: readonly OwnPackages[] }): Promise<ImageInputs> {
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

  const [debian, ownPackages] = await Promise.all([filesOf(sources.debian), Promise.all((options.ownPackages ?? []).map((section) => filesOf(sources[section].debian)))]);
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
  /** The sections of Debian packages this image takes besides the function image's, if any, each a layer. */
  ownPackages?: readonly OwnPackages[];
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
  return buildFunctionImage({ ...options, bundlePath: EVIDENCE.bundlePath, dockerfile: EVIDENCE.dockerfile, ownPackages: ["evidence"] });
}

export function defaultEvidenceImageName(version = packageVersion()): string {
  return `berth.local/evidence:v${version}`;
}

/**
 * A reference runtime's image (npm run image -- --runtime opencode|codex): the evidence image's
 * libraries, git and Node.js (agents read the checkout's history with git), a shell in a layer
 * after git's (sources.yaml shell: bash, dash as /bin/sh, coreutils, grep, sed, findutils,
 * diffutils; the agents run their commands through bash), the agent's own binaries from its npm
 * package in a layer of their own, and the runtime's entrypoint (functions/runtimes/<agent>/
 * main.ts, bundled) that maps the runtime contract to the agent. No toolchain (no compiler, no
 * npm, Node.js not on PATH): an operator whose repositories need one builds on this image.
 */
export async function buildRuntimeImage(options: { agent: RuntimeAgent; name: string; version?: string; cacheDir?: string; bundlePath?: string }): Promise<BuiltImage> {
  const bundlePath = options.bundlePath ?? runtimeBundle(options.agent).bundlePath;
  if (!existsSync(bundlePath)) throw new Error(`${bundlePath} does not exist: run npm run ${runtimeBundle(options.agent).bundleScript} first`);
  const sources = imageSources();
  const cache = options.cacheDir ?? DEFAULT_CACHE;
  // The entrypoint's runtime settings are Berth's, not a Dockerfile's: nothing else builds this image.
  const runtime: ShippedRuntime = { entrypoint: [], workdir: RUNTIME_APP_DIR, port: 0, user: `${NONROOT}:${NONROOT}` };
  const inputs = await fetchImageInputs({ sources, cacheDir: cache, bundle: readFileSync(bundlePath), runtime, ownPackages: ["evidence", "shell"] });
  const agent = sources.runtimes[options.agent];
  const { path } = await fetchPinned({ url: agent.url, sha256: agent.sha256, path: join(cache, "downloads", agent.url.split("/").pop()!), describe: `${agent.package} ${agent.version} (image/sources.yaml)` });
  const what = `${agent.package} ${agent.version} (${path})`;
  const entries = await tarEntries(gunzipSync(readFileSync(path)), Object.keys(agent.files).map((p) => `/${p}`), what);
  const agentFiles = Object.entries(agent.files).map(([from, to]) => ({ ...entries.get(`/${from}`)!, path: to }));
  const script = `${RUNTIME_APP_DIR}/runtime-${options.agent}.mjs`;
  return buildImage({
    name: options.name,
    layers: [...baseLayers(inputs), layerOf(agentFiles), { files: [{ path: script, content: inputs.bundle }] }],
    config: {
      User: runtime.user,
      WorkingDir: RUNTIME_PATHS.checkout,
      Entrypoint: [inputs.node.find((e) => e.path.endsWith("/bin/node"))!.path, script],
      Env: [`HOME=${RUNTIME_PATHS.home}`, "PATH=/usr/bin:/bin"],
      Labels: { "org.opencontainers.image.version": options.version ?? packageVersion(), "dev.berth.runtime.agent": `${agent.package}@${agent.version}` },
    },
  });
}

/** Where a runtime image keeps its entrypoint's bundle. */
const RUNTIME_APP_DIR = "/opt/berth";

export function runtimeBundle(agent: RuntimeAgent): { bundlePath: string; bundleScript: string } {
  return { bundlePath: join(REPO, `dist/runtime-${agent}.mjs`), bundleScript: `bundle:runtime-${agent}` };
}

export function defaultRuntimeImageName(agent: RuntimeAgent, version = packageVersion()): string {
  return `berth.local/runtime-${agent}:v${version}`;
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
      runtime: { type: "string" },
    },
    allowPositionals: false,
  });
  const { gate, evidence } = opts;
  const agent = opts.runtime;
  if ([gate, evidence, agent !== undefined].filter(Boolean).length > 1) {
    console.error("--gate, --evidence and --runtime build different images: choose one");
    process.exit(2);
  }
  if (agent !== undefined && !(RUNTIME_AGENTS as readonly string[]).includes(agent)) {
    console.error(`--runtime ${agent}: Berth ships runtime images for ${RUNTIME_AGENTS.join(" and ")}`);
    process.exit(2);
  }
  const runtimeAgent = agent as RuntimeAgent | undefined;
  const bundleScript = runtimeAgent ? runtimeBundle(runtimeAgent).bundleScript : gate ? GATE.bundleScript : evidence ? EVIDENCE.bundleScript : "bundle";
  if (!opts["skip-bundle"]) {
    const b = spawnSync("npm", ["run", "-s", bundleScript], { cwd: REPO, stdio: "inherit" });
    if (b.status !== 0) process.exit(1);
  }
  const version = (opts.version ?? packageVersion()).replace(/^v/, "");
  const name =
    opts.tag ?? (runtimeAgent ? defaultRuntimeImageName(runtimeAgent, version) : gate ? defaultGateImageName(version) : evidence ? defaultEvidenceImageName(version) : defaultImageName(version));
  const out = resolve(opts.out ?? join(DEFAULT_CACHE, runtimeAgent ? `runtime-${runtimeAgent}.oci.tar` : gate ? "mcp-gate.oci.tar" : evidence ? "evidence.oci.tar" : "function-berth.oci.tar"));
  const image = await (runtimeAgent
    ? buildRuntimeImage({ agent: runtimeAgent, name, version })
    : gate
      ? buildGateImage({ name, version })
      : evidence
        ? buildEvidenceImage({ name, version })
        : buildFunctionImage({ name, version }));
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
