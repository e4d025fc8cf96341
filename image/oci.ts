// Container images without a container engine: each layer is a tar of the files we name, and
// the image is written as an OCI image-layout archive that also carries Docker's manifest.json,
// so `ctr images import`, go-containerregistry's tarball reader (crossplane xpkg) and `docker
// load` all take it. Every byte follows from the inputs (owner, mode and a zero mtime on every
// entry, entries sorted, gzip without a timestamp, a fixed creation date): the same inputs give
// the same digest.
import { createHash } from "node:crypto";
import { chmodSync, lchownSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { pack, type Header } from "tar-stream";
import { readTar } from "./archives.js";

type Headers = Partial<Header> & Pick<Header, "name">;

/** A file in a layer. Parent directories are added as root-owned 0755 unless listed. */
export interface LayerFile {
  /** Absolute path in the image: /pause, /etc/passwd. */
  path: string;
  content: Buffer | string;
  /** Default 0o644. */
  mode?: number;
  uid?: number;
  gid?: number;
}
export interface LayerDir {
  path: string;
  /** Default 0o755. */
  mode?: number;
  uid?: number;
  gid?: number;
}
export interface LayerSymlink {
  path: string;
  target: string;
}
export interface Layer {
  files?: LayerFile[];
  dirs?: LayerDir[];
  symlinks?: LayerSymlink[];
}

/** The runtime part of an OCI image config (the fields Berth's images use). */
export interface ImageRuntimeConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  User?: string;
  Env?: string[];
  WorkingDir?: string;
  Labels?: Record<string, string>;
  ExposedPorts?: Record<string, Record<string, never>>;
}

export interface ImageSpec {
  /** Full reference: berth.local/live/pause:3.10 */
  name: string;
  layers: Layer[];
  config: ImageRuntimeConfig;
}

export interface Blob {
  digest: string;
  size: number;
  bytes: Buffer;
}

export interface BuiltImage {
  name: string;
  /** The manifest's digest: what `ctr images ls` and a registry show for the image. */
  digest: string;
  config: Blob;
  manifest: Blob;
  layers: (Blob & { diffID: string; uncompressedSize: number })[];
  /** The compressed size of everything: config, manifest and layers. */
  size: number;
  /** The OCI image-layout archive (also with Docker's manifest.json). */
  archive: Buffer;
}

const EPOCH = new Date(0);
const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
};

const OCI_LAYOUT = Buffer.from('{"imageLayoutVersion":"1.0.0"}');

const sha256 = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const blob = (bytes: Buffer): Blob => ({ digest: sha256(bytes), size: bytes.length, bytes });
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** A tar of the given entries, in the given order, with every header field fixed. */
export async function tarOf(entries: { header: Headers; content?: Buffer }[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    p.on("data", (c: unknown) => chunks.push(c as Buffer));
    p.on("end", () => resolve(Buffer.concat(chunks)));
    p.on("error", reject);
  });
  for (const { header, content } of entries) {
    await new Promise<void>((resolve, reject) => p.entry({ uname: "", gname: "", mtime: EPOCH, uid: 0, gid: 0, ...header }, content ?? Buffer.alloc(0), (e) => (e ? reject(e) : resolve())));
  }
  p.finalize();
  return done;
}

function relative(path: string): string {
  if (!path.startsWith("/") || path.includes("..") || path.endsWith("/")) throw new Error(`image path ${JSON.stringify(path)}: must be absolute, without .. or a trailing /`);
  return path.slice(1);
}

/** A layer's entries, parents first and then sorted, so that its bytes depend on its contents only. */
async function layerTar(layer: Layer): Promise<Buffer> {
  const entries = new Map<string, { header: Headers; content?: Buffer }>();
  const addParents = (path: string) => {
    const parts = path.split("/").slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (!entries.has(dir)) entries.set(dir, { header: { name: `${dir}/`, type: "directory", mode: 0o755 } });
    }
  };
  for (const d of layer.dirs ?? []) {
    const path = relative(d.path);
    addParents(path);
    entries.set(path, { header: { name: `${path}/`, type: "directory", mode: d.mode ?? 0o755, uid: d.uid ?? 0, gid: d.gid ?? 0 } });
  }
  for (const f of layer.files ?? []) {
    const path = relative(f.path);
    addParents(path);
    const content = Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content);
    entries.set(path, { header: { name: path, type: "file", size: content.length, mode: f.mode ?? 0o644, uid: f.uid ?? 0, gid: f.gid ?? 0 }, content });
  }
  for (const s of layer.symlinks ?? []) {
    const path = relative(s.path);
    addParents(path);
    entries.set(path, { header: { name: path, type: "symlink", linkname: s.target, mode: 0o777 } });
  }
  return tarOf([...entries.keys()].sort().map((k) => entries.get(k)!));
}

/** Builds the image: layers, config, manifest, and the archive holding them. */
export async function buildImage(spec: ImageSpec): Promise<BuiltImage> {
  const tag = spec.name.slice(spec.name.lastIndexOf(":") + 1);
  if (!/^[\w.-]+(\/[\w.-]+)*:[\w][\w.-]{0,127}$/.test(spec.name) || spec.name.lastIndexOf(":") < spec.name.lastIndexOf("/")) {
    throw new Error(`image name ${JSON.stringify(spec.name)}: expected host/path:tag`);
  }
  const layers = await Promise.all(
    spec.layers.map(async (l) => {
      const tar = await layerTar(l);
      // level 9 and no file name or mtime in the gzip header: deterministic for a given zlib.
      return { ...blob(gzipSync(tar, { level: 9 })), diffID: sha256(tar), uncompressedSize: tar.length };
    }),
  );
  const config = blob(
    json({
      created: EPOCH.toISOString(),
      architecture: "amd64",
      os: "linux",
      config: spec.config,
      rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffID) },
      history: layers.map(() => ({ created: EPOCH.toISOString(), created_by: "berth image/oci.ts" })),
    }),
  );
  const manifest = blob(
    json({
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, digest: config.digest, size: config.size },
      layers: layers.map((l) => ({ mediaType: MEDIA.layer, digest: l.digest, size: l.size })),
    }),
  );
  const index = json({
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [
      {
        mediaType: MEDIA.manifest,
        digest: manifest.digest,
        size: manifest.size,
        annotations: { "io.containerd.image.name": spec.name, "org.opencontainers.image.ref.name": tag },
        platform: { architecture: "amd64", os: "linux" },
      },
    ],
  });
  const path = (b: Blob) => `blobs/sha256/${b.digest.slice("sha256:".length)}`;
  const dockerManifest = json([{ Config: path(config), RepoTags: [spec.name], Layers: layers.map(path) }]);
  const blobs = [config, manifest, ...layers].filter((b, i, all) => all.findIndex((o) => o.digest === b.digest) === i);
  const archive = await tarOf([
    { header: { name: "blobs/", type: "directory", mode: 0o755 } },
    { header: { name: "blobs/sha256/", type: "directory", mode: 0o755 } },
    ...blobs.map((b) => ({ header: { name: path(b), type: "file" as const, size: b.size, mode: 0o644 }, content: b.bytes })),
    { header: { name: "index.json", type: "file", size: index.length, mode: 0o644 }, content: index },
    { header: { name: "manifest.json", type: "file", size: dockerManifest.length, mode: 0o644 }, content: dockerManifest },
    { header: { name: "oci-layout", type: "file", size: OCI_LAYOUT.length, mode: 0o644 }, content: OCI_LAYOUT },
  ]);
  return { name: spec.name, digest: manifest.digest, config, manifest, layers, size: blobs.reduce((n, b) => n + b.size, 0), archive };
}

/** /etc/passwd and /etc/group for images with no base: the names a non-root runtime user needs. */
export function accountFiles(users: { name: string; uid: number; gid: number; home: string }[]): LayerFile[] {
  const passwd = ["root:x:0:0:root:/root:/sbin/nologin", ...users.map((u) => `${u.name}:x:${u.uid}:${u.gid}:${u.name}:${u.home}:/sbin/nologin`)];
  const group = ["root:x:0:", ...users.map((u) => `${u.name}:x:${u.gid}:`)];
  return [
    { path: "/etc/passwd", content: `${passwd.join("\n")}\n` },
    { path: "/etc/group", content: `${group.join("\n")}\n` },
  ];
}

/**
 * Unpacks the image's layers, in order, into `dir` (which must be empty or absent): the root
 * filesystem a container of the image would see. Berth's own images have no whiteouts, so none
 * are handled. Owners are kept when running as root.
 */
export async function unpackImage(image: BuiltImage, dir: string): Promise<void> {
  const asRoot = process.getuid?.() === 0;
  mkdirSync(dir, { recursive: true });
  for (const layer of image.layers) {
    await readTar(gunzipSync(layer.bytes), (h, content) => {
      const path = join(dir, h.name);
      if (!path.startsWith(`${dir}/`)) throw new Error(`layer entry ${h.name} escapes the root`);
      if (h.type === "directory") mkdirSync(path, { recursive: true, mode: h.mode });
      else if (h.type === "symlink") symlinkSync(h.linkname!, path);
      else writeFileSync(path, content, { mode: h.mode });
      if (h.type !== "symlink") chmodSync(path, h.mode ?? 0o644);
      if (asRoot) lchownSync(path, h.uid ?? 0, h.gid ?? 0);
    });
  }
}
