import type { KubeObject } from "../model.js";

/**
 * The historical, terminal result of a workspace's run. Current health can change at any
 * time; an outcome is evidence, so once recorded in status it is carried forward unchanged.
 */
export interface Outcome {
  result: "Succeeded" | "Failed";
  reason: string;
  message?: string;
  finishedAt?: string;
  /** Where the run's evidence was pushed (lifecycle.evidence.exportBeforeCleanup). */
  evidence?: { repository: string; tag: string; digest: string; exportedAt: string };
  verification?: { exitCode: number; output: string; reportedBy: "runtime" };
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

type ContainerStatus = { name?: string; state?: { terminated?: { exitCode?: number; reason?: string; finishedAt?: string } } };

/**
 * A terminal outcome read from the workload pod's runtime container, once it has exited. A
 * workspace that exports evidence keeps its pod (the collector beside the runtime holds the
 * evidence) until the export is done, so its Job finishes only afterwards; the outcome is
 * recorded from the runtime itself, with the result and reason the Job would give.
 */
export function outcomeOfRuntime(pod: KubeObject | undefined, container = "runtime"): Outcome | undefined {
  const statuses = (pod?.status as { containerStatuses?: ContainerStatus[] } | undefined)?.containerStatuses ?? [];
  const terminated = statuses.find((c) => c.name === container)?.state?.terminated;
  if (terminated?.exitCode === undefined) return undefined;
  const finishedAt = terminated.finishedAt ? { finishedAt: terminated.finishedAt } : {};
  if (terminated.exitCode === 0) return { result: "Succeeded", reason: "Completed", ...finishedAt };
  const why = terminated.reason && terminated.reason !== "Error" ? ` (${terminated.reason})` : "";
  return { result: "Failed", reason: "WorkloadFailed", message: `the runtime exited with code ${terminated.exitCode}${why}`, ...finishedAt };
}

/** The outcome already recorded in the XR's status, which nothing may rewrite. */
export function recordedOutcome(composite: KubeObject): Outcome | undefined {
  const outcome = (composite.status as { outcome?: Outcome } | undefined)?.outcome;
  return outcome && (outcome.result === "Succeeded" || outcome.result === "Failed") ? outcome : undefined;
}
