import { resolveClass } from "../resolve/execution-class.js";
import type { CompositeRenderer, KubeObject, Verdict } from "../model.js";
import { isReady } from "../observe/readiness.js";
import { describeRequirement, RequiredResources } from "../resolve/required.js";
import { workspaceLabels, workspaceNamespace } from "../render/labels.js";
import { renderCheckpointSnapshot } from "../render/snapshots.js";
import { API_VERSION, executionWorkspaceSchema, workspaceCheckpointSchema } from "../schema/documents.js";
import { parseDocument } from "../../contracts/parse-document.js";
import type { WorkspaceCheckpointStatus } from "../schema/status.js";
import { fatal, stalled } from "../respond/verdicts.js";
import { createdBy, namespaceClaim } from "../observe/ownership.js";
import { workspaceNamespaceLookup } from "../render/namespace-profile.js";

type SnapshotStatus = { readyToUse?: boolean; boundVolumeSnapshotContentName?: string; restoreSize?: string | number };

/**
 * WorkspaceCheckpoint: a CSI VolumeSnapshot of an execution workspace's volume (its files,
 * never process memory), with the snapshot's handle recorded in status so that a new
 * workspace in another namespace can restore or fork from it.
 */
export const renderWorkspaceCheckpoint: CompositeRenderer = (observed): Verdict => {
  const required = new RequiredResources(observed);
  const parsed = parseDocument(workspaceCheckpointSchema, observed.composite);
  if (!parsed.ok) return fatal(observed, required.requirements, `invalid document: ${parsed.problems.join("; ")}`);
  const { metadata, spec } = parsed.value;

  const requirement = { apiVersion: API_VERSION, kind: "ExecutionWorkspace", name: spec.workspaceRef.name };
  const workspace = required.needDocument("workspace", requirement, "Workspace", executionWorkspaceSchema, "spec.workspaceRef");
  if (workspace.type !== "found") return stalled(observed, required.requirements, workspace);

  // A checkpoint is of a workspace's own files, for the workspace's own creator: admission records
  // both creators (berth-workspace-owner), and a class user may not snapshot another's volume.
  const source = workspace.document as unknown as KubeObject;
  const takenBy = createdBy(observed.composite);
  const ownedBy = createdBy(source);
  if (takenBy !== ownedBy) {
    const who = (name: string | undefined) => name ?? "no one recorded (an operator or administrator)";
    return stalled(observed, required.requirements, {
      type: "refused",
      reason: "NotTheWorkspacesCreator",
      message: `WorkspaceCheckpoint "${metadata.name}" was created by ${who(takenBy)} and ${describeRequirement(requirement)} by ${who(ownedBy)}: only a workspace's creator checkpoints its files`,
    });
  }
  // The volume snapshotted is the one in the workspace's Namespace, which must be the workspace's:
  // an ExecutionWorkspace named like a DeveloperWorkspace's ID does not make that one's files its own.
  const namespace = workspaceNamespace(spec.workspaceRef.name);
  const namespaceNow = workspaceNamespaceLookup(required, namespace);
  if (namespaceNow.state === "pending") return stalled(observed, required.requirements, { type: "fetching", reason: "WaitingForNamespace", message: `waiting for Namespace "${namespace}"` });
  const taken = namespaceClaim(namespaceNow, source, namespace);
  if (taken) return stalled(observed, required.requirements, taken);

  // Admission checks `use` on the class the checkpoint names; it must be the workspace's own.
  const className = workspace.document.spec.classRef.name;
  if (spec.classRef.name !== className) {
    return fatal(observed, required.requirements, `spec.classRef: ${describeRequirement(requirement)} is of ExecutionWorkspaceClass "${className}", not "${spec.classRef.name}"`);
  }
  // The class the workspace is bound to decides whether its files may be checkpointed.
  const cls = resolveClass(className, required);
  if (cls.type !== "found") return stalled(observed, required.requirements, cls);
  if (!cls.spec.permits.checkpoint) {
    return fatal(observed, required.requirements, `spec.workspaceRef: ExecutionWorkspaceClass "${workspace.document.spec.classRef.name}" of ${describeRequirement(requirement)} does not permit checkpoint`);
  }

  const snapshot = renderCheckpointSnapshot({
    name: metadata.name,
    namespace,
    labels: { ...workspaceLabels(spec.workspaceRef.name), "workspaces.berth.dev/checkpoint": metadata.name },
    ...(spec.volumeSnapshotClassName ? { volumeSnapshotClassName: spec.volumeSnapshotClassName } : {}),
  });

  // Once taken, the snapshot's identity is history: carried forward as recorded.
  const recorded = (observed.composite.status as WorkspaceCheckpointStatus | undefined)?.snapshot;
  const observedSnapshot = observed.resources.snapshot;
  const s = (observedSnapshot?.status ?? {}) as SnapshotStatus;
  let content: KubeObject | undefined;
  if (recorded?.snapshotHandle === undefined && s.boundVolumeSnapshotContentName) {
    const contentRequirement = { apiVersion: "snapshot.storage.k8s.io/v1", kind: "VolumeSnapshotContent", name: s.boundVolumeSnapshotContentName };
    const found = required.get("content", contentRequirement);
    if (found.state === "pending") return stalled(observed, required.requirements, { type: "fetching", reason: "WaitingForSnapshot", message: `waiting for ${describeRequirement(contentRequirement)}` });
    if (found.state === "found") content = found.object;
  }
  const handle = recorded?.snapshotHandle ?? (content?.status as { snapshotHandle?: string } | undefined)?.snapshotHandle;
  const driver = recorded?.driver ?? (content?.spec as { driver?: string } | undefined)?.driver;
  const readyToUse = recorded?.readyToUse === true || (s.readyToUse === true && handle !== undefined && driver !== undefined);
  const restoreSize = recorded?.restoreSize ?? (s.restoreSize !== undefined ? String(s.restoreSize) : undefined);
  const contentName = recorded?.contentName ?? s.boundVolumeSnapshotContentName;
  const status: WorkspaceCheckpointStatus = {
    phase: readyToUse ? "Ready" : "Provisioning",
    reason: readyToUse ? "ReadyToUse" : "TakingSnapshot",
    message: readyToUse ? "the workspace's files are saved and can be restored or forked" : "taking a snapshot of the workspace's files",
    sourceNamespace: namespace,
    snapshot: {
      volumeSnapshotName: metadata.name,
      ...(contentName ? { contentName } : {}),
      ...(handle ? { snapshotHandle: handle } : {}),
      ...(driver ? { driver } : {}),
      ...(restoreSize ? { restoreSize } : {}),
      readyToUse,
    },
  };
  return {
    type: "rendered",
    requirements: required.requirements,
    resources: { snapshot: { object: snapshot, ready: readyToUse || isReady(observedSnapshot) } },
    status,
    warnings: [],
  };
};
