// The upstream CRDs pinned in test/upstream-crds.yaml, for every suite and script that needs them.
//
// Where they come from, in order:
//   1. BERTH_UPSTREAM_CRDS=<folder>, laid out as <folder>/<file name> (CI points it at its offline
//      copies, since build machines have no internet);
//   2. .cache/upstream-crds/, filled by downloading each pinned file once from GitHub.
// Either way every file's sha256 is checked against the pin: a mismatch, or a file missing from
// BERTH_UPSTREAM_CRDS, is an error naming the file. Only when neither source can be had (no
// folder given, and the download fails) does the answer say "unavailable", with the reason, so
// that the tests that need the CRDs skip and say why while everything else still runs.
//
// As a command it prints the folder that holds them (for shell scripts), or exits 1 with the reason:
//   npx tsx test/support/upstream-crds.ts
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { z } from "zod";
import { DownloadFailed, fetchPinned, sha256Hex } from "../../image/pinned.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const PINS_FILE = join(REPO, "test/upstream-crds.yaml");
const DEFAULT_CACHE = join(REPO, ".cache/upstream-crds");
const GITHUB_RAW = "https://raw.githubusercontent.com";

const sha256Pin = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lowercase hex");
const pinsSchema = z.strictObject({
  sources: z
    .array(
      z.strictObject({
        repository: z.string().regex(/^[\w.-]+\/[\w.-]+$/, "owner/name"),
        commit: z.string().regex(/^[0-9a-f]{40}$/, "a full commit hash"),
        folder: z.string().regex(/^[a-z0-9-]+$/),
        files: z.array(z.strictObject({ kind: z.string().min(1), path: z.string().min(1), sha256: sha256Pin })).min(1),
      }),
    )
    .min(1),
});

/** One pinned upstream file. */
export interface PinnedCRD {
  kind: string;
  repository: string;
  commit: string;
  /** Path in the upstream repository. */
  path: string;
  sha256: string;
  /** Where it lives in a CRD folder: <folder>/<file name>. */
  file: string;
}

export function pinnedCRDs(pinsFile = PINS_FILE): PinnedCRD[] {
  const parsed = pinsSchema.safeParse(parse(readFileSync(pinsFile, "utf8")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${pinsFile}: ${z.core.toDotPath(issue.path)}: ${issue.message}`);
  }
  return parsed.data.sources.flatMap((s) =>
    s.files.map((f) => ({ kind: f.kind, repository: s.repository, commit: s.commit, path: f.path, sha256: f.sha256, file: `${s.folder}/${f.path.split("/").pop()}` })),
  );
}

export type UpstreamCRDs =
  | {
      available: true;
      /** Says where the files came from, for a log line. */
      source: string;
      /** The folder holding every pinned file as <folder>/<file name>. */
      dir: string;
      /** kind -> absolute path of its CRD file. */
      byKind: Record<string, string>;
      paths: string[];
    }
  | { available: false; reason: string };

export interface UpstreamCRDOptions {
  /** Default: process.env.BERTH_UPSTREAM_CRDS. */
  folder?: string | undefined;
  cacheDir?: string;
  /** Default: https://raw.githubusercontent.com (a test serves its own). */
  baseURL?: string;
  pinsFile?: string;
}

function mismatch(where: string, pin: PinnedCRD, actual: string): Error {
  return new Error(`upstream CRD ${where}: sha256 ${actual}, but ${pin.repository}@${pin.commit.slice(0, 12)} ${pin.path} is pinned at ${pin.sha256} (test/upstream-crds.yaml)`);
}

function found(dir: string, pins: PinnedCRD[], source: string): UpstreamCRDs {
  const paths = pins.map((p) => join(dir, p.file));
  return { available: true, source, dir, byKind: Object.fromEntries(pins.map((p, i) => [p.kind, paths[i]!])), paths };
}

export async function upstreamCRDs(options: UpstreamCRDOptions = {}): Promise<UpstreamCRDs> {
  const pins = pinnedCRDs(options.pinsFile);
  const folder = "folder" in options ? options.folder : process.env.BERTH_UPSTREAM_CRDS;

  if (folder) {
    const dir = resolve(folder);
    for (const pin of pins) {
      const path = join(dir, pin.file);
      if (!existsSync(path)) throw new Error(`upstream CRD ${path}: missing from BERTH_UPSTREAM_CRDS=${folder} (${pin.kind}, ${pin.repository} ${pin.path})`);
      const actual = sha256Hex(readFileSync(path));
      if (actual !== pin.sha256) throw mismatch(path, pin, actual);
    }
    return found(dir, pins, `BERTH_UPSTREAM_CRDS=${folder} (${pins.length} files, sha256 checked)`);
  }

  const cache = options.cacheDir ?? DEFAULT_CACHE;
  const base = options.baseURL ?? GITHUB_RAW;
  const results = await Promise.all(
    pins.map(async (pin) => {
      try {
        const url = `${base}/${pin.repository}/${pin.commit}/${pin.path}`;
        const describe = `${pin.repository}@${pin.commit.slice(0, 12)} ${pin.path} (test/upstream-crds.yaml)`;
        return await fetchPinned({ url, sha256: pin.sha256, path: join(cache, pin.file), describe });
      } catch (e) {
        if (e instanceof DownloadFailed) return e.message;
        throw new Error(`upstream CRD ${(e as Error).message}`);
      }
    }),
  );
  const downloaded = results.filter((r) => typeof r !== "string" && r.downloaded).length;
  const failure = results.find((r) => typeof r === "string");
  if (failure) return { available: false, reason: `upstream CRDs unavailable: BERTH_UPSTREAM_CRDS is not set and ${failure}` };
  return found(cache, pins, `${cache} (${downloaded} of ${pins.length} files downloaded now, sha256 checked)`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const crds = await upstreamCRDs();
  if (!crds.available) {
    console.error(crds.reason);
    process.exit(1);
  }
  console.error(`upstream CRDs: ${crds.source}`);
  console.log(crds.dir);
}
