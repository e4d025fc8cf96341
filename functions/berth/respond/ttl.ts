import type { KubeObject, Verdict } from "../model.js";
import { atRest } from "./phases.js";

/**
 * How long Crossplane may wait before it composes a workspace again when nothing it watches
 * has changed: the response TTL. With realtime compositions (Crossplane's default since 2.0)
 * every composed and required object is watched, so a change to any of them should reconcile
 * the workspace at once, and the TTL is the safety net. Crossplane requeues after the TTL, and
 * 60 s costs every idle workspace a reconcile, a call and a dozen no-op API requests a minute.
 * Berth can answer with one TTL while a workspace is on its way somewhere and a longer one
 * once it has arrived.
 */
export interface ResponseTTLs {
  /** Seconds, while the workspace is Pending, Provisioning, Suspending, Resuming or Deleting. */
  provisioning: number;
  /** Seconds, once it is Ready, Suspended, Released, Expired or Failed (and for documents without a phase). */
  atRest: number;
  /** At most this many seconds, whatever the phase, while Crossplane's watch circuit breaker holds the XR. */
  watchCircuitOpen: number;
}

// At rest, 15 min: an idle workspace then costs at most 3600/(900 x 0.9) + 1 reconciles an hour
// (Crossplane's jitter and its hourly resync). Drift is corrected through Crossplane's watches
// at once; the requeue only bounds an edit whose watch event Crossplane dropped, which its
// per-XR watch circuit breaker does for 5 minutes after a burst of events (docs/performance.md, "The
// whole system"). Operators who want a tighter bound set BERTH_TTL_AT_REST.
//
// While Crossplane 2.4's watch circuit breaker holds an XR (it says so on the XR: condition
// Responsive False, reason WatchCircuitOpen; after about 100 watch events in a burst, for 5
// minutes), it drops the XR's watch events but one every 30 s: a resume asked for, a pod that
// came up, an edit to undo would wait for the requeue. The requeue is not an event, so the
// breaker never drops it: every 5 s then, a moving workspace still moves in seconds.
export const DEFAULT_TTLS: ResponseTTLs = { provisioning: 60, atRest: 15 * 60, watchCircuitOpen: 5 };

/** The environment variables that override the defaults: whole s, m or h parts ("30s", "15m", "1h30m"), 1s to 24h. */
export const TTL_ENV = { provisioning: "BERTH_TTL_PROVISIONING", atRest: "BERTH_TTL_AT_REST", watchCircuitOpen: "BERTH_TTL_WATCH_CIRCUIT_OPEN" } as const;

/** Whether Crossplane's watch circuit breaker holds this XR, as Crossplane marks it at the start of the reconcile. */
export function watchCircuitOpen(composite: KubeObject | undefined): boolean {
  const conditions = (composite?.status as { conditions?: { type?: string; status?: string; reason?: string }[] } | undefined)?.conditions ?? [];
  return conditions.some((c) => c.type === "Responsive" && c.status === "False" && c.reason === "WatchCircuitOpen");
}

/** The TTL for a verdict's response to a request for `composite`, in seconds. */
export function responseTTL(verdict: Verdict, ttls: ResponseTTLs, composite?: KubeObject): number {
  const ttl = verdict.type === "fatal" || !atRest(verdict.status.phase) ? ttls.provisioning : ttls.atRest;
  return watchCircuitOpen(composite) ? Math.min(ttl, ttls.watchCircuitOpen) : ttl;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** Parses "90s", "15m", "1h" or "1h30m" into seconds; at least 1 s and at most 24 h. */
export function parseDuration(text: string): number | undefined {
  const parts = [...text.matchAll(/(\d+)([smh])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return undefined;
  const seconds = parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_SECONDS[p[2]!]!, 0);
  return seconds >= 1 && seconds <= 24 * 3600 ? seconds : undefined;
}

/** The TTLs the process runs with: the defaults, overridden by the environment. A bad value is an error naming the variable. */
export function ttlsFromEnvironment(env: Record<string, string | undefined>): ResponseTTLs {
  const ttls = { ...DEFAULT_TTLS };
  for (const key of ["provisioning", "atRest", "watchCircuitOpen"] as const) {
    const text = env[TTL_ENV[key]];
    if (text === undefined || text === "") continue;
    const seconds = parseDuration(text);
    if (seconds === undefined) throw new Error(`${TTL_ENV[key]}=${JSON.stringify(text)}: want a duration between 1s and 24h such as "30s", "15m" or "1h"`);
    ttls[key] = seconds;
  }
  return ttls;
}
