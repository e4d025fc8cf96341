// Pinned upstream files: downloaded once into a cache, and trusted only if their sha256 is the
// pinned one. The function image's sources (image/sources.yaml) and the test suites'
// upstream CRDs (test/upstream-crds.yaml) both come through here.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

const DOWNLOAD_TIMEOUT_MS = 120_000;

export const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The download itself failed (no network, HTTP error): callers may degrade, unlike a mismatch. */
export class DownloadFailed extends Error {}

/** A network failure's innermost cause ("getaddrinfo EAI_AGAIN raw.githubusercontent.com"). */
function causeOf(e: unknown): string {
  let err = e as { message?: string; cause?: unknown };
  while (err?.cause) err = err.cause as typeof err;
  return err?.message ?? String(e);
}

export interface PinnedFile {
  url: string;
  sha256: string;
  /** Where the verified file is kept. */
  path: string;
  /** Names the pin in a mismatch error: "libc6 2.36-9+deb12u14 (image/sources.yaml)". */
  describe: string;
  /** The pinned file out of what the URL serves, when that is an archive holding it. */
  pick?: (downloaded: Uint8Array) => Uint8Array;
}

/**
 * The pinned file's path, downloading it first unless the cache already holds the pinned bytes.
 * A sha256 mismatch is an Error naming the file and the pin; a failed download is DownloadFailed.
 */
export async function fetchPinned(pin: PinnedFile): Promise<{ path: string; downloaded: boolean }> {
  if (existsSync(pin.path) && sha256Hex(readFileSync(pin.path)) === pin.sha256) return { path: pin.path, downloaded: false };
  let bytes: Uint8Array;
  try {
    const res = await fetch(pin.url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    bytes = new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    throw new DownloadFailed(`cannot download ${pin.url} (${causeOf(e)})`);
  }
  if (pin.pick) bytes = pin.pick(bytes);
  const actual = sha256Hex(bytes);
  if (actual !== pin.sha256) throw new Error(`downloaded from ${pin.url}: sha256 ${actual}, but ${pin.describe} is pinned at ${pin.sha256}`);
  // Written beside and renamed, so a process running in parallel never reads half a file.
  mkdirSync(dirname(pin.path), { recursive: true });
  const partial = `${pin.path}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, pin.path);
  return { path: pin.path, downloaded: true };
}
