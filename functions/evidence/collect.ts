// `evidence collect`: the collector, a native sidecar in the workload pod. It starts after the
// checkout and before the runtime (the kubelet waits for its startup probe), copies the trusted
// baseline, and holds the evidence port from then on so that the runtime, which shares the pod's
// network, can never take it. The kubelet sends SIGTERM to a native sidecar only once every main
// container (the runtime) has exited: that signal, and nothing the runtime can send, is what
// makes the collector compute the evidence and serve it to the export.
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { z } from "zod";
import { type Baseline, keptBaseline, MAX_BASELINE_BYTES } from "./baseline.js";
import { type CollectedEvidence, WAITING } from "./collected.js";
import { parseEnv, port } from "./env.js";
import { rfc3339 } from "../contracts/evidence-result.js";
import { readVerification } from "./verification.js";
import { worktreePatch } from "./worktree-patch.js";
import { RUNTIME_PATHS } from "../contracts/runtime-env.js";

export const collectorSettingsSchema = z.object({
  BERTH_CHECKOUT_DIR: z.string().startsWith("/", "must be an absolute path").default(RUNTIME_PATHS.checkout),
  BERTH_EVIDENCE_PORT: port.default(9090),
  BERTH_VERIFICATION_RESULT: z.string().startsWith("/", "must be an absolute path").default("/workspace/.berth/verification.json"),
  BERTH_BASELINE_DIR: z.string().startsWith("/", "must be an absolute path"),
  BERTH_BASELINE_MAX_BYTES: z.coerce.number({ error: "must be a number of bytes" }).int("must be a whole number of bytes").min(1, "must be at least 1").default(MAX_BASELINE_BYTES),
});

export interface CollectorSettings {
  readonly checkoutDir: string;
  readonly port: number;
  readonly verificationFile: string;
  /** Where the baseline copy is kept (a volume only the collector mounts), also for a restart. */
  readonly baselineDir: string;
  /** The most the copy of the checked-out commit may take in that volume. */
  readonly baselineMaxBytes: number;
  /** Where to listen; default every address of the pod, IPv6 and IPv4. */
  readonly host?: string;
}

export function collectorSettings(env: NodeJS.ProcessEnv): CollectorSettings {
  const s = parseEnv(collectorSettingsSchema, env);
  return {
    checkoutDir: s.BERTH_CHECKOUT_DIR.replace(/\/+$/, "") || "/",
    port: s.BERTH_EVIDENCE_PORT,
    verificationFile: s.BERTH_VERIFICATION_RESULT,
    baselineDir: s.BERTH_BASELINE_DIR,
    baselineMaxBytes: s.BERTH_BASELINE_MAX_BYTES,
  };
}

export interface RunningCollector {
  readonly port: number;
  /**
   * Settles once the baseline is copied, and /healthz answers 200 from then on; rejects, naming
   * why, when the checkout cannot be copied: the runtime must then never start.
   */
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

  // Whatever the runtime did to the checkout, the outcome and verification are served: a patch
  // that cannot be made is named as not collected, not an error that sinks the export.
  const collect = async (): Promise<Answer> => {
    const { verification, problem } = await readVerification(settings.verificationFile);
    if (problem) log.warn({ file: settings.verificationFile, problem }, "verification result not used");
    let changes: Pick<CollectedEvidence, "patch" | "notCollected" | "leftOut" | "files">;
    try {
      if (!baseline) throw new Error(baselineError ?? "the baseline was not copied");
      const made = await worktreePatch(settings.checkoutDir, baseline);
      changes = { patch: made.patch.toString("base64"), notCollected: null, leftOut: [...made.leftOut], files: made.files };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      log.error({ error }, "cannot make the patch");
      changes = { patch: null, notCollected: `the collector could not make the patch: ${error}`, leftOut: [], files: { added: 0, modified: 0, deleted: 0 } };
    }
    const evidence: CollectedEvidence = { commit: baseline?.commit ?? null, ...changes, verification, collectedAt: rfc3339(new Date()) };
    log.info(
      { commit: evidence.commit, files: evidence.files, patchBytes: evidence.patch === null ? null : Buffer.byteLength(evidence.patch, "base64"), leftOut: evidence.leftOut.length, verification: verification !== null },
      "evidence collected",
    );
    return { status: 200, body: JSON.stringify(evidence) };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://collector").pathname;
    if (path === "/healthz") {
      if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed(res, "GET");
      // Until the baseline is copied the runtime must not start: the startup probe keeps failing,
      // and fails for good when the checkout cannot be copied.
      if (baselineError !== undefined) return send(res, 500, "text/plain", baselineError);
      if (baseline === undefined) return send(res, 503, "text/plain", "copying the checkout's commit");
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

  const ready = keptBaseline(settings.checkoutDir, settings.baselineDir, settings.baselineMaxBytes).then(
    (copied) => {
      baseline = copied;
      log.info({ commit: copied.commit, objectFormat: copied.objectFormat }, "baseline copied");
    },
    (err: unknown) => {
      baselineError = `cannot copy the checkout at ${settings.checkoutDir}: ${err instanceof Error ? err.message : String(err)}`;
      log.error({ error: baselineError }, "cannot copy the baseline: the runtime will not start");
      throw new Error(baselineError);
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
      // baseline, which the kubelet's startup probe has normally already seen copied.
      answer = ready.then(collect, collect);
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
