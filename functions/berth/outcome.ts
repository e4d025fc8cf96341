import type { KubeObject } from "./model.js";

/**
 * The historical, terminal result of a workspace's run. Current health can change at any
 * time; an outcome is evidence, so once recorded in status it is carried forward unchanged.
 */
export interface Outcome {
  result: "Succeeded" | "Failed";
  reason: string;
  message?: string;
  finishedAt?: string;
}

type JobCondition = { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string };

// Job failure reasons Kubernetes reports, in the provider-neutral words Berth's status uses.
const FAILURE_REASONS: Record<string, string> = {
  DeadlineExceeded: "DeadlineExceeded",
  BackoffLimitExceeded: "WorkloadFailed",
  PodFailurePolicy: "WorkloadFailed",
};

/** A terminal outcome read from a finished Job, if it has finished. */
export function outcomeOfJob(job: KubeObject | undefined): Outcome | undefined {
  const status = job?.status as { conditions?: JobCondition[]; completionTime?: string } | undefined;
  for (const c of status?.conditions ?? []) {
    if (c.status !== "True") continue;
    if (c.type === "Complete") {
      return { result: "Succeeded", reason: "Completed", ...(status?.completionTime ? { finishedAt: status.completionTime } : {}) };
    }
    if (c.type === "Failed") {
      return {
        result: "Failed",
        reason: FAILURE_REASONS[c.reason ?? ""] ?? "WorkloadFailed",
        ...(c.message ? { message: c.message.slice(0, 512) } : {}),
        ...(c.lastTransitionTime ? { finishedAt: c.lastTransitionTime } : {}),
      };
    }
  }
  return undefined;
}

/** The outcome already recorded in the XR's status, which nothing may rewrite. */
export function recordedOutcome(composite: KubeObject): Outcome | undefined {
  const outcome = (composite.status as { outcome?: Outcome } | undefined)?.outcome;
  return outcome && (outcome.result === "Succeeded" || outcome.result === "Failed") ? outcome : undefined;
}
