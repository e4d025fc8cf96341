// `evidence collect`: the collector, a native sidecar in the workload pod. It starts after the
// checkout and before the runtime (the kubelet waits for its startup probe), reads the trusted
// baseline, and holds the evidence port from then on so that the runtime, which shares the pod's
// network, can never take it. The kubelet sends SIGTERM to a native sidecar only once every main
// container (the runtime) has exited: that signal, and nothing the runtime can send, is what
// makes the collector compute the evidence and serve it to the export.
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { z } from "zod";
import { type Baseline, keptBaseline } from "./baseline.js";
import { type CollectedEvidence, WAITING } from "./collected.js";
import { parseEnv, port } from "./env.js";
import { rfc3339 } from "./result.js";
import { readVerification } from "./verification.js";
import { worktreePatch } from "./worktree-patch.js";

export const collectorSettingsSchema = z.object({
  BERTH_CHECKOUT_DIR: z.string().startsWith("/", "must be an absolute path").default("/workspace/src"),
  BERTH_EVIDENCE_PORT: port.default(9090),
  BERTH_VERIFICATION_RESULT: z.string().startsWith("/", "must be an absolute path").default("/workspace/.berth/verification.json"),
  BERTH_BASELINE_FILE: z.string().startsWith("/", "must be an absolute path").optional(),
});

export interface CollectorSettings {
  readonly checkoutDir: string;
  readonly port: number;
  readonly verificationFile: string;
  /** Where the baseline is kept for a restart (a volume only the collector mounts); none: read again. */
  readonly baselineFile?: string;
  /** Where to listen; default every address of the pod, IPv6 and IPv4. */
  readonly host?: string;
}

export function collectorSettings(env: NodeJS.ProcessEnv): CollectorSettings {
  const s = parseEnv(collectorSettingsSchema, env);
  return {
    checkoutDir: s.BERTH_CHECKOUT_DIR.replace(/\/+$/, "") || "/",
    port: s.BERTH_EVIDENCE_PORT,
    verificationFile: s.BERTH_VERIFICATION_RESULT,
    ...(s.BERTH_BASELINE_FILE ? { baselineFile: s.BERTH_BASELINE_FILE } : {}),
  };
}

export interface RunningCollector {
  readonly port: number;
  /** Settles once the baseline is read (or could not be); /healthz answers 200 from then on. */
  readonly ready: Promise<void>;
  /** The runtime has exited (SIGTERM): from now on /evidence computes and serves the evidence. */
  runtimeEnded(): void;
  /** Settles when the export has said it recorded the artifact (POST /done). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

type Answer = { status: number; body: string };

export async function startCollector(settings: CollectorSettings, log: Logger): Promise<RunningCollector> {
  let baseline: Baseline | undefined;
  let baselineError: string | undefined;
  let ended = false;
  let answer: Promise<Answer> | undefined;
  let markDone!: () => void;
  const done = new Promise<void>((resolve) => (markDone = resolve));

  const collect = async (): Promise<Answer> => {
    try {
      if (!baseline) throw new Error(baselineError ?? "the baseline was not read");
      const patch = await worktreePatch(settings.checkoutDir, baseline);
      const { verification, problem } = await readVerification(settings.verificationFile);
      if (problem) log.warn({ file: settings.verificationFile, problem }, "verification result not used");
      const evidence: CollectedEvidence = {
        commit: baseline.commit,
        patch: patch.patch,
        patchTruncated: patch.truncated,
        files: patch.files,
        verification,
        collectedAt: rfc3339(new Date()),
      };
      log.info({ commit: evidence.commit, files: evidence.files, patchBytes: Buffer.byteLength(evidence.patch), patchTruncated: evidence.patchTruncated, verification: verification !== null }, "evidence collected");
      return { status: 200, body: JSON.stringify(evidence) };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      log.error({ error }, "cannot collect the evidence");
      return { status: 500, body: JSON.stringify({ error }) };
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://collector").pathname;
    if (path === "/healthz") {
      if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed(res, "GET");
      // Until the baseline is read the runtime must not start: the startup probe keeps failing.
      if (baseline === undefined && baselineError === undefined) return send(res, 503, "text/plain", "reading the checkout");
      return send(res, 200, "text/plain", "ok");
    }
    if (path === "/evidence") {
      if (req.method !== "GET") return methodNotAllowed(res, "GET");
      if (!ended) return send(res, 503, "application/json", JSON.stringify(WAITING));
      answer ??= collect();
      const { status, body } = await answer;
      return send(res, status, "application/json", body);
    }
    if (path === "/done") {
      if (req.method !== "POST") return methodNotAllowed(res, "POST");
      // Before SIGTERM only the runtime could be asking, to end the collector before its evidence is read.
      if (!ended) return send(res, 409, "application/json", JSON.stringify(WAITING));
      res.once("finish", markDone);
      return send(res, 200, "application/json", "{}");
    }
    send(res, 404, "application/json", JSON.stringify({ error: `nothing at ${path}` }));
  };

  const server = http.createServer((req, res) => {
    req.resume();
    handle(req, res).catch((err: unknown) => {
      log.error({ error: err instanceof Error ? err.message : String(err) }, "request failed");
      if (!res.headersSent) send(res, 500, "application/json", JSON.stringify({ error: "internal error" }));
    });
  });
  const address = await listen(server, settings.port, settings.host);
  log.info({ port: address.port, checkoutDir: settings.checkoutDir }, "listening");

  const ready = keptBaseline(settings.checkoutDir, settings.baselineFile).then(
    (read) => {
      baseline = read;
      log.info({ commit: read.commit, files: read.files.size }, "baseline read");
    },
    (err: unknown) => {
      baselineError = `cannot read the checkout at ${settings.checkoutDir}: ${err instanceof Error ? err.message : String(err)}`;
      log.error({ error: baselineError }, "cannot read the baseline");
    },
  );

  return {
    port: address.port,
    ready,
    done,
    runtimeEnded: () => {
      if (ended) return;
      ended = true;
      log.info("the runtime has exited: collecting");
      // Start at once, so that the evidence is ready when the export first asks; wait for the
      // baseline, which the kubelet's startup probe has normally already seen read.
      answer = ready.then(collect);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" }).end(body);
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.writeHead(405, { allow }).end();
}

/**
 * Listens on `host`, or else on "::", which takes the port for IPv6 and IPv4 alike (a pod's IP
 * may be either), falling back to 0.0.0.0 where the node has no IPv6.
 */
async function listen(server: http.Server, port: number, host: string | undefined): Promise<AddressInfo> {
  const attempt = (on: string) =>
    new Promise<AddressInfo>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.once("error", onError);
      server.listen({ port, host: on, ipv6Only: false }, () => {
        server.off("error", onError);
        resolve(server.address() as AddressInfo);
      });
    });
  if (host !== undefined) return attempt(host);
  try {
    return await attempt("::");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAFNOSUPPORT" && (err as NodeJS.ErrnoException).code !== "EADDRNOTAVAIL") throw err;
    return attempt("0.0.0.0");
  }
}
