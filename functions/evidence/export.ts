// `evidence export`: the only container of the Job evidence-export, the only pod that reaches the
// evidence registry and holds its credential. Berth creates it once the run's outcome is recorded
// and gives it that outcome and the collector's address; it fetches the evidence from the
// collector, pushes one OCI artifact, tells the collector it may end, and reports the digest (or
// why it could not push) in its termination message, where Berth reads it. It needs no
// Kubernetes API: each attempt is a pod, and the kubelet carries its report.
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { z } from "zod";
import { type CollectedEvidence, collectedEvidenceSchema, collectorErrorSchema } from "./collected.js";
import { parseEnv, required } from "./env.js";
import { httpRequest } from "./http-request.js";
import { evidenceArtifact } from "./oci-artifact.js";
import { credentialFor, type RegistryCredential, redact } from "./registry-auth.js";
import { networkFailure, parseRepository, PushFailure, pushArtifact, type Repository, TAG } from "./registry-push.js";
import { writeTerminationMessage } from "./termination-message.js";
import { type ExportResult, type FailedResult, type FailureReason, firstChars, MESSAGE_CHARS, type Outcome, outcomeSchema, rfc3339, VERIFICATION_SUMMARY_CHARS } from "../contracts/evidence-result.js";

const POLL_MS = 2_000;
const FIRST_BACKOFF_MS = 2_000;
const MAX_BACKOFF_MS = 30_000;

// Host names as the profile's destinations list them (no scheme, port or path), comma-separated.
const HOST = "[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*";
const hostList = z
  .string()
  .regex(new RegExp(`^\\s*${HOST}(\\s*,\\s*${HOST})*\\s*$`), "must be host names separated by commas, without scheme, port or path")
  .transform((s) => s.split(",").map((h) => h.trim().toLowerCase()));


export const exportSettingsSchema = z.object({
  BERTH_OUTCOME: required,
  BERTH_COLLECTOR_URL: z.url({ protocol: /^http$/, error: "must be the collector's http:// URL" }).optional(),
  BERTH_EVIDENCE_REPOSITORY: required,
  BERTH_EVIDENCE_TAG: required.regex(TAG, "must be an OCI tag: letters, digits, _ . -, at most 128, not starting with . or -"),
  BERTH_WORKSPACE_ID: required,
  BERTH_SOURCE_REPOSITORY: required,
  BERTH_SOURCE_REVISION: required,
  BERTH_REGISTRY_AUTH: z.string().optional(),
  BERTH_TOKEN_REALM_HOSTS: hostList.optional(),
  SSL_CERT_FILE: z.string().min(1).optional(),
  BERTH_EXPORT_DEADLINE_SECONDS: z.coerce.number({ error: "must be a number of seconds" }).int("must be a whole number of seconds").min(1, "must be at least 1").default(60),
  BERTH_TERMINATION_LOG: required.default("/dev/termination-log"),
});

export interface ExportSettings {
  /** The outcome as Berth recorded it, exported as it is. */
  readonly outcome: Outcome;
  /** The collector beside the runtime; none when the runtime never ran or the collector's time ran out. */
  readonly collector: URL | undefined;
  readonly repository: Repository;
  /** BERTH_EVIDENCE_REPOSITORY as given, as the result reports it. */
  readonly repositoryName: string;
  readonly tag: string;
  readonly workspaceID: string;
  readonly source: { readonly repository: string; readonly revision: string };
  readonly credential: RegistryCredential | undefined;
  /** Hosts besides the registry's whose token service may be sent the credential: the evidence destination's. */
  readonly tokenRealmHosts: readonly string[];
  readonly ca: Buffer | undefined;
  readonly deadlineMs: number;
  readonly terminationLog: string;
}

/** The settings from the environment; throws with what is wrong, never quoting the credential. */
export function exportSettings(env: NodeJS.ProcessEnv): ExportSettings {
  const s = parseEnv(exportSettingsSchema, env);
  const repository = parseRepository(s.BERTH_EVIDENCE_REPOSITORY);
  const outcome = (() => {
    try {
      return outcomeSchema.parse(JSON.parse(s.BERTH_OUTCOME));
    } catch (err) {
      throw new Error(`BERTH_OUTCOME: must be the recorded outcome as JSON: ${err instanceof z.ZodError ? err.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") : err instanceof Error ? err.message : String(err)}`);
    }
  })();
  let ca: Buffer | undefined;
  if (s.SSL_CERT_FILE) {
    try {
      ca = readFileSync(s.SSL_CERT_FILE);
    } catch (err) {
      throw new Error(`SSL_CERT_FILE ${s.SSL_CERT_FILE}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return {
    outcome,
    collector: s.BERTH_COLLECTOR_URL ? new URL(s.BERTH_COLLECTOR_URL) : undefined,
    repository,
    repositoryName: s.BERTH_EVIDENCE_REPOSITORY,
    tag: s.BERTH_EVIDENCE_TAG,
    workspaceID: s.BERTH_WORKSPACE_ID,
    source: { repository: s.BERTH_SOURCE_REPOSITORY, revision: s.BERTH_SOURCE_REVISION },
    credential: s.BERTH_REGISTRY_AUTH ? credentialFor(s.BERTH_REGISTRY_AUTH, repository.host) : undefined,
    tokenRealmHosts: s.BERTH_TOKEN_REALM_HOSTS ?? [],
    ca,
    deadlineMs: s.BERTH_EXPORT_DEADLINE_SECONDS * 1000,
    terminationLog: s.BERTH_TERMINATION_LOG,
  };
}

export interface ExportDeps {
  readonly log: Logger;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What retrying cannot mend: the collector said it could not collect, or served what does not parse. */
class Final extends Error {}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs one export attempt to its end; resolves with the process's exit code. Within the attempt
 * it retries with back-off until its deadline; the Job's back-off then spaces out the next pods.
 */
export async function runExport(settings: ExportSettings, deps: ExportDeps): Promise<number> {
  const { log } = deps;
  const sleep = deps.sleep ?? wait;
  const secrets = settings.credential ? [settings.credential.password, Buffer.from(`${settings.credential.username}:${settings.credential.password}`).toString("base64")] : [];
  const deadline = Date.now() + settings.deadlineMs;
  const remaining = () => deadline - Date.now();
  const failed = (reason: FailureReason, message: string, attempts: number): FailedResult => ({
    state: "Failed",
    reason,
    message: firstChars(redact(message, secrets).replace(/\s+/g, " ").trim(), MESSAGE_CHARS),
    attempts,
    lastAttemptAt: rfc3339(new Date()),
  });
  const finish = (result: ExportResult, code: number): number => {
    writeTerminationMessage(settings.terminationLog, JSON.stringify(result));
    return code;
  };

  // 1. The evidence, from the collector beside the runtime; without one, or when the collector
  // cannot give it, the outcome alone, saying why: an outcome is always exported.
  let evidence: CollectedEvidence | undefined;
  let notCollected = "the runtime never ran, or its collector's time ran out";
  if (settings.collector === undefined) {
    log.warn("no collector: the runtime never ran, or the collector's time ran out; exporting the outcome alone");
  } else {
    for (let attempts = 0, backoff = FIRST_BACKOFF_MS; ; ) {
      try {
        evidence = await fetchEvidence(settings.collector, remaining());
        if (evidence) break;
        // 503: the kubelet has not yet told the collector that the runtime ended. Not a failure.
        if (remaining() <= 0) throw new Error("the collector did not serve the evidence before the deadline");
        await sleep(Math.min(POLL_MS, remaining()));
        continue;
      } catch (err) {
        attempts++;
        const failure = failed("NoEvidence", err instanceof Error ? err.message : String(err), attempts);
        if (err instanceof Final) {
          log.warn({ message: failure.message }, "the collector cannot give the evidence: exporting the outcome alone");
          notCollected = failure.message;
          break;
        }
        log.warn({ attempts, reason: failure.reason, message: failure.message }, "cannot fetch the evidence");
        if (remaining() <= 0) return finish(failure, 1);
        await sleep(Math.min(backoff, remaining()));
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  // 2. One artifact; the same bytes on every attempt.
  const artifact = evidenceArtifact({ workspaceID: settings.workspaceID, source: settings.source, outcome: settings.outcome, evidence, notCollected });
  log.info({ digest: artifact.digest, blobs: artifact.blobs.length, patchBytes: evidence?.patch ? Buffer.byteLength(evidence.patch, "base64") : 0 }, "artifact built");

  // 3. Push, retried with back-off until the deadline.
  let attempts = 0;
  for (let backoff = FIRST_BACKOFF_MS; ; backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)) {
    attempts++;
    try {
      await pushArtifact({ repository: settings.repository, tag: settings.tag, artifact, credential: settings.credential, tokenRealmHosts: settings.tokenRealmHosts, ca: settings.ca, timeoutMs: Math.max(1_000, Math.min(60_000, remaining())) });
      break;
    } catch (err) {
      const failure = err instanceof PushFailure ? err : networkFailure(err, "push", secrets);
      const result = failed(failure.reason, failure.message, attempts);
      log.warn({ attempts, reason: result.reason, message: result.message }, "push failed");
      if (remaining() <= 0) return finish(result, 1);
      await sleep(Math.min(backoff, remaining()));
    }
  }

  // 4. Pushed: the collector may end, and the kubelet carries the report to Berth.
  const exported: ExportResult = {
    state: "Exported",
    repository: settings.repositoryName,
    tag: settings.tag,
    digest: artifact.digest,
    exportedAt: rfc3339(new Date()),
    verification: evidence?.verification ? { exitCode: evidence.verification.exitCode, output: firstChars(evidence.verification.output, VERIFICATION_SUMMARY_CHARS) } : null,
    attempts,
  };
  log.info({ repository: exported.repository, tag: exported.tag, digest: exported.digest, attempts }, "exported");
  if (settings.collector) await tellCollectorDone(settings.collector, log);
  return finish(exported, 0);
}

/** The evidence, or undefined while the collector still waits for the runtime to end (503). */
async function fetchEvidence(collector: URL, remainingMs: number): Promise<CollectedEvidence | undefined> {
  const url = new URL("/evidence", collector);
  let res;
  try {
    // The patch is capped at 8 MiB; JSON escaping can at most sextuple it.
    res = await httpRequest({ method: "GET", url, headers: { accept: "application/json" }, timeoutMs: Math.max(1_000, Math.min(120_000, remainingMs)), maxResponseBytes: 64 * 1024 * 1024 });
  } catch (err) {
    throw new Error(`the collector at ${url.host}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (res.status === 503) return undefined;
  const json = (() => {
    try {
      return JSON.parse(res.body.toString("utf8")) as unknown;
    } catch {
      return undefined;
    }
  })();
  if (res.status === 200) {
    const parsed = collectedEvidenceSchema.safeParse(json);
    if (parsed.success) return parsed.data;
    throw new Final(`the collector's evidence does not parse: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
  const error = collectorErrorSchema.safeParse(json);
  // The collector computes the evidence once: its error will not change.
  if (res.status === 500 && error.success) throw new Final(`the collector could not collect: ${error.data.error}`);
  throw new Error(`the collector at ${url.host} answered ${res.status}`);
}

/** Best effort: the collector ends when told; otherwise the pod's grace period ends it. */
async function tellCollectorDone(collector: URL, log: Logger): Promise<void> {
  try {
    const res = await httpRequest({ method: "POST", url: new URL("/done", collector), headers: { "content-length": "0" }, timeoutMs: 10_000, maxResponseBytes: 64 * 1024 });
    log.info({ status: res.status }, "told the collector it is done");
  } catch (err) {
    log.warn({ error: err instanceof Error ? err.message : String(err) }, "cannot tell the collector it is done");
  }
}
