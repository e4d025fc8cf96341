// What Berth's evidence program costs, measured side by side in one run (npm run bench:evidence):
//  1. the collector (`evidence collect`, the esbuild bundle the image ships, with the image's Node
//     flags) on a git checkout made here: spawn until /healthz answers 200 (the baseline copied),
//     then, once the tree has been changed as an agent would, SIGTERM until GET /evidence answers
//     200 (the patch made); its VmRSS once ready and its peak (VmHWM) at the end. The floor of the
//     patch is the git CLI making the same patch on the same tree in the checkout itself, with a
//     copy of its index (`git add -A`, `git diff --cached --binary --full-index --no-renames
//     HEAD`): the cheapest way git makes it; the floor of the baseline, `node -e 0` with the same
//     flags plus git copying the same commit alone (`pack-objects --revs --window=0 | index-pack
//     --strict`);
//  2. the export (`evidence export`), where CNCF distribution has been built (registryBinary):
//     spawn until exit 0, pushing to that registry on loopback over TLS, and its peak RSS; against
//     the same `node -e 0` start, with the export's time split by its own log lines.
// Options: --files N (default 2000), --folders N (100), --file-kib N (2), --changes N (100
// modified, N/2 added in a new folder, N/5 deleted), --runs N (5), --json FILE, --skip-build.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { EVIDENCE } from "../image/build.js";
import { shippedNodeFlags } from "../image/shipped.js";
import { collectedEvidenceSchema, type CollectedEvidence } from "../functions/evidence/collected.js";
import { evidenceLoopback, git, type Proc, registryBinary, startProcess } from "../test/support/evidence-loopback.js";
import { freePort } from "../test/support/function-process.js";
import { median } from "./stats.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const BUNDLE = EVIDENCE.bundlePath;
// With the image's own Node flags (package/evidence/Dockerfile's ENTRYPOINT), as it runs in a pod.
const NODE_FLAGS = shippedNodeFlags(EVIDENCE.dockerfile);
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined;

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "2000" },
    folders: { type: "string", default: "100" },
    "file-kib": { type: "string", default: "2" },
    changes: { type: "string", default: "100" },
    runs: { type: "string", default: "5" },
    json: { type: "string" },
    "skip-build": { type: "boolean", default: false },
  },
});
const files = Number(values.files);
const folders = Math.min(Number(values.folders), files);
const fileBytes = Number(values["file-kib"]) * 1024;
const modified = Number(values.changes);
const added = Math.ceil(modified / 2);
const deleted = Math.ceil(modified / 5);
const runs = Number(values.runs);
if (![files, folders, fileBytes, modified, runs].every((n) => Number.isInteger(n) && n >= 1) || modified + deleted > files) {
  throw new Error("--files, --folders, --file-kib, --changes and --runs are whole numbers of at least 1, and --changes plus its fifth at most --files");
}

function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function bundle(): Promise<void> {
  await build({
    entryPoints: [join(ROOT, "functions/evidence/main.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: BUNDLE,
    logLevel: "warning",
    // Some dependencies still call require(); ESM output needs one.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
}

/** Text that reads like source: lines of about 60 bytes, different in every file. */
function text(seed: number, bytes: number): string {
  let x = Math.imul(seed, 2654435761) >>> 0 || 1;
  const word = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x.toString(36);
  };
  const lines: string[] = [];
  for (let size = 0, n = 0; size < bytes; n++) {
    const line = `  const v${n} = compute("${word()}", ${word()}, "${word()}");\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join("");
}

const fileName = (i: number) => `dir-${String(i % folders).padStart(3, "0")}/file-${String(i).padStart(5, "0")}.txt`;
// The changed files, spread over the tree: modified first, then deleted.
const stride = Math.floor(files / (modified + deleted));
const modifiedFiles = Array.from({ length: modified }, (_, k) => fileName(k * stride));
const deletedFiles = Array.from({ length: deleted }, (_, k) => fileName((modified + k) * stride));
const addedFiles = Array.from({ length: added }, (_, k) => `new-feature/part-${String(k).padStart(4, "0")}.txt`);

interface Collector {
  readonly proc: Proc;
  readonly url: string;
  readonly readyMs: number;
}

async function main(): Promise<void> {
  if (!values["skip-build"]) await bundle();
  const dirs: string[] = [];
  const tempDir = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const cleanups: (() => Promise<void>)[] = [];
  const started = new Set<Proc>();
  const start = (file: string, args: string[], env: NodeJS.ProcessEnv): Proc => {
    const proc = startProcess(file, args, env);
    started.add(proc);
    return proc;
  };
  const loopback = evidenceLoopback(tempDir, cleanups);

  // The workspace as the checkout leaves it: workspace/src checked out detached at one commit;
  // the runtime's verification result beside it, the collector's own volume elsewhere.
  const root = tempDir("berth-evidence-bench-");
  const workDir = join(root, "workspace");
  const src = join(workDir, "src");
  const collectorDir = join(root, "collector");
  const verificationFile = join(workDir, ".berth", "verification.json");
  try {
    for (let d = 0; d < folders; d++) mkdirSync(join(src, fileName(d).split("/")[0]!), { recursive: true });
    mkdirSync(join(workDir, ".berth"));
    mkdirSync(collectorDir);
    for (let i = 0; i < files; i++) writeFileSync(join(src, fileName(i)), text(i + 1, fileBytes));
    git(src, "init", "-q");
    git(src, "add", "-A");
    git(src, "commit", "-q", "-m", "base");
    const commit = git(src, "rev-parse", "HEAD").trim();
    git(src, "checkout", "-q", "--detach", commit);
    const sh = (file: string, args: string[], env: NodeJS.ProcessEnv = {}, input?: string | Buffer): Buffer =>
      execFileSync(file, args, { cwd: src, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"], maxBuffer: 1 << 30, env: { ...process.env, ...env }, ...(input === undefined ? {} : { input }) });

    /** What the agent does in its runtime: the same change every run, on the clean checkout. */
    const agentWorks = (): void => {
      for (const [k, path] of modifiedFiles.entries()) {
        const lines = readFileSync(join(src, path), "utf8").split("\n");
        lines[Math.floor(lines.length / 2)] = `  const changed${k} = compute("by the agent", ${k});`;
        writeFileSync(join(src, path), `${lines.join("\n")}export const added${k} = ${k};\n`);
      }
      for (const path of deletedFiles) rmSync(join(src, path));
      mkdirSync(join(src, "new-feature"));
      for (const [k, path] of addedFiles.entries()) writeFileSync(join(src, path), text(files + k + 1, fileBytes));
      writeFileSync(verificationFile, JSON.stringify({ exitCode: 0, output: "42 passed" }));
    };

    /** `evidence collect` on the checkout, with a baseline folder of its own: it copies from .git. */
    const startCollector = async (baselineDir: string): Promise<Collector> => {
      mkdirSync(baselineDir);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const t = performance.now();
      const proc = start(process.execPath, [...NODE_FLAGS, BUNDLE, "collect"], {
        PATH: process.env.PATH,
        BERTH_CHECKOUT_DIR: src,
        BERTH_EVIDENCE_PORT: String(port),
        BERTH_VERIFICATION_RESULT: verificationFile,
        BERTH_BASELINE_DIR: baselineDir,
      });
      for (;;) {
        if (proc.child.exitCode !== null) throw new Error(`the collector exited ${proc.child.exitCode}:\n${proc.output()}`);
        const ok = await fetch(`${url}/healthz`).then(
          async (r) => (await r.text(), r.status === 200),
          () => false,
        );
        if (ok) return { proc, url, readyMs: performance.now() - t };
        await sleep(2);
      }
    };

    /** SIGTERM (the runtime has exited), then GET /evidence until it answers 200. */
    const evidenceOf = async (collector: Collector): Promise<{ evidence: CollectedEvidence; ms: number }> => {
      const t = performance.now();
      collector.proc.child.kill("SIGTERM");
      for (;;) {
        const res = await fetch(`${collector.url}/evidence`);
        const body = await res.text();
        if (res.status === 200) return { evidence: collectedEvidenceSchema.parse(JSON.parse(body)), ms: performance.now() - t };
        if (res.status !== 503) throw new Error(`GET /evidence answered ${res.status}: ${body}\n${collector.proc.output()}`);
        await sleep(2);
      }
    };

    const done = async (collector: Collector): Promise<void> => {
      const res = await fetch(`${collector.url}/done`, { method: "POST" });
      await res.text();
      const code = await collector.proc.exited;
      if (res.status !== 200 || code !== 0) throw new Error(`POST /done answered ${res.status}, the collector exited ${code}:\n${collector.proc.output()}`);
    };

    /**
     * A Node process with the image's flags, run to its end: its time from spawn to exit and, when
     * `peak`, its peak RSS (under /usr/bin/time -v if there is one, which then times it too).
     */
    const runToExit = async (args: string[], env: NodeJS.ProcessEnv, peak: boolean): Promise<{ ms: number; wallStart: number; peakMb: number; code: number | null; output: string }> => {
      const node = [process.execPath, ...NODE_FLAGS, ...args];
      const wallStart = performance.timeOrigin + performance.now();
      const t = performance.now();
      const proc = peak && TIME ? start(TIME, ["-v", ...node], env) : start(node[0]!, node.slice(1), env);
      let sampled = 0;
      const sampler =
        peak && !TIME
          ? setInterval(() => {
              try {
                sampled = Math.max(sampled, memoryMb(proc.child.pid!).peak);
              } catch {
                // Gone already.
              }
            }, 10)
          : undefined;
      const code = await proc.exited;
      const ms = performance.now() - t;
      clearInterval(sampler);
      const peakMb = !peak ? NaN : TIME ? Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(proc.output())?.[1] ?? NaN) / 1024 : sampled;
      return { ms, wallStart, peakMb, code, output: proc.output() };
    };
    const nodeStart = ["-e", "0"];

    // ---- 1. the collector, and git making the same patch -----------------------------------
    const ready: number[] = [];
    const startFloor: number[] = [];
    const patchMs: number[] = [];
    const gitMs: number[] = [];
    const idleRss: number[] = [];
    const peakRss: number[] = [];
    let patchBytes = 0;
    let gitPatchBytes = 0;
    let comparison = "the same bytes";
    for (let i = 0; i < runs; i++) {
      sh("git", ["reset", "-q", "--hard"]);
      sh("git", ["clean", "-fdq"]);
      const collector = await startCollector(join(collectorDir, `baseline-${i}`));
      ready.push(collector.readyMs);
      await sleep(200);
      idleRss.push(memoryMb(collector.proc.child.pid!).rss);
      agentWorks();
      const { evidence, ms } = await evidenceOf(collector);
      patchMs.push(ms);
      peakRss.push(memoryMb(collector.proc.child.pid!).peak);
      await done(collector);
      const counted = evidence.files;
      if (evidence.patch === null || evidence.leftOut.length > 0 || counted.modified !== modified || counted.added !== added || counted.deleted !== deleted) {
        throw new Error(`the collector saw ${JSON.stringify(counted)}, left out ${JSON.stringify(evidence.leftOut)}${evidence.notCollected ? ` (${evidence.notCollected})` : ""}; the change was ${modified} modified, ${added} added, ${deleted} deleted`);
      }

      const index = join(collectorDir, `git-floor-${i}.index`);
      copyFileSync(join(src, ".git/index"), index);
      const t = performance.now();
      sh("git", ["add", "-A"], { GIT_INDEX_FILE: index });
      const gitPatch = sh("git", ["diff", "--cached", "--binary", "--full-index", "--no-renames", "HEAD"], { GIT_INDEX_FILE: index });
      gitMs.push(performance.now() - t);

      const floor = await runToExit(nodeStart, { PATH: process.env.PATH }, false);
      if (floor.code !== 0) throw new Error(`node -e 0 exited ${floor.code}:\n${floor.output}`);
      // git's own copy of the same commit, as the collector makes it: the floor of the baseline
      // is this and a Node start.
      const copyDir = join(collectorDir, `git-copy-${i}.git`);
      const c = performance.now();
      sh("git", ["init", "-q", "--bare", "--template=", copyDir]);
      const tree = sh("git", ["rev-parse", "--show-object-format", "HEAD^{commit}", "HEAD^{tree}"]).toString().trim().split("\n")[2]!;
      const pack = sh("git", ["pack-objects", "--revs", "--window=0", "--quiet", "--stdout"], {}, `${tree}\n`);
      sh("git", ["--git-dir", copyDir, "index-pack", "--stdin", "--strict"], {}, pack);
      startFloor.push(floor.ms + performance.now() - c);
      const patch = Buffer.from(evidence.patch, "base64");
      patchBytes = patch.length;
      gitPatchBytes = gitPatch.length;
      if (!patch.equals(gitPatch)) comparison = "different bytes";
    }

    // ---- 2. the export, when there is a registry to push to ---------------------------------
    const registry = registryBinary();
    let exportFigures: Record<string, unknown> | { skipped: string };
    const exportRows: string[] = [];
    if (!registry) {
      const reason = "CNCF distribution is not built under ${BERTH_CACHE:-~/.cache/berth}/bin (npm run controlplane:build -- --node builds it)";
      exportFigures = { skipped: reason };
      exportRows.push(`export: skipped: ${reason}`);
    } else {
      const { host, caFile } = await loopback.startRegistry(registry);
      const exportMs: number[] = [];
      const floorMs: number[] = [];
      const exportPeak: number[] = [];
      const floorPeak: number[] = [];
      const toArtifact: number[] = [];
      const push: number[] = [];
      const toExit: number[] = [];
      let blobs = 0;
      for (let i = 0; i < runs; i++) {
        // A collector that has collected: the same tree, a baseline copied afresh from .git.
        const collector = await startCollector(join(collectorDir, `export-baseline-${i}`));
        await evidenceOf(collector);
        const port = Number(new URL(collector.url).port);
        // A fresh repository every run: the artifact is the same bytes each time, and a
        // registry that has a blob is not sent it again.
        const { env, terminationLog } = loopback.exportEnv({ dir: workDir, src, commit, port, collector: collector.proc }, `${host}/berth/evidence-${i}`, { SSL_CERT_FILE: caFile, BERTH_EVIDENCE_TAG: `run-${i}` });
        const run = await runToExit([BUNDLE, "export"], { PATH: process.env.PATH, ...env }, true);
        const collectorCode = await collector.proc.exited;
        const result = run.code === 0 ? loopback.reported(terminationLog) : undefined;
        if (run.code !== 0 || result?.state !== "Exported" || collectorCode !== 0) {
          throw new Error(`the export exited ${run.code} (${JSON.stringify(result)}), the collector ${collectorCode}:\n${run.output}\n${collector.proc.output()}`);
        }
        exportMs.push(run.ms);
        exportPeak.push(run.peakMb);
        // Where the time went, by the export's own log lines (pino's time: whole milliseconds).
        const logged = new Map<string, { time: number; blobs?: number }>();
        for (const line of run.output.split("\n")) {
          try {
            const entry = JSON.parse(line) as { msg?: string; time?: number; blobs?: number };
            if (entry.msg && entry.time) logged.set(entry.msg, { time: entry.time, ...(entry.blobs === undefined ? {} : { blobs: entry.blobs }) });
          } catch {
            // /usr/bin/time's report.
          }
        }
        const built = logged.get("artifact built");
        const exported = logged.get("exported");
        if (built && exported) {
          toArtifact.push(built.time - run.wallStart);
          push.push(exported.time - built.time);
          toExit.push(run.wallStart + run.ms - exported.time);
          blobs = built.blobs ?? 0;
        }

        const floor = await runToExit(nodeStart, { PATH: process.env.PATH }, true);
        if (floor.code !== 0) throw new Error(`node -e 0 exited ${floor.code}:\n${floor.output}`);
        floorMs.push(floor.ms);
        floorPeak.push(floor.peakMb);
      }
      const ratios = exportMs.map((ms, i) => ms / floorMs[i]!);
      exportFigures = {
        registry: "CNCF distribution on 127.0.0.1, TLS",
        peakRssFrom: TIME ? "/usr/bin/time -v" : "/proc/<pid>/status VmHWM every 10 ms",
        blobs,
        exportMs: median(exportMs),
        startFloorMs: median(floorMs),
        ratio: median(ratios),
        splitMs: { toArtifactBuilt: median(toArtifact), push: median(push), doneAndExit: median(toExit) },
        peakRssMb: { export: median(exportPeak), startFloor: median(floorPeak) },
      };
      const f = (x: number): string => x.toFixed(2);
      exportRows.push(`export (CNCF distribution on 127.0.0.1 over TLS; ${blobs} blobs and a manifest, a fresh repository each run${TIME ? "; under /usr/bin/time -v, both" : ""})`);
      exportRows.push(row("spawn → exit 0", `${f(median(exportMs))} ms`, `${f(median(floorMs))} ms`, `x${f(median(ratios))}`, "node -e 0, same flags"));
      exportRows.push(row("peak RSS", `${f(median(exportPeak))} MB`, `${f(median(floorPeak))} MB`, `x${f(median(exportPeak) / median(floorPeak))}`, TIME ? "max RSS by /usr/bin/time -v" : "VmHWM sampled every 10 ms"));
      exportRows.push(`  of which: spawn → artifact built ${f(median(toArtifact))} ms (start, loading the bundle, GET /evidence, hashing the blobs),`);
      exportRows.push(`            push ${f(median(push))} ms (TLS, HEAD + POST + PUT per blob, PUT the manifest), POST /done and exit ${f(median(toExit))} ms`);
    }

    const ratio = (a: number[], b: number[]): number => median(a.map((x, i) => x / b[i]!));
    const figures = {
      date: new Date().toISOString(),
      cores: availableParallelism(),
      node: process.version,
      nodeFlags: NODE_FLAGS,
      runs,
      repository: { files, folders, fileBytes, change: { modified, added, deleted } },
      collector: {
        baselineCopiedMs: median(ready),
        startFloorMs: median(startFloor),
        baselineCopiedRatio: ratio(ready, startFloor),
        patchMadeMs: median(patchMs),
        gitPatchMs: median(gitMs),
        patchRatio: ratio(patchMs, gitMs),
        patchBytes,
        gitPatchBytes,
        patchComparison: comparison,
        rssMb: { idle: median(idleRss), peak: median(peakRss) },
      },
      export: exportFigures,
    };
    const f = (x: number): string => x.toFixed(2);
    const kib = (files * fileBytes) / 1024;
    console.log(`Evidence program (bundle ${BUNDLE.replace(ROOT, "")}, node ${process.version} ${NODE_FLAGS.join(" ")}), ${availableParallelism()} cores, ${figures.date.slice(0, 10)}`);
    console.log(`repository: ${files} files of ${fileBytes / 1024} KiB in ${folders} folders (${f(kib / 1024)} MiB), one commit, detached; change: ${modified} modified, ${added} added, ${deleted} deleted; medians of ${runs} runs`);
    console.log(row("", "berth", "floor", "ratio", "floor is"));
    console.log(row("baseline copied (spawn → /healthz)", `${f(median(ready))} ms`, `${f(median(startFloor))} ms`, `x${f(ratio(ready, startFloor))}`, "node -e 0, same flags, + git's copy: pack-objects --revs --window=0 | index-pack --strict"));
    console.log(row("patch made (SIGTERM → /evidence)", `${f(median(patchMs))} ms`, `${f(median(gitMs))} ms`, `x${f(ratio(patchMs, gitMs))}`, "git add -A; git diff --cached --binary --full-index --no-renames HEAD, index copied"));
    console.log(row("patch", `${patchBytes} B`, `${gitPatchBytes} B`, "", comparison));
    console.log(row("collector RSS idle / peak", `${f(median(idleRss))} / ${f(median(peakRss))} MB`, "", "", "VmRSS once ready, VmHWM once the patch is served"));
    for (const line of exportRows) console.log(line);
    if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(figures, null, 2)}\n`);
  } finally {
    for (const proc of started) await proc.stop();
    for (const cleanup of cleanups.reverse()) await cleanup();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

function row(what: string, berth: string, floor: string, ratio: string, floorIs: string): string {
  return `${what.padEnd(34)} ${berth.padStart(18)} ${floor.padStart(12)} ${ratio.padStart(7)}   ${floorIs}`;
}

await main();
