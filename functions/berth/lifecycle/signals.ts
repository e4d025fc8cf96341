import type { KubeObject } from "../model.js";

// The lifecycle's signals are annotations on the ExecutionWorkspace itself. Whatever drives the
// agent needs no privilege beyond patching that one object (no status subresource, no extra
// kind), any provider can write them, and a GitOps tool that owns the spec never fights them:
// server-side apply gives each annotation its own field owner.

/** When the workspace last did work for its user (RFC 3339), written by whatever drives the agent. */
export const LAST_ACTIVITY = "lifecycle.berth.dev/last-activity";
/** When the session ended (RFC 3339), written by whatever drives the agent: the class's onDetach action applies. */
export const DETACHED_AT = "lifecycle.berth.dev/detached-at";
/** Written by Berth's lifecycle Operation, never by people: when it suspended the workspace. */
export const SUSPENDED_AT = "lifecycle.berth.dev/suspended-at";
/** Written with SUSPENDED_AT: which of Berth's rules acted. */
export const SUSPENDED_BY = "lifecycle.berth.dev/suspended-by";
/**
 * Written by Berth's lifecycle Operation instead of SUSPENDED_AT when the idle workspace's class
 * keeps no files and its onDetach action is Delete: its runtime and Namespace are released.
 */
export const RELEASED_AT = "lifecycle.berth.dev/released-at";
/** Written by Berth's lifecycle Operation: when the workspace passed its class's maximum lifetime. Final. */
export const EXPIRED_AT = "lifecycle.berth.dev/expired-at";

/** The rules Berth's lifecycle Operation enforces. */
export type LifecycleRule = "IdleTimeout" | "MaxLifetime";

export interface LifecycleSignals {
  /** The later of the last activity signal and the workspace's creation. */
  lastActivity?: Date;
  /** A suspension by one of Berth's rules that no later activity has lifted. */
  suspended?: { at: Date; rule: string };
  /** A detach that no later activity (a new session attaching) has lifted. */
  detached?: Date;
  /** When the workspace expired: Berth's MaxLifetime rule (its annotation), or what agent-sandbox reported (added by the composition); nothing lifts it. */
  expired?: Date;
  /** A release by Berth's idle rule (Ephemeral classes, action Delete) that no later activity has lifted. */
  released?: Date;
}

/** A time from an annotation or a timestamp; undefined when absent or unparseable. */
export function timeOf(value: unknown): Date | undefined {
  if (typeof value !== "string") return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : new Date(t);
}

const later = (a: Date | undefined, b: Date | undefined) => (a === undefined ? b : b === undefined ? a : a > b ? a : b);

/** RFC 3339 in whole seconds, the way Kubernetes writes times. */
export const rfc3339 = (t: Date) => t.toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * Reads the signals. An unparseable time counts as absent rather than as an error: a bad
 * annotation must never suspend or hold a workspace, and the workspace's status shows which
 * time Berth read.
 */
export function lifecycleSignals(workspace: KubeObject): LifecycleSignals {
  const metadata = (workspace.metadata ?? {}) as { annotations?: Record<string, string>; creationTimestamp?: string };
  const annotations = metadata.annotations ?? {};
  const activity = timeOf(annotations[LAST_ACTIVITY]);
  const lastActivity = later(activity, timeOf(metadata.creationTimestamp));
  // Activity lifts a suspension, a release or a detach (a resume, a new session): the annotation
  // stays as a record but no longer holds. Berth's idle rule acts only on activity at least a
  // whole minute older than the second it writes, so activity stamped in that very second is news
  // to it: a resume sent the moment the rule acted (whole-second times) must lift it. A detach is
  // the driver's own word, and activity stamped with it is not a new session: only later lifts it.
  const holds = (t: Date | undefined, writtenBy: "rule" | "driver"): t is Date =>
    t !== undefined && !(activity !== undefined && (writtenBy === "rule" ? activity >= t : activity > t));
  const suspendedAt = timeOf(annotations[SUSPENDED_AT]);
  const detachedAt = timeOf(annotations[DETACHED_AT]);
  const expiredAt = timeOf(annotations[EXPIRED_AT]);
  const releasedAt = timeOf(annotations[RELEASED_AT]);
  return {
    ...(lastActivity ? { lastActivity } : {}),
    ...(holds(suspendedAt, "rule") ? { suspended: { at: suspendedAt, rule: annotations[SUSPENDED_BY] ?? "Unknown" } } : {}),
    ...(holds(detachedAt, "driver") ? { detached: detachedAt } : {}),
    ...(expiredAt ? { expired: expiredAt } : {}),
    ...(holds(releasedAt, "rule") ? { released: releasedAt } : {}),
  };
}
