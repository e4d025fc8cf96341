import { type CapacityDeclaration, capacityStatus, checkCapacity, evaluateCapacity } from "../capacity.js";
import { capacityEnforced, egressResolved } from "../conditions.js";
import { declaredCapabilities, resolveEgress } from "../egress.js";
import type { CompositeRenderer, KubeObject, Observed, Verdict } from "../model.js";
import { type Outcome, outcomeOfJob, recordedOutcome } from "../outcome.js";
import type { Problem } from "../problems.js";
import { beyondProfile, resolveProfile, resolveStorageClass } from "../profile.js";
import { PROVISIONING, unready, withReadiness } from "../readiness.js";
import { RequiredResources } from "../required.js";
import { workspaceLabels, workspaceNamespace } from "../render/labels.js";
import { inCreationOrder, renderNamespaceProfile, workspaceNamespaceLookup } from "../render/namespace-profile.js";
import { keepRunningTemplate } from "../render/running-template.js";
import { renderWorkload } from "../render/workload.js";
import { developerWorkspaceSchema } from "../schema/documents.js";
import { parseDocument } from "../schema/errors.js";
import type { DeveloperWorkspaceStatus } from "../schema/status.js";
import { usageOf } from "../usage.js";
import { fatal, stalled } from "../verdicts.js";
import type { NamespaceProfile } from "../workspace.js";

/** The composition resource name of what runs code: created last (namespace-profile.ts, workloadLast). */
export const DEVELOPER_WORKLOAD = ["workload"];

/** Phase and reason of current health, which is never the same thing as the outcome. */
function health(
  observed: Observed,
  notReady: string[],
  workload: KubeObject | undefined,
  outcome: Outcome | undefined,
): Pick<DeveloperWorkspaceStatus, "phase" | "reason" | "message"> {
  if (observed.composite.metadata?.deletionTimestamp !== undefined) {
    return { phase: "Deleting", reason: "Deleting", message: "the workspace is being deleted" };
  }
  const running = outcomeOfJob(workload);
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

  const profile = resolveProfile(spec.profileRef.name, required);
  if (profile.type !== "found") return stalled(observed, required.requirements, profile, baseStatus);

  const runtime = profile.spec.runtimes.find((r) => r.name === spec.runtime.profile);
  const problem: Problem | undefined =
    beyondProfile({ storage: { field: "spec.storage.size", size: spec.storage.size }, resources: { field: "spec.resources", ...spec.resources } }, profile) ??
    (runtime === undefined ? { type: "invalid", message: `spec.runtime.profile: WorkspaceProfile "${profile.name}" offers no runtime "${spec.runtime.profile}"` } : undefined);
  if (problem) return stalled(observed, required.requirements, problem, baseStatus);

  // Ask for the StorageClass and every destination Service together, so that Crossplane's
  // requirement loop fetches them in one round; then judge them in a fixed order.
  const storageClass = spec.storage.mode === "persistent" ? resolveStorageClass(profile.spec, required) : undefined;
  const egress = resolveEgress(declaredCapabilities(spec.capabilities, "spec.capabilities", spec.credentials), profile, required);
  if (egress.type === "invalid") return stalled(observed, required.requirements, egress, baseStatus);

  let capacity: CapacityDeclaration | undefined;
  if (storageClass !== undefined) {
    if (storageClass.type !== "found") return stalled(observed, required.requirements, storageClass, baseStatus);
    capacity = evaluateCapacity(profile.spec.storage, storageClass.object);
    const refusal = checkCapacity(capacity, spec.lifecycle.deletion === "Retain" ? "spec.lifecycle.deletion" : undefined);
    if (refusal) return stalled(observed, required.requirements, refusal, { ...baseStatus, capacity: capacityStatus(spec.storage, capacity) });
  }
  if (egress.type !== "resolved") return stalled(observed, required.requirements, egress, baseStatus);

  const namespaceProfile: NamespaceProfile = {
    workspaceID: spec.workspaceID,
    namespace,
    labels: workspaceLabels(spec.workspaceID),
    profile: profile.spec,
    resources: spec.resources,
    volume: spec.storage,
    egress: egress.egress,
    kubernetesAccess: spec.capabilities.kubernetes.access,
    userNamespacesRequired: profile.spec.storage.capacityEnforcement === "Runtime",
  };
  const objects = renderNamespaceProfile(namespaceProfile);

  // Once the run has an outcome, a workload that has gone (deleted, or cleaned up after its
  // retention) stays gone: re-creating it would run the agent again.
  const observedWorkload = observed.resources.workload;
  const outcome = recordedOutcome(observed.composite) ?? outcomeOfJob(observedWorkload);
  const warnings: string[] = [];
  if (outcome === undefined || observedWorkload !== undefined) {
    const kept = keepRunningTemplate(renderWorkload(spec, runtime!, namespaceProfile, outcome !== undefined), observedWorkload, "template", "until the workspace is re-created, as a Job's template cannot change");
    objects.workload = kept.workload;
    if (kept.warning) warnings.push(kept.warning);
  }

  const resources = withReadiness(inCreationOrder(objects, observed.resources, required, namespaceNow, DEVELOPER_WORKLOAD), observed.resources);
  const now = health(observed, unready(resources), observedWorkload, outcome);
  const status: DeveloperWorkspaceStatus = {
    ...baseStatus,
    ...now,
    capacity: capacityStatus(spec.storage, capacity),
    ...usageOf(observed.resources["resource-quota"]),
    ...(outcome ? { outcome } : {}),
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
