// The evidence export read back: where the collector is, which pods are the export Job's, and
// what their termination messages say (the export's report, one schema with the evidence program).
import { type ExportResult, exportResultSchema } from "../../contracts/evidence-result.js";
import type { KubeObject } from "../model.js";
import type { Outcome } from "./outcome.js";
import { controllerOf } from "./ownership.js";
import { collectorUrl, JOB_NAME_LABEL } from "../render/evidence.js";
import type { EvidenceStatus } from "../schema/status.js";

/** The annotation an operator sets, with the reason, to give up a workspace's evidence export. */
export const EVIDENCE_WAIVED_ANNOTATION = "workspaces.berth.dev/evidence-waived";

type Terminated = { exitCode?: number; message?: string; finishedAt?: string };
type PodStatus = { podIP?: string; initContainerStatuses?: { name?: string; state?: { running?: unknown } }[]; containerStatuses?: { name?: string; state?: { terminated?: Terminated } }[] };

const createdAt = (o: KubeObject) => String(o.metadata?.creationTimestamp ?? "");

/** The newest of some pods, by creation time then name. */
export function newestPod(pods: readonly KubeObject[] | undefined): KubeObject | undefined {
  return [...(pods ?? [])].sort((a, b) => createdAt(a).localeCompare(createdAt(b)) || String(a.metadata?.name).localeCompare(String(b.metadata?.name))).at(-1);
}

/**
 * Where the export fetches the evidence: what an existing export Job was given (its template cannot
 * change), else the workload pod's collector while it runs.
 */
export function collectorFor(exportJob: KubeObject | undefined, pod: KubeObject | undefined): string | undefined {
  if (exportJob !== undefined) {
    const containers = ((exportJob.spec as { template?: { spec?: { containers?: { env?: { name?: string; value?: string }[] }[] } } } | undefined)?.template?.spec?.containers ?? []);
    return containers[0]?.env?.find((e) => e.name === "BERTH_COLLECTOR_URL")?.value;
  }
  const status = pod?.status as PodStatus | undefined;
  const running = status?.initContainerStatuses?.some((c) => c.name === "evidence" && c.state?.running !== undefined);
  return running && status?.podIP ? collectorUrl(status.podIP) : undefined;
}

/**
 * A Job's pods as Crossplane fetched them by label: those the observed Job controls, and no other
 * (admission keeps anyone but the Job controller from making a pod with those labels).
 */
export function jobPods(job: KubeObject | undefined, pods: readonly KubeObject[] | undefined): KubeObject[] {
  const uid = job?.metadata?.uid;
  if (uid === undefined) return [];
  return (pods ?? []).filter((p) => controllerOf(p)?.uid === uid);
}

const VERIFICATION_OUTPUT = 1024;

/**
 * Where the export stands, from its pods' termination messages: pushed (the artifact to record),
 * or how many attempts failed and why the last one did.
 */
export function exportState(pods: readonly KubeObject[]): { exported?: Pick<Outcome, "evidence" | "verification">; failed: number; last?: { reason: string; message: string } } {
  let failed = 0;
  let last: { at: string; reason: string; message: string } | undefined;
  for (const pod of pods) {
    const terminated = (pod.status as PodStatus | undefined)?.containerStatuses?.find((c) => c.name === "export")?.state?.terminated;
    if (terminated === undefined) continue;
    const report = parseReport(terminated.message);
    if (terminated.exitCode === 0 && report?.state === "Exported") {
      const { repository, tag, digest, exportedAt, verification } = report;
      return {
        exported: {
          evidence: { repository, tag, digest, exportedAt },
          ...(verification ? { verification: { exitCode: verification.exitCode, output: verification.output.slice(0, VERIFICATION_OUTPUT), reportedBy: "runtime" as const } } : {}),
        },
        failed,
      };
    }
    failed++;
    const at = terminated.finishedAt ?? "";
    const why = report?.state === "Failed" ? { reason: report.reason, message: report.message.slice(0, 512) } : { reason: "ExportFailed", message: `the export exited with code ${terminated.exitCode ?? "unknown"}` };
    if (last === undefined || at >= last.at) last = { at, ...why };
  }
  return { failed, ...(last ? { last: { reason: last.reason, message: last.message } } : {}) };
}

/** The export's report, as functions/contracts/evidence-result.ts defines it: one schema for both ends. */
function parseReport(message: string | undefined): ExportResult | undefined {
  if (message === undefined) return undefined;
  try {
    const parsed = exportResultSchema.safeParse(JSON.parse(message));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The reason an operator gave for waiving the export, if one did. */
export function evidenceWaived(composite: KubeObject): string | undefined {
  const reason = ((composite.metadata?.annotations ?? {}) as Record<string, string>)[EVIDENCE_WAIVED_ANNOTATION]?.trim();
  return reason ? reason.slice(0, 512) : undefined;
}

/** The status of the export, for a workspace whose run has an outcome. */
export function evidenceStatus(outcome: Outcome, waived: string | undefined, state: ReturnType<typeof exportState>, exporting: boolean): EvidenceStatus {
  if (outcome.evidence !== undefined) return { state: "Exported", reason: "Exported", message: `pushed to ${outcome.evidence.repository}@${outcome.evidence.digest}` };
  if (waived !== undefined) return { state: "Waived", reason: "Waived", message: `the export was waived: ${waived}` };
  if (state.last !== undefined) return { state: "Failed", reason: state.last.reason, message: state.last.message, attempts: state.failed };
  return exporting ? { state: "Exporting", reason: "Exporting", message: "pushing the run's evidence", attempts: 0 } : { state: "Collecting", reason: "Collecting", message: "waiting for the export to start" };
}

/** The labels of the pods Crossplane fetches for the export's state. */
export const exportPodLabels = { [JOB_NAME_LABEL]: "evidence-export" };
