// The upstream CRDs pinned in test/upstream-crds.yaml, for every suite and script that needs them.
//
// Where they come from, in order:
//   1. BERTH_UPSTREAM_CRDS=<folder>, laid out as <folder>/<file name> (CI points it at its offline
//      copies, since build machines have no internet);
//   2. .cache/upstream-crds/, filled by downloading each pinned file once: from GitHub at a
//      commit, or out of a Go module's zip as the Go module proxy serves it (the first http(s)
//      entry of GOPROXY, else proxy.golang.org), a release's files exactly as its module holds them.
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
import { unzipSync } from "fflate";
import { parse } from "yaml";
import { z } from "zod";
import { DownloadFailed, fetchPinned, sha256Hex } from "../../image/pinned.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const PINS_FILE = join(REPO, "test/upstream-crds.yaml");
const DEFAULT_CACHE = join(REPO, ".cache/upstream-crds");
const GITHUB_RAW = "https://raw.githubusercontent.com";
const GO_PROXY = "https://proxy.golang.org";

const sha256Pin = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lowercase hex");
const pinnedFiles = z.array(z.strictObject({ kind: z.string().min(1), path: z.string().min(1), sha256: sha256Pin })).min(1);
const folder = z.string().regex(/^[a-z0-9.-]+$/);
const githubSource = z.strictObject({
  repository: z.string().regex(/^[\w.-]+\/[\w.-]+$/, "owner/name"),
  commit: z.string().regex(/^[0-9a-f]{40}$/, "a full commit hash"),
  folder,
  files: pinnedFiles,
});
const moduleSource = z.strictObject({
  module: z.string().regex(/^[a-z0-9.-]+(\/[\w.~-]+)+$/, "a Go module path"),
  version: z.string().regex(/^v\d+\.\d+\.\d+$/, "a release version such as v1.0.1"),
  folder,
  files: pinnedFiles,
});
const pinsSchema = z.strictObject({ sources: z.array(z.record(z.string(), z.unknown())).min(1) });

/** Where a pinned file is published: a repository at a commit, or a Go module at a version. */
export type Origin = { repository: string; commit: string } | { module: string; version: string };

/** One pinned upstream file. */
export interface PinnedCRD {
  kind: string;
  origin: Origin;
  /** Path in the upstream repository or module. */
  path: string;
  sha256: string;
  /** Where it lives in a CRD folder: <folder>/<file name>. */
  file: string;
}

/** The pin in a message: "owner/name@0123456789ab path" or "module@version path". */
const describePin = (p: PinnedCRD) => `${"module" in p.origin ? `${p.origin.module}@${p.origin.version}` : `${p.origin.repository}@${p.origin.commit.slice(0, 12)}`} ${p.path}`;

export function pinnedCRDs(pinsFile = PINS_FILE): PinnedCRD[] {
  const refuse = (issue: z.core.$ZodIssue, prefix: PropertyKey[] = []) => new Error(`${pinsFile}: ${z.core.toDotPath([...prefix, ...issue.path])}: ${issue.message}`);
  const parsed = pinsSchema.safeParse(parse(readFileSync(pinsFile, "utf8")));
  if (!parsed.success) throw refuse(parsed.error.issues[0]!);
  return parsed.data.sources.flatMap((raw, i) => {
    // A source is told apart by its key before it is checked, so that an error names the field.
    const checked = ("module" in raw ? moduleSource : githubSource).safeParse(raw);
    if (!checked.success) throw refuse(checked.error.issues[0]!, ["sources", i]);
    const s = checked.data;
    const origin: Origin = "module" in s ? { module: s.module, version: s.version } : { repository: s.repository, commit: s.commit };
    return s.files.map((f) => ({ kind: f.kind, origin, path: f.path, sha256: f.sha256, file: `${s.folder}/${f.path.split("/").pop()}` }));
  });
}

/** The Go module proxy to download from: GOPROXY's first http(s) entry, as the go command would use it. */
export function goProxy(env: Record<string, string | undefined> = process.env): string {
  const first = (env.GOPROXY ?? "").split(/[,|]/).find((p) => /^https?:\/\//.test(p));
  return (first ?? GO_PROXY).replace(/\/+$/, "");
}

/** A module path as the proxy protocol spells it: each capital letter as "!" and its lower case. */
const escapeModulePath = (module: string) => module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`);

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
  /** Default: goProxy() (a test serves its own). */
  goProxyURL?: string;
  pinsFile?: string;
}

function mismatch(where: string, pin: PinnedCRD, actual: string): Error {
  return new Error(`upstream CRD ${where}: sha256 ${actual}, but ${describePin(pin)} is pinned at ${pin.sha256} (test/upstream-crds.yaml)`);
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
      if (!existsSync(path)) throw new Error(`upstream CRD ${path}: missing from BERTH_UPSTREAM_CRDS=${folder} (${pin.kind}, ${describePin(pin)})`);
      const actual = sha256Hex(readFileSync(path));
      if (actual !== pin.sha256) throw mismatch(path, pin, actual);
    }
    return found(dir, pins, `BERTH_UPSTREAM_CRDS=${folder} (${pins.length} files, sha256 checked)`);
  }

  const cache = options.cacheDir ?? DEFAULT_CACHE;
  const base = options.baseURL ?? GITHUB_RAW;
  const proxy = options.goProxyURL ?? goProxy();
  const results = await Promise.all(
    pins.map(async (pin) => {
      try {
        const describe = `${describePin(pin)} (test/upstream-crds.yaml)`;
        const path = join(cache, pin.file);
        if ("repository" in pin.origin) return await fetchPinned({ url: `${base}/${pin.origin.repository}/${pin.origin.commit}/${pin.path}`, sha256: pin.sha256, path, describe });
        // A module zip holds every file under <module>@<version>/.
        const { module, version } = pin.origin;
        const inZip = `${module}@${version}/${pin.path}`;
        const pick = (zip: Uint8Array) => {
          const file = unzipSync(zip, { filter: (f) => f.name === inZip })[inZip];
          if (file === undefined) throw new Error(`${module}@${version} has no ${pin.path}`);
          return file;
        };
        return await fetchPinned({ url: `${proxy}/${escapeModulePath(module)}/@v/${version}.zip`, sha256: pin.sha256, path, describe, pick });
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
