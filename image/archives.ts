// Reading files out of the packages the function image is assembled from: a .deb (an ar archive
// holding data.tar.xz) and an npm tarball (a gzipped tar). Only the named entries are kept.
import { spawnSync } from "node:child_process";
import { gunzipSync } from "node:zlib";
import { extract, type Header } from "tar-stream";

/** A regular file or a symlink taken from a package, at its absolute path in the package. */
export type PackageEntry = { path: string; mode: number } & ({ type: "file"; content: Buffer } | { type: "symlink"; target: string });

/** "./usr/lib/x" and "usr/lib/x" are both "/usr/lib/x". */
const absolute = (name: string) => `/${name.replace(/^\.?\/+/, "").replace(/\/+$/, "")}`;

/** Every entry of a tar, in order, with its content (empty for directories and links). */
export async function readTar(tar: Buffer, onEntry: (header: Header, content: Buffer) => void): Promise<void> {
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: unknown) => chunks.push(c as Buffer));
      stream.on("end", () => {
        try {
          onEntry(header, Buffer.concat(chunks));
        } catch (e) {
          return reject(e);
        }
        next();
      });
      stream.resume();
    });
    ex.on("finish", resolve);
    ex.on("error", reject);
  });
  ex.end(tar);
  await done;
}

/** The entries of a tar whose absolute path is in `wanted`; an error names any that are missing. */
export async function tarEntries(tar: Buffer, wanted: Iterable<string>, what: string): Promise<Map<string, PackageEntry>> {
  const want = new Set(wanted);
  const found = new Map<string, PackageEntry>();
  await readTar(tar, (header, content) => {
    const path = absolute(header.name);
    if (!want.has(path)) return;
    const mode = header.mode ?? 0o644;
    if (header.type === "file") found.set(path, { path, mode, type: "file", content });
    else if (header.type === "symlink") found.set(path, { path, mode, type: "symlink", target: header.linkname! });
    else throw new Error(`${what}: ${path} is a ${header.type}, not a file or symlink`);
  });
  const missing = [...want].filter((p) => !found.has(p));
  if (missing.length > 0) throw new Error(`${what} has no ${missing.join(", ")}`);
  return found;
}

/** The members of an ar archive (the .deb container): name -> bytes. */
export function arMembers(ar: Buffer, what: string): Map<string, Buffer> {
  if (ar.subarray(0, 8).toString("latin1") !== "!<arch>\n") throw new Error(`${what} is not an ar archive`);
  const members = new Map<string, Buffer>();
  let at = 8;
  while (at + 60 <= ar.length) {
    const header = ar.subarray(at, at + 60).toString("latin1");
    const name = header.slice(0, 16).trim().replace(/\/$/, "");
    const size = Number(header.slice(48, 58).trim());
    if (!Number.isInteger(size) || header.slice(58, 60) !== "`\n") throw new Error(`${what}: malformed ar header at byte ${at}`);
    members.set(name, ar.subarray(at + 60, at + 60 + size));
    at += 60 + size + (size % 2); // members are 2-byte aligned
  }
  return members;
}

/** The data tar of a .deb, uncompressed (xz by the system's xz, gzip by zlib). */
export function debDataTar(deb: Buffer, what: string): Buffer {
  const members = arMembers(deb, what);
  const gz = members.get("data.tar.gz");
  if (gz) return gunzipSync(gz);
  const xz = members.get("data.tar.xz");
  if (!xz) throw new Error(`${what} has no data.tar.xz or data.tar.gz (members: ${[...members.keys()].join(", ")})`);
  const r = spawnSync("xz", ["-dc"], { input: xz, maxBuffer: 1 << 30 });
  if (r.error) throw new Error(`${what}: reading data.tar.xz needs the xz program (${r.error.message})`);
  if (r.status !== 0) throw new Error(`${what}: xz -dc failed: ${r.stderr.toString().trim()}`);
  return r.stdout;
}
