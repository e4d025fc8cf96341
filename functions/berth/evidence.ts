import { type ExportResult, exportResultSchema } from "../evidence/result.js";
import type { CapabilityRequest } from "./egress.js";
import type { KubeObject } from "./model.js";
import type { Outcome } from "./outcome.js";
import type { Problem } from "./problems.js";
import type { RequiredResources } from "./required.js";
import { collectorUrl, JOB_NAME_LABEL } from "./render/evidence.js";
import type { EvidenceStatus } from "./schema/status.js";
import type { WorkspaceProfileSpec } from "./schema/profile.js";
import type { CaBundle, Egress, EvidenceExport } from "./workspace.js";
import { controllerOf } from "./ownership.js";

/** The annotation an operator sets, with the reason, to give up a workspace's evidence export. */
export const EVIDENCE_WAIVED_ANNOTATION = "workspaces.berth.dev/evidence-waived";

/**
 * The evidence registry as an egress request, for the export alone. Refused when the profile has
 * no evidence registry, or when the workspace declares a capability to it: the runtime must not
 * reach where its evidence is kept.
 */
export function evidenceRequest(
  exportBeforeCleanup: boolean,
  capabilities: readonly CapabilityRequest[],
  profile: { name: string; spec: WorkspaceProfileSpec },
): { type: "none" } | { type: "request"; request: CapabilityRequest } | Problem {
  if (!exportBeforeCleanup) return { type: "none" };
  const evidence = profile.spec.evidence;
  if (evidence === undefined) {
    return {
      type: "invalid",
      message: `spec.lifecycle.evidence.exportBeforeCleanup: WorkspaceProfile "${profile.name}" has no spec.evidence, so the evidence could not be exported; ask the platform team for an evidence registry`,
    };
  }
  const reaching = capabilities.find((c) => c.destination === evidence.destination);
  if (reaching !== undefined) {
    return {
      type: "invalid",
      message: `${reaching.field}.destination: "${evidence.destination}" is WorkspaceProfile "${profile.name}"'s evidence registry, which only the evidence export may reach`,
    };
  }
  return { type: "request", request: { name: "evidence", field: `WorkspaceProfile "${profile.name}" spec.evidence`, destination: evidence.destination } };
}

/**
 * The private CAs of the destinations a workspace's containers talk TLS to (its git destination,
 * its evidence registry), read from the ConfigMaps the profile names. Every ConfigMap is asked
 * for before any problem is reported, so that Crossplane fetches them in one round.
 */
export function resolveCaBundles(destinations: readonly (string | undefined)[], profile: { name: string; spec: WorkspaceProfileSpec }, required: RequiredResources): { type: "resolved"; bundles: CaBundle[] } | Problem {
  const bundles: CaBundle[] = [];
  let problem: Problem | undefined;
  for (const name of new Set(destinations)) {
    const index = profile.spec.destinations.findIndex((d) => d.name === name);
    const ref = profile.spec.destinations[index]?.caBundle;
    if (ref === undefined) continue;
    const field = `WorkspaceProfile "${profile.name}" spec.destinations[${index}].caBundle`;
    const found = required.need(`ca-bundle-${name}`, { apiVersion: "v1", kind: "ConfigMap", namespace: ref.namespace, name: ref.name }, "CaBundle", field);
    if (found.type !== "found") {
      problem ??= found;
      continue;
    }
    const pem = ((found.object.data ?? {}) as Record<string, string>)[ref.key];
    if (pem === undefined || !pem.includes("-----BEGIN CERTIFICATE-----")) {
      problem ??= { type: "invalid", message: `${field}: ConfigMap "${ref.namespace}/${ref.name}" has no PEM certificate under key "${ref.key}"` };
      continue;
    }
    bundles.push({ destination: name!, configMap: `ca-${name}`, pem });
  }
  return problem ?? { type: "resolved", bundles };
}

/** The MCP servers only the gate reaches: it talks TLS to an https one. */
export function gatedDestinations(requests: readonly CapabilityRequest[]): string[] {
  return requests.filter((r) => r.gate !== undefined).map((r) => r.destination);
}

/**
 * The destinations whose TLS a DeveloperWorkspace's own containers check, among its requests:
 * git's (the checkout), the evidence registry (the export) and gated MCP servers (the gate). The
 * runtime's TLS trust is its image's.
 */
export function tlsDestinations(requests: readonly CapabilityRequest[]): string[] {
  return [...requests.filter((r) => r.name === "git" || r.name === "evidence").map((r) => r.destination), ...gatedDestinations(requests)];
}

/** The export as the profile's spec.evidence, the resolved registry opening and the workspace's credential and CA make it. */
export function evidenceExportOf(
  profile: WorkspaceProfileSpec,
  registry: Egress | undefined,
  spec: { workspaceID: string; credentials: readonly { purpose: string; secretRef: { name: string; key: string } }[] },
  caBundles: readonly CaBundle[],
): EvidenceExport | undefined {
  const evidence = profile.evidence;
  if (registry === undefined || evidence === undefined) return undefined;
  const credential = spec.credentials.find((c) => c.purpose === "evidence")?.secretRef;
  const caBundle = caBundles.find((b) => b.destination === registry.destination);
  const hosts = profile.destinations.find((d) => d.name === evidence.destination)?.hosts ?? [];
  return {
    image: evidence.image,
    repository: evidence.repository,
    tag: spec.workspaceID,
    resources: evidence.resources,
    collectTimeoutSeconds: evidence.collectTimeoutSeconds,
    egress: registry,
    ...(credential ? { credential } : {}),
    ...(caBundle ? { caBundle } : {}),
    ...(hosts.length > 0 ? { tokenRealmHosts: hosts } : {}),
  };
}

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

/** The export's report, as functions/evidence/result.ts defines it: one schema for both ends. */
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
