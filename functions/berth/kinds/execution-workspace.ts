import { type CapacityDeclaration, capacityStatus, checkCapacity, evaluateCapacity } from "../resolve/capacity.js";
import { capacityEnforced, classBound, egressResolved, suspended } from "../respond/conditions.js";
import { type CapabilityRequest, declaredCapabilities, resolveEgress } from "../resolve/egress.js";
import { gatedDestinations, resolveCaBundles } from "../resolve/evidence.js";
import { resolveClass } from "../resolve/execution-class.js";
import type { CompositeRenderer, DesiredResource, KubeObject, Observed, Verdict } from "../model.js";
import { workspaceLifecycle } from "../lifecycle/state.js";
import { LAST_ACTIVITY, type LifecycleSignals, lifecycleSignals, rfc3339, timeOf } from "../lifecycle/signals.js";
import type { Problem } from "../problems.js";
import { beyondProfile, resolveProfile, resolveStorageClass } from "../resolve/profile.js";
import { PROVISIONING, unready, withReadiness } from "../observe/readiness.js";
import { describeRequirement, RequiredResources } from "../resolve/required.js";
import { workspaceLabels, workspaceNamespace } from "../render/labels.js";
import { MCP_GATE_NAME, mcpServersEnv } from "../render/mcp-gate.js";
import { inferenceEnv } from "../render/inference.js";
import { inCreationOrder, renderNamespaceProfile, workspaceNamespaceLookup } from "../render/namespace-profile.js";
import { keepRunningTemplate } from "../render/running-template.js";
import { renderRuntimeLease, runtimeLeaseEnv } from "../render/runtime-lease.js";
import { renderSandbox } from "../render/sandbox.js";
import { sandboxExpiredAt, sandboxStopped } from "../observe/sandbox-status.js";
import { RESTORE_DATA_SOURCE, renderRestoreSource, type SnapshotSource } from "../render/snapshots.js";
import { renderSubstrate, SUBSTRATE_NOT_DECLARABLE } from "../render/substrate.js";
import type { Capabilities } from "../schema/capabilities.js";
import { API_VERSION, executionWorkspaceSchema } from "../schema/documents.js";
import { parseDocument } from "../../contracts/parse-document.js";
import type { ExecutionWorkspaceClassSpec, ExecutionWorkspaceSpec } from "../schema/execution.js";
import { quantityValue, sumOf } from "../schema/quantity.js";
import type { CapacityStatus, ExecutionWorkspaceStatus, WorkspaceCheckpointStatus } from "../schema/status.js";
import { RUNTIME_ENV } from "../../contracts/runtime-env.js";
import { usageOf } from "../observe/usage.js";
import { fatal, notItsNamespace, stalled } from "../respond/verdicts.js";
import { namespaceClaim } from "../observe/ownership.js";
import type { Binding, NamespaceProfile } from "../workspace.js";

const ACCESS_RANK = { none: 0, read: 1, edit: 2 } as const;
const larger = (a: string, b: string) => (quantityValue(a) >= quantityValue(b) ? a : b);

/** What the workspace gets once its requests are measured against its class. */
interface Grant {
  type: "granted";
  resources: { cpu: string; memory: string };
  size: string;
  capabilities: Capabilities;
  /** The granted capabilities that open egress, with the fields that asked for them. */
  egress: CapabilityRequest[];
  onDetach: string;
}

/**
 * What runs code (the provider's objects, a Sandbox or Substrate's pool and template, and the MCP
 * gate, whose pod holds the MCP credential): created after the boundary.
 */
export const RUNTIME_OBJECTS = ["runtime", "runtime-pool", "runtime-template", MCP_GATE_NAME];

const NO_CAPABILITIES: Capabilities = { mcp: [], registries: [], kubernetes: { access: "none" } };

/**
 * Options the class does not permit are refused before anything is created: every refusal
 * names the option, and all of them are reported at once.
 */
function grant(spec: ExecutionWorkspaceSpec, className: string, cls: ExecutionWorkspaceClassSpec): Grant | Problem {
  const refusals: string[] = [];
  const theClass = `ExecutionWorkspaceClass "${className}"`;
  const permits = cls.permits;
  if (!cls.reuseScopes.includes(spec.reusePolicy)) refusals.push(`spec.reusePolicy: ${theClass} does not permit ${spec.reusePolicy} (permitted: ${cls.reuseScopes.join(", ")})`);
  const onDetach = spec.onDetach ?? cls.lifecycle.onDetach.default;
  if (!cls.lifecycle.onDetach.allowed.includes(onDetach)) refusals.push(`spec.onDetach: ${theClass} does not permit ${onDetach} (permitted: ${cls.lifecycle.onDetach.allowed.join(", ")})`);
  if (spec.desiredState === "Suspended" && cls.mode !== "Durable") refusals.push(`spec.desiredState: ${theClass} does not permit Suspended: its mode ${cls.mode} keeps no files`);
  if (spec.restoreFrom && !permits.restore) refusals.push(`spec.restoreFrom: ${theClass} does not permit restore`);
  if (spec.forkFrom && !permits.fork) refusals.push(`spec.forkFrom: ${theClass} does not permit fork`);

  const resources = { cpu: spec.requests.resources?.cpu ?? permits.resources.default.cpu, memory: spec.requests.resources?.memory ?? permits.resources.default.memory };
  for (const r of ["cpu", "memory"] as const) {
    if (quantityValue(resources[r]) > quantityValue(permits.resources.max[r])) {
      refusals.push(`spec.requests.resources.${r}: ${resources[r]} exceeds what ${theClass} permits (max ${permits.resources.max[r]})`);
    }
  }
  const size = spec.requests.storage?.size ?? permits.storage.default;
  if (quantityValue(size) > quantityValue(permits.storage.max)) refusals.push(`spec.requests.storage.size: ${size} exceeds what ${theClass} permits (max ${permits.storage.max})`);

  const capabilities = spec.requests.capabilities ?? NO_CAPABILITIES;
  const egress = declaredCapabilities(capabilities, "spec.requests.capabilities");
  for (const c of egress) {
    if (!permits.destinations.includes(c.destination)) refusals.push(`${c.field}.destination: ${theClass} does not permit destination "${c.destination}"`);
  }
  const access = capabilities.kubernetes.access;
  if (ACCESS_RANK[access] > ACCESS_RANK[permits.kubernetesAccess]) {
    refusals.push(`spec.requests.capabilities.kubernetes.access: ${access} exceeds what ${theClass} permits (${permits.kubernetesAccess})`);
  }
  // What the runtime's own pods may use counts against the class's ceiling with the workspace's.
  const runtimeMade = capabilities.kubernetes.resources;
  for (const r of ["cpu", "memory"] as const) {
    if (runtimeMade === undefined || quantityValue(resources[r]) > quantityValue(permits.resources.max[r])) continue;
    if (quantityValue(sumOf(r, resources[r], runtimeMade[r])) > quantityValue(permits.resources.max[r])) {
      refusals.push(`spec.requests.capabilities.kubernetes.resources.${r}: ${runtimeMade[r]} beside the workspace's ${resources[r]} exceeds what ${theClass} permits (max ${permits.resources.max[r]})`);
    }
  }
  if (refusals.length > 0) return { type: "invalid", message: refusals.join("; ") };
  return { type: "granted", resources, size, capabilities, egress, onDetach };
}

/** The checkpoint a restore or fork starts from, once its snapshot is ready to use. */
function resolveCheckpoint(name: string, field: string, required: RequiredResources): { type: "found"; source: SnapshotSource; restoreSize?: string; sourceWorkspace?: string } | Problem {
  const requirement = { apiVersion: API_VERSION, kind: "WorkspaceCheckpoint", name };
  const lookup = required.need("checkpoint", requirement, "Checkpoint", field);
  if (lookup.type !== "found") return lookup;
  const status = lookup.object.status as WorkspaceCheckpointStatus | undefined;
  const snapshot = status?.snapshot;
  if (!snapshot?.readyToUse || !snapshot.snapshotHandle || !snapshot.driver) {
    return { type: "waiting", reason: "CheckpointNotReady", message: `${field}: ${describeRequirement(requirement)} is not ready to use yet` };
  }
  const workspace = (lookup.object.spec as { workspaceRef?: { name?: string } } | undefined)?.workspaceRef?.name;
  return {
    type: "found",
    source: { snapshotHandle: snapshot.snapshotHandle, driver: snapshot.driver },
    ...(snapshot.restoreSize ? { restoreSize: snapshot.restoreSize } : {}),
    ...(workspace ? { sourceWorkspace: workspace } : {}),
  };
}

/** A Substrate actor's files are the provider's: Berth declares that it does not bound them. */
function substrateCapacity(size: string): CapacityStatus {
  return {
    mode: "persistent",
    size,
    enforcement: "NotEnforced",
    enforced: false,
    reason: "ProviderManaged",
    message: "the actor's files live in its durable directory and the provider's data-only snapshots; Berth cannot bound their size",
  };
}

/** When the provider must shut the workspace down: its maximum lifetime after creation. */
function shutdownTime(composite: KubeObject, maxLifetimeMinutes: number): string | undefined {
  const created = (composite.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp;
  const at = created === undefined ? Number.NaN : Date.parse(created);
  return Number.isNaN(at) ? undefined : rfc3339(new Date(at + maxLifetimeMinutes * 60_000));
}

/** What the lifecycle rules read and did, for people and tools (the IDLE-SINCE and EXPIRES columns). */
function lifecycleStatus(signals: LifecycleSignals, expiresAt: string | undefined, byRule: LifecycleSignals["suspended"]): Pick<ExecutionWorkspaceStatus, "lifecycle"> {
  const lifecycle = {
    ...(signals.lastActivity ? { lastActivity: rfc3339(signals.lastActivity) } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    ...(byRule ? { suspendedAt: rfc3339(byRule.at), suspendedBy: byRule.rule } : {}),
    ...(signals.detached ? { detachedAt: rfc3339(signals.detached) } : {}),
    ...(signals.expired ? { expiredAt: rfc3339(signals.expired) } : {}),
    ...(signals.released ? { releasedAt: rfc3339(signals.released) } : {}),
  };
  return Object.keys(lifecycle).length > 0 ? { lifecycle } : {};
}

/**
 * The workspace is released: its session detached and its onDetach action is Delete, or it idled
 * on an Ephemeral class whose action is Delete. Nothing is rendered, so Crossplane removes
 * everything the workspace owned, as if its document had been deleted (the class's deletion
 * policy for volumes applies the same way). The XR stays, saying so, until GitOps removes it;
 * activity after the release provisions it afresh.
 */
function released(requirements: Verdict["requirements"], status: ExecutionWorkspaceStatus, signals: LifecycleSignals, expiresAt: string | undefined, cause: { reason: string; message: string }): Verdict {
  return {
    type: "rendered",
    requirements,
    resources: {},
    conditions: [classBound(status.binding!)],
    status: {
      ...status,
      phase: "Released",
      reason: cause.reason,
      message: `${cause.message}: its runtime, Namespace and volume are removed; delete this document, or set the annotation ${LAST_ACTIVITY} to a later time to provision it afresh`,
      ...lifecycleStatus(signals, expiresAt, undefined),
    },
    warnings: [],
  };
}

/**
 * When the workspace expired, by whichever saw it first: Berth's MaxLifetime rule (its
 * annotation), or agent-sandbox, which stops the runtime at the shutdownTime Berth gives it. What
 * the provider reported is kept in status (lifecycle.expiredAt), since its Sandbox may then go.
 */
function withExpiry(signals: LifecycleSignals, observed: Observed): LifecycleSignals {
  const recorded = timeOf((observed.composite.status as ExecutionWorkspaceStatus | undefined)?.lifecycle?.expiredAt);
  const expired = signals.expired ?? recorded ?? sandboxExpiredAt(observed.resources.runtime);
  return expired === undefined ? signals : { ...signals, expired };
}

/**
 * Health in provider-neutral words. For agent-sandbox, suspend is the Sandbox's Suspended
 * operating mode (the pod goes, the volume stays) and resume is a cold boot; the provider's
 * own condition names and reasons are read here and never copied into status.
 */
function sandboxHealth(observed: Observed, desiredState: "Ready" | "Suspended", notReady: string[], byRule?: LifecycleSignals["suspended"]): Pick<ExecutionWorkspaceStatus, "phase" | "reason" | "message"> {
  const sandbox = observed.resources.runtime;
  const wasSuspended = (sandbox?.spec as { operatingMode?: string } | undefined)?.operatingMode === "Suspended";
  if (desiredState === "Suspended") {
    const stopped = sandboxStopped(sandbox);
    if (byRule !== undefined) {
      const acted = byRule.rule === "Detached" ? `the session detached at ${rfc3339(byRule.at)} and the workspace's onDetach action is Suspend` : `Berth's ${byRule.rule} rule suspended the workspace at ${rfc3339(byRule.at)}`;
      const resume = `set the annotation ${LAST_ACTIVITY} to the current time to resume`;
      return stopped
        ? { phase: "Suspended", reason: byRule.rule, message: `${acted}: the runtime is stopped, the files are kept; ${resume}` }
        : { phase: "Suspending", reason: byRule.rule, message: `${acted}: stopping the runtime, the files are kept; ${resume}` };
    }
    return stopped
      ? { phase: "Suspended", reason: "Suspended", message: "the runtime is stopped; the workspace's files are kept" }
      : { phase: "Suspending", reason: "Suspending", message: "stopping the runtime; the workspace's files are kept" };
  }
  if (notReady.length === 0) return { phase: "Ready", reason: "Available", message: "the workspace is running" };
  // Crossplane applies Running at once, so the Sandbox stops saying Suspended long before it is
  // running again: the workspace's own last phase says it is still coming back.
  const lastPhase = (observed.composite.status as ExecutionWorkspaceStatus | undefined)?.phase;
  if (wasSuspended || lastPhase === "Suspended" || lastPhase === "Resuming") {
    return { phase: "Resuming", reason: "Resuming", message: "cold-booting the runtime with fresh credentials" };
  }
  return PROVISIONING;
}

/**
 * ExecutionWorkspace: a sandbox dedicated to one agent Session, in the same Namespace profile
 * as every Berth workspace, bound to the class it was created with.
 */
export const renderExecutionWorkspace: CompositeRenderer = (observed): Verdict => {
  const required = new RequiredResources(observed);
  const parsed = parseDocument(executionWorkspaceSchema, observed.composite);
  if (!parsed.ok) return fatal(observed, required.requirements, `invalid document: ${parsed.problems.join("; ")}`);
  const { metadata, spec } = parsed.value;
  const workspaceID = metadata.name;
  const namespace = workspaceNamespace(workspaceID);
  const namespaceNow = workspaceNamespaceLookup(required, namespace);
  const baseStatus: ExecutionWorkspaceStatus = { namespace };
  const taken = namespaceClaim(namespaceNow, observed.composite, namespace);
  if (taken) return notItsNamespace(observed, required.requirements, taken, baseStatus);

  const cls = resolveClass(spec.classRef.name, required);
  if (cls.type !== "found") return stalled(observed, required.requirements, cls, baseStatus);
  // A class edited after binding must not change a running workspace behind its user's back.
  const pinned = (observed.composite.status as { binding?: Binding } | undefined)?.binding;
  if (pinned !== undefined && pinned.classHash !== cls.binding.classHash) {
    return fatal(
      observed,
      required.requirements,
      `ExecutionWorkspaceClass "${spec.classRef.name}" changed after this workspace was bound to it (bound to ${pinned.classHash}${pinned.generation !== undefined ? ` at generation ${pinned.generation}` : ""}, now ${cls.binding.classHash}); a running workspace is never changed silently: restore the class, or create a new workspace`,
    );
  }
  const binding = pinned ?? cls.binding;
  const status: ExecutionWorkspaceStatus = { ...baseStatus, binding };

  const g = grant(spec, spec.classRef.name, cls.spec);
  if (g.type !== "granted") return stalled(observed, required.requirements, g, status);
  const signals = withExpiry(lifecycleSignals(observed.composite), observed);
  const shutdown = shutdownTime(observed.composite, cls.spec.lifecycle.maxLifetimeMinutes);
  const lifecycle = workspaceLifecycle(signals, spec.classRef.name, cls.spec, spec, g.onDetach);
  if (lifecycle.type === "released") return released(required.requirements, status, signals, shutdown, lifecycle);

  const profile = resolveProfile(cls.spec.profileRef.name, required);
  if (profile.type !== "found") return stalled(observed, required.requirements, profile, status);
  const runtime = profile.spec.runtimes.find((r) => r.name === cls.spec.runtime.profile);
  if (runtime === undefined) {
    return stalled(observed, required.requirements, { type: "invalid", message: `ExecutionWorkspaceClass "${spec.classRef.name}": WorkspaceProfile "${profile.name}" offers no runtime "${cls.spec.runtime.profile}"` }, status);
  }

  const from = spec.restoreFrom ? { ref: spec.restoreFrom, field: "spec.restoreFrom", kind: "Restored" as const } : spec.forkFrom ? { ref: spec.forkFrom, field: "spec.forkFrom", kind: "Forked" as const } : undefined;
  const checkpoint = from ? resolveCheckpoint(from.ref.checkpointRef.name, from.field, required) : undefined;
  // agent-sandbox workspaces keep their files on Berth's volume; a Substrate actor keeps them
  // in its own durable directory, so its namespace holds no volume at all.
  const substrate = cls.spec.provider === "agent-substrate";
  const durable = cls.spec.mode === "Durable" && !substrate;
  const storageClass = durable ? resolveStorageClass(profile.spec, required) : undefined;
  const egress = resolveEgress(g.egress, profile, required);
  if (egress.type === "invalid") return stalled(observed, required.requirements, egress, status);
  const caBundles = resolveCaBundles(gatedDestinations(g.egress), profile, required);
  if (caBundles.type === "invalid") return stalled(observed, required.requirements, caBundles, status);
  if (checkpoint !== undefined && checkpoint.type !== "found") return stalled(observed, required.requirements, checkpoint, status);

  let size = g.size;
  if (checkpoint?.restoreSize !== undefined) {
    size = larger(size, checkpoint.restoreSize);
    if (quantityValue(size) > quantityValue(cls.spec.permits.storage.max)) {
      return stalled(observed, required.requirements, { type: "invalid", message: `${from!.field}: the checkpoint needs ${checkpoint.restoreSize}, more than ExecutionWorkspaceClass "${spec.classRef.name}" permits (max ${cls.spec.permits.storage.max})` }, status);
    }
  }
  // The class was checked against its profile when it was published; the profile may have
  // been tightened since, and it is the ceiling.
  const classDefault = (field: string) => `ExecutionWorkspaceClass "${spec.classRef.name}" ${field}`;
  const ceiling = beyondProfile(
    {
      storage: { field: size !== g.size ? `${from!.field} (the checkpoint's size)` : spec.requests?.storage?.size !== undefined ? "spec.requests.storage.size" : classDefault("spec.permits.storage.default"), size },
      resources: { field: spec.requests?.resources !== undefined ? "spec.requests.resources" : classDefault("spec.permits.resources.default"), ...g.resources },
      runtimeMade: g.capabilities.kubernetes.resources && { field: "spec.requests.capabilities.kubernetes.resources", ...g.capabilities.kubernetes.resources },
    },
    profile,
  );
  if (ceiling) return stalled(observed, required.requirements, ceiling, status);
  const volume = { mode: durable ? ("persistent" as const) : ("ephemeral" as const), size, ...(checkpoint ? { dataSource: RESTORE_DATA_SOURCE } : {}) };
  let capacity: CapacityDeclaration | undefined;
  if (storageClass !== undefined) {
    if (storageClass.type !== "found") return stalled(observed, required.requirements, storageClass, status);
    capacity = evaluateCapacity(profile.spec.storage, storageClass.object);
    const retain = cls.spec.lifecycle.deletionPolicy.volumes === "Retain" ? `ExecutionWorkspaceClass "${spec.classRef.name}" spec.lifecycle.deletionPolicy.volumes` : undefined;
    const refusal = checkCapacity(capacity, retain);
    if (refusal) return stalled(observed, required.requirements, refusal, { ...status, capacity: capacityStatus(volume, capacity) });
  }
  if (egress.type !== "resolved") return stalled(observed, required.requirements, egress, status);
  if (caBundles.type !== "resolved") return stalled(observed, required.requirements, caBundles, status);

  const labels = { ...workspaceLabels(workspaceID), "workspaces.berth.dev/session": spec.sessionRef.name };
  const namespaceProfile: NamespaceProfile = {
    workspaceID,
    namespace,
    labels,
    profile: profile.spec,
    resources: g.resources,
    volume,
    egress: egress.egress,
    kubernetesAccess: g.capabilities.kubernetes.access,
    ...(g.capabilities.kubernetes.resources ? { runtimeMade: g.capabilities.kubernetes.resources } : {}),
    ...(cls.spec.provider === "agent-sandbox" && cls.spec.agentSandbox?.runtimeClassName ? { runtimeClassName: cls.spec.agentSandbox.runtimeClassName } : {}),
    userNamespacesRequired: profile.spec.storage.capacityEnforcement === "Runtime",
    ...(caBundles.bundles.length > 0 ? { caBundles: caBundles.bundles } : {}),
  };
  const objects = renderNamespaceProfile(namespaceProfile);
  if (checkpoint) Object.assign(objects, renderRestoreSource(namespaceProfile, checkpoint.source));
  const env = [
    { name: RUNTIME_ENV.workspaceID, value: workspaceID },
    { name: RUNTIME_ENV.session, value: spec.sessionRef.name },
    { name: RUNTIME_ENV.idleTimeoutMinutes, value: String(cls.spec.lifecycle.idleTimeoutMinutes) },
    { name: RUNTIME_ENV.onDetach, value: g.onDetach },
    ...inferenceEnv(namespaceProfile),
    ...mcpServersEnv(g.capabilities.mcp, namespaceProfile),
    ...runtimeLeaseEnv(namespaceProfile),
  ];
  // Past its maximum lifetime the runtime goes as the class's deletionPolicy.providerResources
  // says (Delete: not rendered, so Crossplane removes it; Retain: kept, stopped), and the
  // Namespace and volume stay until the document is deleted, so no file is lost to a clock.
  const { desiredState, byRule, expired, keepRuntime } = lifecycle;
  // While the runtime may run, its lease: what the runtime made goes with a suspend or expiry.
  if (keepRuntime && desiredState === "Ready" && expired === undefined) Object.assign(objects, renderRuntimeLease(namespaceProfile));
  const warnings: string[] = [];
  if (!keepRuntime) {
    // Nothing of the provider's is rendered.
  } else if (cls.spec.provider === "agent-sandbox") {
    const operatingMode = desiredState === "Suspended" ? "Suspended" : "Running";
    const sandbox = renderSandbox(namespaceProfile, {
      runtime,
      ...(namespaceProfile.runtimeClassName ? { runtimeClassName: namespaceProfile.runtimeClassName } : {}),
      operatingMode,
      ...(shutdown ? { shutdownTime: shutdown } : {}),
      env,
    });
    // A Sandbox that runs and stays running keeps the template its pod was made from; a new one
    // reaches the pod a resume makes.
    const running = observed.resources.runtime;
    const runs = operatingMode === "Running" && (running?.spec as { operatingMode?: string } | undefined)?.operatingMode === "Running";
    const kept = keepRunningTemplate(sandbox, runs ? running : undefined, "podTemplate", "until the workspace next resumes from Suspended, as agent-sandbox never changes a running pod");
    objects.runtime = kept.workload;
    if (kept.warning) warnings.push(kept.warning);
  } else {
    Object.assign(objects, renderSubstrate(namespaceProfile, cls.spec.agentSubstrate!, runtime, env));
  }

  const resources: Record<string, DesiredResource> = withReadiness(inCreationOrder(observed.composite, objects, observed.resources, required, namespaceNow, RUNTIME_OBJECTS), observed.resources);
  // A suspended sandbox is converged when it is stopped, not when it is running.
  if (resources.runtime && desiredState === "Suspended") resources.runtime.ready = sandboxStopped(observed.resources.runtime);
  const notReady = unready(resources);
  const deleting = observed.composite.metadata?.deletionTimestamp !== undefined;
  const health = deleting
    ? { phase: "Deleting" as const, reason: "Deleting", message: "the workspace is being deleted" }
    : expired !== undefined
      ? {
          phase: "Expired" as const,
          reason: "MaxLifetime",
          message: `the workspace reached its maximum lifetime at ${rfc3339(expired)} (ExecutionWorkspaceClass "${spec.classRef.name}" lifecycle.maxLifetimeMinutes ${cls.spec.lifecycle.maxLifetimeMinutes}): its runtime is ${keepRuntime ? "stopped and kept" : "removed"}; its files are kept until this document is deleted`,
        }
      : cls.spec.provider === "agent-sandbox"
      ? sandboxHealth(observed, desiredState, notReady, byRule)
      : notReady.length > 0
        ? PROVISIONING
        : spec.desiredState === "Suspended"
          ? { phase: "Ready" as const, reason: "SuspendNotDeclarable", message: "suspending this workspace is a call to the provider's API, which Berth cannot declare" }
          : { phase: "Ready" as const, reason: "Available", message: "the worker pool and actor template are ready" };
  const capacityNow = substrate ? substrateCapacity(size) : capacityStatus(volume, capacity);
  return {
    type: "rendered",
    requirements: required.requirements,
    resources,
    conditions: [
      classBound(binding),
      capacityEnforced(capacityNow),
      egressResolved(egress.egress),
      // Agent Substrate suspends through its own API: Berth does not claim to know.
      ...(substrate || expired !== undefined ? [] : [suspended(desiredState, byRule)]),
    ],
    status: {
      ...status,
      ...health,
      capacity: capacityNow,
      ...usageOf(observed.resources["resource-quota"]),
      ...lifecycleStatus(signals, shutdown, byRule),
      ...(from && checkpoint ? { lineage: { kind: from.kind, checkpoint: from.ref.checkpointRef.name, ...(checkpoint.sourceWorkspace ? { sourceWorkspace: checkpoint.sourceWorkspace } : {}) } } : {}),
      ...(cls.spec.provider === "agent-substrate" ? { notDeclarable: SUBSTRATE_NOT_DECLARABLE } : {}),
    },
    warnings,
  };
};

