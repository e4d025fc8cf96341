import { DETACHED_AT, EXPIRED_AT, LAST_ACTIVITY, RELEASED_AT, SUSPENDED_AT, SUSPENDED_BY } from "../functions/berth/lifecycle/signals.js";
import { runFunction } from "../functions/berth/function.js";
import { asObserved } from "../functions/berth/tooling/local-render.js";
import type { KubeObject } from "../functions/berth/model.js";
import { type Case, fatalCase, namespaceRequirement, requirement, statusOnlyCase } from "./cases.js";
import {
  CHECKPOINT,
  CHECKPOINT_REQUIRED,
  CLASS_SANDBOX,
  CLASS_SUBSTRATE,
  edited,
  existingBoundary,
  EW_FORK,
  EW_RESTORE,
  EW_SANDBOX,
  EW_SUBSTRATE,
  PROFILE,
  existingNamespace,
  PERSISTENT,
  request,
  SANDBOX_REQUIRED,
  SUBSTRATE_REQUIRED,
} from "./fixtures.js";

// Whole requests and whole responses for execution workspaces, classes and checkpoints, run
// in-process (test/unit/function.test.ts) and over gRPC (test/grpc/grpc.test.ts).

export const CLASS_SANDBOX_HASH = "sha256:50c4c3915f892a5c";

const classRequirement = (name: string) => ({ apiVersion: "workspaces.berth.dev/v1alpha1", kind: "ExecutionWorkspaceClass", matchName: name });
const EW_NAMESPACE = { "workspace-namespace": namespaceRequirement("ws-work-session-42") };

type SandboxCondition = [type: string, status: boolean, reason: string, message: string];

/** A Sandbox at `generation` whose controller wrote `conditions` for `writtenFor` (that generation, unless it has not caught up). */
function reportedSandbox(operatingMode: "Running" | "Suspended", generation: number, conditions: SandboxCondition[], spec: Record<string, unknown> = {}, writtenFor = generation): KubeObject {
  return {
    apiVersion: "agents.x-k8s.io/v1beta1",
    kind: "Sandbox",
    metadata: { name: "workspace", namespace: "ws-work-session-42", generation },
    spec: { operatingMode, ...spec },
    status: {
      conditions: conditions.map(([type, status, reason, message]) => ({ type, status: status ? "True" : "False", reason, message, observedGeneration: writtenFor, lastTransitionTime: "2026-11-29T09:00:00Z" })),
    },
  };
}

/**
 * A Sandbox as agent-sandbox v1.0.1 reports it (controllers/sandbox_controller.go): generation 1
 * while it first runs, 2 once Berth has switched it to Suspended. Running: Ready True once its pod
 * is ready, False while the pod is pending. Suspended: Ready False at once, Suspended True only
 * once the pod is gone (suspendingSandbox is the moment between).
 */
export function observedSandbox(operatingMode: "Running" | "Suspended", ready: boolean): KubeObject {
  if (operatingMode === "Suspended") {
    return reportedSandbox("Suspended", 2, [
      ["Ready", false, "SandboxSuspended", "Sandbox is suspended"],
      ["Suspended", true, "PodTerminated", "Pod has been terminated. Sandbox is suspended"],
    ]);
  }
  return reportedSandbox("Running", 1, [
    ready ? ["Ready", true, "DependenciesReady", "Pod is Ready"] : ["Ready", false, "DependenciesNotReady", "Pod exists with phase: Pending"],
    ["Suspended", false, "NotSuspended", "Sandbox is not suspended"],
  ]);
}

/** Suspended, its pod still being deleted: not Ready at once, Suspended False until the pod is gone. */
export const suspendingSandbox = (): KubeObject =>
  reportedSandbox("Suspended", 2, [
    ["Ready", false, "SandboxSuspended", "Sandbox is suspending"],
    ["Suspended", false, "PodTerminating", "Pod is terminating. Sandbox is suspending"],
  ]);

/**
 * Switched by Berth at generation 4 before the controller caught up. Suspended again right after a
 * resume: what it says is the previous suspension's (generation 2, its pod long gone then).
 * Running again: what it says was written before a suspension it never acted on (generation 1).
 */
export const sandboxNotCaughtUp = (operatingMode: "Running" | "Suspended"): KubeObject =>
  operatingMode === "Suspended"
    ? reportedSandbox("Suspended", 4, [["Ready", false, "SandboxSuspended", "Sandbox is suspended"], ["Suspended", true, "PodTerminated", "Pod has been terminated. Sandbox is suspended"]], {}, 2)
    : reportedSandbox("Running", 4, [["Ready", true, "DependenciesReady", "Pod is Ready"], ["Suspended", false, "NotSuspended", "Sandbox is not suspended"]], {}, 1);

/**
 * The Sandbox running EW_SANDBOX's pod from an older runtime image: what Berth rendered before the
 * profile moved the runtime to another, reported running by its controller.
 */
export function runningFromTheOldImage(): KubeObject {
  const rendered = asObserved(runFunction(request(EW_SANDBOX, { required: SANDBOX_REQUIRED, observed: existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED) }))).runtime!;
  const podTemplate = structuredClone((rendered.spec as { podTemplate: { spec: { containers: { image: string }[] } } }).podTemplate);
  podTemplate.spec.containers[0]!.image = "ghcr.io/example/agent-runtime:0.9.0";
  const running = observedSandbox("Running", true);
  return { ...running, spec: { ...(running.spec as object), podTemplate } };
}

/** Stopped by agent-sandbox at its shutdownTime (policy Retain: the Sandbox stays, its pod goes). */
export const expiredSandbox = (): KubeObject => reportedSandbox("Running", 1, [["Ready", false, "SandboxExpired", "Sandbox has expired"]], { shutdownTime: "2026-12-01T08:00:00Z" });

const VOLUME_SNAPSHOT: KubeObject = {
  apiVersion: "snapshot.storage.k8s.io/v1",
  kind: "VolumeSnapshot",
  metadata: { name: "work-session-42-before-refactor", namespace: "ws-work-session-42" },
  status: { readyToUse: true, boundVolumeSnapshotContentName: "snapcontent-6c1f1a9e", restoreSize: "15Gi" },
};
const VOLUME_SNAPSHOT_CONTENT: KubeObject = {
  apiVersion: "snapshot.storage.k8s.io/v1",
  kind: "VolumeSnapshotContent",
  metadata: { name: "snapcontent-6c1f1a9e" },
  spec: { driver: "pd.csi.storage.gke.io", deletionPolicy: "Delete", source: { volumeHandle: "pvc-1" }, volumeSnapshotRef: { name: "work-session-42-before-refactor", namespace: "ws-work-session-42" } },
  status: { readyToUse: true, snapshotHandle: "projects/example/global/snapshots/snapshot-6c1f1a9e", restoreSize: 16106127360 },
};

/** EW_SANDBOX as Berth's idle rule left it at 09:30, created at 08:00. */
function suspendedByTheIdleRule(annotations: Record<string, string>): KubeObject {
  return edited(EW_SANDBOX, (w) => {
    w.metadata = { ...w.metadata!, creationTimestamp: "2026-12-01T08:00:00Z", annotations: { [SUSPENDED_AT]: "2026-12-01T09:30:00Z", [SUSPENDED_BY]: "IdleTimeout", ...annotations } };
  });
}

/** A workspace created at 08:00 whose session detached at 10:00. */
function detached(w: KubeObject): KubeObject {
  return edited(w, (x) => {
    x.metadata = { ...x.metadata!, creationTimestamp: "2026-12-01T08:00:00Z", annotations: { [LAST_ACTIVITY]: "2026-12-01T09:55:00Z", [DETACHED_AT]: "2026-12-01T10:00:00Z" } };
  });
}

/** A workspace created 25 hours before Berth's MaxLifetime rule expired it (the class allows 24). */
function expiredWorkspace(): KubeObject {
  return edited(EW_SANDBOX, (x) => {
    x.metadata = { ...x.metadata!, creationTimestamp: "2026-11-30T08:00:00Z", annotations: { [EXPIRED_AT]: "2026-12-01T09:00:00Z", [LAST_ACTIVITY]: "2026-12-01T08:59:00Z" } };
  });
}

/** A class that keeps no files, so Berth never suspends its workspaces: Keep by default, Delete permitted. */
export const EPHEMERAL_CLASS = edited(CLASS_SANDBOX, (c: any) => {
  c.metadata.name = "ephemeral-session";
  c.spec.mode = "Ephemeral";
  c.spec.lifecycle.onDetach = { default: "Keep", allowed: ["Keep", "Delete"] };
  c.spec.permits.checkpoint = c.spec.permits.restore = c.spec.permits.fork = false;
});

export const EXECUTION_CASES: Case[] = [
  {
    name: "ClassValidatedAgainstItsProfile",
    reason: "A class is validated against its profile, pins nothing itself, and renders its admission: the permits binding with itself as parameter, and its use role.",
    req: request(CLASS_SANDBOX, { required: { profile: [PROFILE] } }),
    want: { golden: "class-sandbox" },
  },
  fatalCase(
    "ClassMayOnlyOfferReviewedDestinations",
    "A class cannot permit a destination its profile has not reviewed, nor more than the profile allows.",
    request(
      edited(CLASS_SANDBOX, (c) => {
        const permits = (c.spec as { permits: { destinations: string[]; storage: { max: string } } }).permits;
        permits.destinations.push("pastebin");
        permits.storage.max = "500Gi";
      }),
      { required: { profile: [PROFILE] } },
    ),
    { profile: requirement.profile },
    'cannot render ExecutionWorkspaceClass "sandbox-session": spec.permits.destinations[3]: WorkspaceProfile "standard" reviews no destination "pastebin"; spec.permits.storage.max: 500Gi exceeds the maxSize 50Gi of WorkspaceProfile "standard"',
  ),
  {
    name: "SandboxWorkspace",
    reason: "The Namespace profile plus a hardened agent-sandbox Sandbox on Berth's volume, bound to its class.",
    req: request(EW_SANDBOX, { required: SANDBOX_REQUIRED, observed: existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED) }),
    want: { golden: "execution-sandbox" },
  },
  statusOnlyCase(
    "NamespaceOfAnotherWorkspaceIsNotEntered",
    "Issue 44, finding 1: a class user's ExecutionWorkspace named alice-payments finds ws-alice-payments, the Namespace of the operators' DeveloperWorkspace alice-payments-xr. Found by name is not its own: it renders nothing there (no policies widening Alice's egress, no Role bound to her ServiceAccount, no Sandbox mounting her volume) and says whose it is.",
    request(
      edited(EW_SANDBOX, (w) => {
        w.metadata!.name = "alice-payments";
        (w.spec as { sessionRef: { name: string } }).sessionRef.name = "alice-payments";
      }),
      { required: { ...SANDBOX_REQUIRED, "workspace-namespace": [existingNamespace(PERSISTENT)] } },
    ),
    {
      kind: "ExecutionWorkspace",
      status: {
        namespace: "ws-alice-payments",
        phase: "Failed",
        reason: "NamespaceTaken",
        message: 'Namespace "ws-alice-payments" belongs to DeveloperWorkspace "alice-payments-xr": a workspace renders only into the Namespace it creates; choose another name',
      },
      atRest: true,
      reqs: { "workspace-namespace": namespaceRequirement("ws-alice-payments") },
      warnings: ['ExecutionWorkspace "alice-payments": Namespace "ws-alice-payments" belongs to DeveloperWorkspace "alice-payments-xr": a workspace renders only into the Namespace it creates; choose another name'],
    },
  ),
  {
    name: "SandboxWaitsForItsBoundary",
    reason: "Rule 5: the Sandbox, whose controller starts the pod, is created only once the NetworkPolicies, quota and ServiceAccount that bound it exist.",
    req: request(EW_SANDBOX, { required: SANDBOX_REQUIRED, observed: { namespace: existingNamespace(EW_SANDBOX) } }),
    want: { golden: "execution-sandbox-boundary-first" },
  },
  {
    name: "SubstrateWorkspace",
    reason: "A dedicated gVisor WorkerPool and a data-only-snapshot ActorTemplate; what Berth cannot declare is said in status.",
    req: request(EW_SUBSTRATE, { required: SUBSTRATE_REQUIRED, observed: existingBoundary(EW_SUBSTRATE, SUBSTRATE_REQUIRED) }),
    want: { golden: "execution-substrate" },
  },
  {
    name: "SuspendKeepsTheVolume",
    reason: "Suspended maps to the Sandbox's Suspended mode; the volume stays in the desired state.",
    req: request(edited(EW_SANDBOX, (w) => ((w.spec as { desiredState: string }).desiredState = "Suspended")), {
      required: SANDBOX_REQUIRED,
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) },
    }),
    want: { golden: "execution-suspending" },
  },
  {
    name: "SuspendedOnlyOnceThePodIsGone",
    reason: "agent-sandbox says not Ready as soon as the Sandbox is Suspended, while its pod is still being deleted; the workspace says Suspending until the controller says Suspended (the pod gone).",
    req: request(edited(EW_SANDBOX, (w) => ((w.spec as { desiredState: string }).desiredState = "Suspended")), {
      required: SANDBOX_REQUIRED,
      observed: { ...existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED), runtime: suspendingSandbox() },
    }),
    want: { golden: "execution-suspending-pod-terminating" },
  },
  {
    name: "SuspendedWhenTheControllerSaysSoForTheCurrentSpec",
    reason: "Suspended again right after a resume: the Sandbox's Suspended condition is the previous suspension's (written for an older generation), so the new pod may still run: Suspending, not Suspended.",
    req: request(edited(EW_SANDBOX, (w) => ((w.spec as { desiredState: string }).desiredState = "Suspended")), {
      required: SANDBOX_REQUIRED,
      observed: { ...existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED), runtime: sandboxNotCaughtUp("Suspended") },
    }),
    want: { golden: "execution-suspend-not-caught-up" },
  },
  {
    name: "ReadyOnlyForTheSandboxAsItIsNow",
    reason: "Resumed before the controller acted on the suspend or the resume: the Ready it reports was written for an older spec (before the suspend), so the workspace is Resuming, not Ready, and its runtime not ready.",
    req: request(
      edited(EW_SANDBOX, (w) => (w.status = { phase: "Suspended" })),
      { required: SANDBOX_REQUIRED, observed: { ...existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED), runtime: sandboxNotCaughtUp("Running") } },
    ),
    want: { golden: "execution-resume-not-caught-up" },
  },
  {
    name: "RunningSandboxKeepsItsPodTemplate",
    reason: "The profile moved the runtime to a new image under a running workspace: agent-sandbox never changes a running pod, so the Sandbox keeps the template its pod runs (rather than claim one it does not run), and a warning says it applies at the next resume.",
    req: request(EW_SANDBOX, {
      required: SANDBOX_REQUIRED,
      observed: { ...existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED), runtime: runningFromTheOldImage() },
    }),
    want: { golden: "execution-running-keeps-template" },
  },
  {
    name: "IdleRuleSuspendsKeepingTheVolume",
    reason: "Berth's lifecycle Operation suspended the workspace: the Sandbox goes to Suspended, the volume stays, and status names the rule, when it acted and how to resume.",
    req: request(suspendedByTheIdleRule({ [LAST_ACTIVITY]: "2026-12-01T09:00:00Z" }), {
      required: SANDBOX_REQUIRED,
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Suspended", false) },
    }),
    want: { golden: "execution-suspended-when-idle" },
  },
  {
    name: "ActivityAfterTheSuspensionResumes",
    reason: "An activity signal newer than the suspension brings the workspace back: the Sandbox runs again and the phase is Resuming until it is ready.",
    req: request(
      edited(suspendedByTheIdleRule({ [LAST_ACTIVITY]: "2026-12-01T09:45:00Z" }), (w) => (w.status = { phase: "Suspended" })),
      { required: SANDBOX_REQUIRED, observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Suspended", false) } },
    ),
    want: { golden: "execution-resumed-by-activity" },
  },
  {
    name: "SuspensionAnnotationOnAClassThatForbidsItChangesNothing",
    reason: "The composition checks the class again rather than trust an annotation: on an Ephemeral class the runtime keeps running.",
    req: request(edited(suspendedByTheIdleRule({}), (w: any) => (w.spec.classRef.name = "ephemeral-session")), {
      required: { ...SANDBOX_REQUIRED, class: [EPHEMERAL_CLASS] },
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) },
    }),
    want: { golden: "execution-ephemeral-not-suspended" },
  },
  {
    name: "IdleRuleReleasesAnEphemeralWorkspaceWhoseActionIsDelete",
    reason: "Berth's idle rule released a workspace of a class that keeps no files, whose onDetach action is Delete: nothing is rendered, so its runtime and Namespace go.",
    req: request(
      edited(EW_SANDBOX, (w: any) => {
        w.metadata = { ...w.metadata, creationTimestamp: "2026-12-01T08:00:00Z", annotations: { [RELEASED_AT]: "2026-12-01T09:30:00Z" } };
        w.spec.classRef.name = "ephemeral-session";
        w.spec.onDetach = "Delete";
      }),
      { required: { ...SANDBOX_REQUIRED, class: [EPHEMERAL_CLASS] }, observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) } },
    ),
    want: { golden: "execution-released-when-idle" },
  },
  {
    name: "DetachAppliesTheClassDefaultSuspend",
    reason: "The session detached and the class's default onDetach is Suspend: the runtime stops, the volume stays, and status says why and how to resume.",
    req: request(detached(EW_SANDBOX), {
      required: SANDBOX_REQUIRED,
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) },
    }),
    want: { golden: "execution-detached-suspend" },
  },
  {
    name: "DetachWithKeepKeepsItRunning",
    reason: "onDetach Keep (permitted by the class) changes nothing but the record of the detach.",
    req: request(detached(edited(EW_SANDBOX, (w: any) => (w.spec.onDetach = "Keep"))), {
      required: { ...SANDBOX_REQUIRED, class: [edited(CLASS_SANDBOX, (c: any) => (c.spec.lifecycle.onDetach.allowed = ["Suspend", "Delete", "Keep"]))] },
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) },
    }),
    want: { golden: "execution-detached-keep" },
  },
  {
    name: "DetachWithDeleteRemovesEverythingItOwns",
    reason: "onDetach Delete renders nothing, so Crossplane removes the runtime, the Namespace and the volume; the XR stays and says so until GitOps removes it.",
    req: request(detached(edited(EW_SANDBOX, (w: any) => (w.spec.onDetach = "Delete"))), {
      required: SANDBOX_REQUIRED,
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) },
    }),
    want: { golden: "execution-detached-delete" },
  },
  {
    name: "ExpiredRemovesTheRuntimeAndKeepsTheFiles",
    reason: "Past its maximum lifetime (Berth's expiry annotation) with providerResources Delete: the Sandbox is no longer rendered, so Crossplane removes it; the Namespace and the volume stay until the document is deleted.",
    req: request(expiredWorkspace(), {
      required: SANDBOX_REQUIRED,
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) },
    }),
    want: { golden: "execution-expired-delete" },
  },
  {
    name: "ExpiredWithRetainKeepsTheRuntimeStopped",
    reason: "With providerResources Retain the Sandbox stays, suspended: the pod goes, the object and the files stay.",
    req: request(expiredWorkspace(), {
      required: { ...SANDBOX_REQUIRED, class: [edited(CLASS_SANDBOX, (c: any) => (c.spec.lifecycle.deletionPolicy.providerResources = "Retain"))] },
      observed: { namespace: existingNamespace(EW_SANDBOX), runtime: observedSandbox("Running", true) },
    }),
    want: { golden: "execution-expired-retain" },
  },
  {
    name: "ExpiredByTheProviderRemovesTheRuntime",
    reason: "agent-sandbox stopped the runtime at the shutdownTime Berth gave it (the class's maximum lifetime), before Berth's own rule ran: the workspace is Expired at that time and, the class's providerResources being Delete, Berth removes the Sandbox; the files stay.",
    req: request(
      edited(EW_SANDBOX, (x) => (x.metadata = { ...x.metadata!, creationTimestamp: "2026-11-30T08:00:00Z" })),
      { required: SANDBOX_REQUIRED, observed: { ...existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED), runtime: expiredSandbox() } },
    ),
    want: { golden: "execution-expired-by-provider" },
  },
  {
    name: "ExpiryStaysOnceTheSandboxHasGone",
    reason: "The expiry the provider reported is kept in status: once the Sandbox is gone, Berth does not make it again.",
    req: request(
      edited(EW_SANDBOX, (x) => {
        x.metadata = { ...x.metadata!, creationTimestamp: "2026-11-30T08:00:00Z" };
        x.status = { phase: "Expired", lifecycle: { expiredAt: "2026-12-01T08:00:00Z" } };
      }),
      { required: SANDBOX_REQUIRED, observed: (({ runtime: _gone, ...rest }) => rest)(existingBoundary(EW_SANDBOX, SANDBOX_REQUIRED)) },
    ),
    want: { golden: "execution-expired-recorded" },
  },
  {
    name: "RestoreIntoANewWorkspace",
    reason: "A checkpoint is brought into a new namespace through a pre-provisioned, retained VolumeSnapshotContent bound to its handle.",
    req: request(EW_RESTORE, { required: SANDBOX_REQUIRED, observed: existingBoundary(EW_RESTORE, SANDBOX_REQUIRED) }),
    want: { golden: "execution-restore" },
  },
  {
    name: "ForkFromACheckpoint",
    reason: "A fork starts a new lineage from the same files.",
    req: request(EW_FORK, { required: SANDBOX_REQUIRED, observed: existingBoundary(EW_FORK, SANDBOX_REQUIRED) }),
    want: { golden: "execution-fork" },
  },
  {
    name: "CheckpointRecordsTheSnapshotHandle",
    reason: "A ready VolumeSnapshot's content handle and driver are recorded, so other namespaces can restore from it.",
    req: request(CHECKPOINT, {
      required: { ...CHECKPOINT_REQUIRED, content: [VOLUME_SNAPSHOT_CONTENT] },
      observed: { snapshot: VOLUME_SNAPSHOT },
    }),
    want: { golden: "checkpoint-ready" },
  },
  fatalCase(
    "ClassEditedAfterBindingChangesNothing",
    "A class edited after a workspace bound to it must not change that workspace silently: fatal, everything kept.",
    request(edited(EW_SANDBOX, (w) => (w.status = { binding: { name: "sandbox-session", generation: 1, classHash: "sha256:0000000000000000" } })), {
      required: SANDBOX_REQUIRED,
      observed: { runtime: observedSandbox("Running", true) },
    }),
    { ...EW_NAMESPACE, class: classRequirement("sandbox-session") },
    `cannot render ExecutionWorkspace "work-session-42": ExecutionWorkspaceClass "sandbox-session" changed after this workspace was bound to it (bound to sha256:0000000000000000 at generation 1, now ${CLASS_SANDBOX_HASH}); a running workspace is never changed silently: restore the class, or create a new workspace`,
  ),
  fatalCase(
    "ProfileTightenedUnderTheClassRefusesWithoutLoss",
    "The profile is the ceiling even when the class was published under a looser one: a maxSize lowered under a running workspace refuses it, naming the field, and keeps what it has.",
    request(EW_SANDBOX, {
      required: { ...SANDBOX_REQUIRED, profile: [edited(PROFILE, (p: any) => (p.spec.storage.maxSize = "10Gi"))] },
      observed: { runtime: observedSandbox("Running", true) },
    }),
    { ...EW_NAMESPACE, class: classRequirement("sandbox-session"), profile: requirement.profile, "storage-class": requirement.storageClass, "service-ai-gateway-gateway": requirement.gateway },
    'cannot render ExecutionWorkspace "work-session-42": spec.requests.storage.size: 15Gi exceeds the maxSize 10Gi of WorkspaceProfile "standard"',
  ),
  fatalCase(
    "SubstrateClassCannotPermitCheckpoints",
    "Berth's checkpoints are CSI snapshots of a volume a Substrate actor does not mount; such a class is refused rather than faked.",
    request(edited(CLASS_SUBSTRATE, (c) => ((c.spec as { permits: { checkpoint: boolean } }).permits.checkpoint = true)), { required: { profile: [PROFILE] } }),
    {},
    'cannot render ExecutionWorkspaceClass "substrate-session": invalid document: spec.permits: checkpoint, restore and fork are CSI snapshots of the workspace volume, which an Agent Substrate actor does not mount: Substrate\'s own data-only snapshots are taken through its API, which Berth cannot declare',
  ),
];
