import { type CapacityDeclaration, capacityStatus, checkCapacity, evaluateCapacity } from "../resolve/capacity.js";
import { capacityEnforced, egressResolved } from "../respond/conditions.js";
import { declaredCapabilities, resolveEgress } from "../resolve/egress.js";
import type { CompositeRenderer, KubeObject, Observed, Verdict } from "../model.js";
import { evidenceExportOf, evidenceRequest, resolveCaBundles, tlsDestinations } from "../resolve/evidence.js";
import { collectorFor, evidenceStatus, evidenceWaived, exportPodLabels, exportState, jobPods, newestPod } from "../observe/evidence-export.js";
import { type Outcome, outcomeOfJob, outcomeOfRuntime, recordedOutcome } from "../observe/outcome.js";
import type { Problem } from "../problems.js";
import { beyondProfile, resolveProfile, resolveStorageClass } from "../resolve/profile.js";
import { PROVISIONING, unready, withReadiness } from "../observe/readiness.js";
import { RequiredResources } from "../resolve/required.js";
import { workspaceLabels, workspaceNamespace } from "../render/labels.js";
import { inCreationOrder, renderNamespaceProfile, workspaceNamespaceLookup } from "../render/namespace-profile.js";
import { EVIDENCE_EXPORT_NAME, renderEvidenceExport, workloadPods } from "../render/evidence.js";
import { MCP_GATE_NAME } from "../render/mcp-gate.js";
import { keepRunningTemplate } from "../render/running-template.js";
import { renderRuntimeLease } from "../render/runtime-lease.js";
import { checkoutHostProblem } from "../resolve/checkout.js";
import { renderWorkload } from "../render/workload.js";
import { developerWorkspaceSchema } from "../schema/documents.js";
import { parseDocument } from "../../contracts/parse-document.js";
import type { DeveloperWorkspaceStatus } from "../schema/status.js";
import { usageOf } from "../observe/usage.js";
import { fatal, notItsNamespace, stalled } from "../respond/verdicts.js";
import { namespaceClaim } from "../observe/ownership.js";
import type { NamespaceProfile } from "../workspace.js";

/**
 * The composition resource names of what runs code: created last (namespace-profile.ts,
 * workloadLast). The MCP gate is among them: its pod holds the MCP credential and reaches the
 * server, so it must not start before default-deny and its own egress policy exist.
 */
export const DEVELOPER_WORKLOAD = ["workload", EVIDENCE_EXPORT_NAME, MCP_GATE_NAME];

/** Phase and reason of current health, which is never the same thing as the outcome. */
function health(
  observed: Observed,
  notReady: string[],
  workload: KubeObject | undefined,
  outcome: Outcome | undefined,
  runtimeEnded: Outcome | undefined,
): Pick<DeveloperWorkspaceStatus, "phase" | "reason" | "message"> {
  if (observed.composite.metadata?.deletionTimestamp !== undefined) {
    return { phase: "Deleting", reason: "Deleting", message: "the workspace is being deleted" };
  }
  const running = outcomeOfJob(workload) ?? runtimeEnded;
  if (running?.result === "Failed") return { phase: "Failed", reason: running.reason, message: "the workspace's runtime failed" };
  if (notReady.length > 0) return PROVISIONING;
  if (outcome?.result === "Succeeded") return { phase: "Ready", reason: "Completed", message: "the runtime has completed; the workspace's files are kept" };
  return { phase: "Ready", reason: "Available", message: "all workspace objects are ready" };
}

/**
 * DeveloperWorkspace: the Namespace profile, the volume and a runtime workload, rendered
 * from the document and its reviewed WorkspaceProfile.
 */
export const renderDeveloperWorkspace: CompositeRenderer = (observed): Verdict => {
  const required = new RequiredResources(observed);
  const parsed = parseDocument(developerWorkspaceSchema, observed.composite);
  if (!parsed.ok) return fatal(observed, required.requirements, `invalid document: ${parsed.problems.join("; ")}`);
  const { spec } = parsed.value;
  const namespace = workspaceNamespace(spec.workspaceID);
  const namespaceNow = workspaceNamespaceLookup(required, namespace);
  const baseStatus = { namespace, profile: spec.profileRef.name };
  const taken = namespaceClaim(namespaceNow, observed.composite, namespace);
  if (taken) return notItsNamespace(observed, required.requirements, taken, baseStatus);

  const profile = resolveProfile(spec.profileRef.name, required);
  if (profile.type !== "found") return stalled(observed, required.requirements, profile, baseStatus);

  const runtime = profile.spec.runtimes.find((r) => r.name === spec.runtime.profile);
  const runtimeMade = spec.capabilities.kubernetes.resources;
  const problem: Problem | undefined =
    beyondProfile(
      {
        storage: { field: "spec.storage.size", size: spec.storage.size },
        resources: { field: "spec.resources", ...spec.resources },
        runtimeMade: runtimeMade && { field: "spec.capabilities.kubernetes.resources", ...runtimeMade },
      },
      profile,
    ) ??
    (runtime === undefined ? { type: "invalid", message: `spec.runtime.profile: WorkspaceProfile "${profile.name}" offers no runtime "${spec.runtime.profile}"` } : undefined) ??
    checkoutHostProblem(spec, profile);
  if (problem) return stalled(observed, required.requirements, problem, baseStatus);

  // Ask for the StorageClass and every destination Service together, so that Crossplane's
  // requirement loop fetches them in one round; then judge them in a fixed order.
  const storageClass = spec.storage.mode === "persistent" ? resolveStorageClass(profile.spec, required) : undefined;
  const capabilities = declaredCapabilities(spec.capabilities, "spec.capabilities", spec.credentials);
  const evidence = evidenceRequest(spec.lifecycle.evidence.exportBeforeCleanup, capabilities, profile);
  if (evidence.type === "invalid") return stalled(observed, required.requirements, evidence, baseStatus);
  const egress = resolveEgress([...capabilities, ...(evidence.type === "request" ? [evidence.request] : [])], profile, required);
  if (egress.type === "invalid") return stalled(observed, required.requirements, egress, baseStatus);
  const caBundles = resolveCaBundles(tlsDestinations([...capabilities, ...(evidence.type === "request" ? [evidence.request] : [])]), profile, required);
  if (caBundles.type === "invalid") return stalled(observed, required.requirements, caBundles, baseStatus);

  let capacity: CapacityDeclaration | undefined;
  if (storageClass !== undefined) {
    if (storageClass.type !== "found") return stalled(observed, required.requirements, storageClass, baseStatus);
    capacity = evaluateCapacity(profile.spec.storage, storageClass.object);
    const refusal = checkCapacity(capacity, spec.lifecycle.deletion === "Retain" ? "spec.lifecycle.deletion" : undefined);
    if (refusal) return stalled(observed, required.requirements, refusal, { ...baseStatus, capacity: capacityStatus(spec.storage, capacity) });
  }
  if (egress.type !== "resolved") return stalled(observed, required.requirements, egress, baseStatus);
  if (caBundles.type !== "resolved") return stalled(observed, required.requirements, caBundles, baseStatus);

  const registry = egress.egress.find((e) => e.name === "evidence");
  const evidenceExport = evidenceExportOf(profile.spec, registry, spec, caBundles.bundles);

  const namespaceProfile: NamespaceProfile = {
    workspaceID: spec.workspaceID,
    namespace,
    labels: workspaceLabels(spec.workspaceID),
    profile: profile.spec,
    resources: spec.resources,
    volume: spec.storage,
    egress: egress.egress.filter((e) => e !== registry),
    kubernetesAccess: spec.capabilities.kubernetes.access,
    ...(runtimeMade ? { runtimeMade } : {}),
    userNamespacesRequired: profile.spec.storage.capacityEnforcement === "Runtime",
    ...(caBundles.bundles.length > 0 ? { caBundles: caBundles.bundles } : {}),
    ...(evidenceExport ? { evidence: evidenceExport } : {}),
  };
  const objects = renderNamespaceProfile(namespaceProfile);

  // Once the run has an outcome, a workload that has gone (deleted, or cleaned up after its
  // retention) stays gone: re-creating it would run the agent again.
  const observedWorkload = observed.resources.workload;
  const recorded = recordedOutcome(observed.composite);
  // A workspace that exports evidence reads its run's end from the runtime itself: the collector
  // keeps the pod, and so the Job, running until the export is done.
  const workloadPod =
    evidenceExport && observedWorkload !== undefined && recorded?.evidence === undefined
      ? newestPod(jobPods(observedWorkload, required.list("workload-pods", { apiVersion: "v1", kind: "Pod", namespace, matchLabels: workloadPods() })))
      : undefined;
  // While its collector runs, the Job is still active: the runtime's own end is the run's end.
  const runtimeEnded = evidenceExport ? outcomeOfRuntime(workloadPod) : undefined;
  let outcome = recorded ?? outcomeOfJob(observedWorkload) ?? runtimeEnded;
  const warnings: string[] = [];

  let evidenceNow: DeveloperWorkspaceStatus["evidence"];
  // Without an export there is nothing to wait for; with one, until it is recorded or waived.
  let settled = evidenceExport === undefined;
  const observedExport = observed.resources[EVIDENCE_EXPORT_NAME];
  if (evidenceExport && outcome !== undefined) {
    const pods = observedExport ? jobPods(observedExport, required.list("evidence-export-pods", { apiVersion: "v1", kind: "Pod", namespace, matchLabels: exportPodLabels })) : [];
    const state = exportState(pods);
    if (outcome.evidence === undefined && state.exported) outcome = { ...outcome, ...state.exported };
    const waived = evidenceWaived(observed.composite);
    settled = outcome.evidence !== undefined || waived !== undefined;
    evidenceNow = evidenceStatus(outcome, waived, state, observedExport !== undefined);
    if (evidenceNow.state === "Failed") warnings.push(`the evidence export failed (${state.failed} attempt${state.failed === 1 ? "" : "s"}): ${evidenceNow.reason}: ${evidenceNow.message}; nothing is cleaned up until it is exported or waived (annotation workspaces.berth.dev/evidence-waived)`);
    if (!settled) {
      const kept = keepRunningTemplate(renderEvidenceExport(namespaceProfile, spec, outcome, collectorFor(observedExport, workloadPod))!, observedExport, "template", "as a Job's template cannot change");
      objects[EVIDENCE_EXPORT_NAME] = kept.workload;
    }
  }

  // Until the run ends, its runtime's lease: what the runtime made goes with it.
  if (outcome === undefined) Object.assign(objects, renderRuntimeLease(namespaceProfile));

  if (outcome === undefined || observedWorkload !== undefined) {
    // A Job still running its collector is not suspended: suspending it would delete its pod.
    const active = ((observedWorkload?.status as { active?: number } | undefined)?.active ?? 0) > 0;
    const finished = outcomeOfJob(observedWorkload) !== undefined || (outcome !== undefined && !(evidenceExport && active));
    const kept = keepRunningTemplate(renderWorkload(spec, runtime!, namespaceProfile, finished, !settled), observedWorkload, "template", "until the workspace is re-created, as a Job's template cannot change");
    objects.workload = kept.workload;
    if (kept.warning) warnings.push(kept.warning);
  }

  const resources = withReadiness(inCreationOrder(observed.composite, objects, observed.resources, required, namespaceNow, DEVELOPER_WORKLOAD), observed.resources);
  // The export's progress is reported in status.evidence, not as the workspace's readiness; a
  // runtime that completed is as ready as its Job will be once the collector is done.
  if (resources[EVIDENCE_EXPORT_NAME]) resources[EVIDENCE_EXPORT_NAME].ready = true;
  if (runtimeEnded?.result === "Succeeded" && resources.workload) resources.workload.ready = true;
  const now = health(observed, unready(resources), observedWorkload, outcome, runtimeEnded);
  const status: DeveloperWorkspaceStatus = {
    ...baseStatus,
    ...now,
    ...(evidenceNow?.state === "Failed" && now.phase === "Ready" ? { reason: "EvidenceExportFailed", message: `the runtime has finished; its evidence export failed: ${evidenceNow.message}`.slice(0, 2048) } : {}),
    capacity: capacityStatus(spec.storage, capacity),
    ...usageOf(observed.resources["resource-quota"]),
    ...(outcome ? { outcome } : {}),
    ...(evidenceNow ? { evidence: evidenceNow } : {}),
  };
  return {
    type: "rendered",
    requirements: required.requirements,
    resources,
    conditions: [capacityEnforced(status.capacity!), egressResolved(egress.egress)],
    status,
    warnings,
  };
};
