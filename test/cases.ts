import { existsSync, readFileSync } from "node:fs";
import { Ready, type ResourceSelector, type RunFunctionRequest, type RunFunctionResponse, Severity } from "@crossplane-org/function-sdk-typescript";
import { parse } from "yaml";
import type { KubeObject } from "../functions/berth/model.js";
import { ALL_REQUIRED, boundaryAsRequired, EPHEMERAL, edited, existingBoundary, existingNamespace, PERSISTENT, PROFILE, REVIEW, request, STORAGE_CLASS } from "./fixtures.js";

/**
 * The table of whole requests and whole expected responses, shared by the in-process tests
 * and the gRPC tests so that every rule is proven both ways. Responses too large to write
 * inline (a full workspace's dozen objects) live in test/golden/ as reviewed YAML.
 */
export interface Case {
  name: string;
  reason: string;
  req: RunFunctionRequest;
  /** The whole expected response, or the name of its reviewed file in test/golden/. */
  want: RunFunctionResponse | { golden: string };
}

/** Berth's response TTLs (functions/berth/respond/ttl.ts): short while a workspace moves, long once it has settled. */
export const TTL = { seconds: 60, nanos: 0 };
export const AT_REST_TTL = { seconds: 900, nanos: 0 };
export const meta = { tag: "test", ttl: TTL };
const metaAtRest = { tag: "test", ttl: AT_REST_TTL };

export const requirement = {
  profile: { apiVersion: "workspaces.berth.dev/v1alpha1", kind: "WorkspaceProfile", matchName: "standard" },
  storageClass: { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", matchName: "xfs-quota" },
  gateway: { apiVersion: "v1", kind: "Service", matchName: "gateway", namespace: "ai-gateway" },
  docs: { apiVersion: "v1", kind: "Service", matchName: "docs", namespace: "mcp" },
};
/** Every workspace asks for its own Namespace, first (namespace-profile.ts, workspaceNamespaceLookup). */
export const namespaceRequirement = (name: string) => ({ apiVersion: "v1", kind: "Namespace", matchName: name });
const DW_NAMESPACE = { "workspace-namespace": namespaceRequirement("ws-alice-payments") };
const ALL_REQUIREMENTS = {
  ...DW_NAMESPACE,
  profile: requirement.profile,
  "storage-class": requirement.storageClass,
  "service-ai-gateway-gateway": requirement.gateway,
  "service-mcp-docs": requirement.docs,
};
export const requirements = (resources: Record<string, ResourceSelector>) => ({ extraResources: {}, resources, schemas: {} });

export function composite(kind: string, status: Record<string, unknown>, ready = Ready.READY_FALSE) {
  return { resource: { apiVersion: "workspaces.berth.dev/v1alpha1", kind, status }, connectionDetails: {}, ready };
}

export const fatalResult = (message: string) => ({ severity: Severity.SEVERITY_FATAL, message });
export const warningResult = (message: string) => ({ severity: Severity.SEVERITY_WARNING, message });

/** Observed objects as a cluster would report them: the rendered object, plus status. */
export const OBSERVED_NAMESPACE: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: "ws-alice-payments" }, status: { phase: "Active" } };
export const OBSERVED_VOLUME: KubeObject = {
  apiVersion: "v1",
  kind: "PersistentVolumeClaim",
  metadata: { name: "workspace", namespace: "ws-alice-payments" },
  status: { phase: "Bound" },
};

/** The persistent example's quota as the quota controller counts it: its Job running, its volume bound. */
const COUNTED_QUOTA: KubeObject = {
  apiVersion: "v1",
  kind: "ResourceQuota",
  metadata: { name: "workspace", namespace: "ws-alice-payments" },
  status: {
    hard: { "limits.cpu": "2", "limits.memory": "4Gi", "requests.cpu": "2", "requests.memory": "4Gi", "requests.storage": "20Gi", persistentvolumeclaims: "1", pods: "4" },
    used: { "limits.cpu": "1500m", "limits.memory": "3Gi", "requests.cpu": "1500m", "requests.memory": "3Gi", "requests.storage": "20Gi", persistentvolumeclaims: "1", pods: "1" },
  },
};

/**
 * A case whose answer is fatal. The desired state in the response is exactly the one in the
 * request, so Crossplane changes nothing: no object is applied and none is deleted.
 */
export function fatalCase(name: string, reason: string, req: RunFunctionRequest, reqs: Record<string, ResourceSelector>, message: string): Case {
  return {
    name,
    reason,
    req,
    want: {
      conditions: [],
      context: undefined,
      desired: structuredClone(req.desired) ?? { composite: undefined, resources: {} },
      meta,
      requirements: requirements(reqs),
      results: [fatalResult(message)],
    },
  };
}

/**
 * A case whose answer renders no composed resource, only the XR's status: a workspace that
 * is waiting or refused while it owns nothing, or a profile.
 */
export function statusOnlyCase(
  name: string,
  reason: string,
  req: RunFunctionRequest,
  want: { kind: string; status: Record<string, unknown>; reqs: Record<string, ResourceSelector>; warnings: string[]; ready?: Ready; atRest?: boolean },
): Case {
  return {
    name,
    reason,
    req,
    want: {
      conditions: [],
      context: undefined,
      desired: { composite: composite(want.kind, want.status, want.ready ?? Ready.READY_FALSE), resources: {} },
      meta: want.atRest ? metaAtRest : meta,
      requirements: requirements(want.reqs),
      results: want.warnings.map(warningResult),
    },
  };
}

export const GOLDEN_DIR = "test/golden";

export const goldenPath = (name: string) => `${GOLDEN_DIR}/${name}.yaml`;

/** The whole expected response of a case, as JSON (what a response looks like on the wire). */
export function expected(c: Case): unknown {
  if (!("golden" in c.want)) return JSON.parse(JSON.stringify(c.want));
  const path = goldenPath(c.want.golden);
  if (!existsSync(path)) throw new Error(`${path} is missing: run UPDATE_GOLDEN=1 npx vitest run test/unit/function.test.ts and review it`);
  return parse(readFileSync(path, "utf8"));
}

// The example profile's fingerprint; it changes only when the profile's spec does.
const PROFILE_HASH = "sha256:4590ec6027e100ff";

const OWNED = { namespace: OBSERVED_NAMESPACE, volume: OBSERVED_VOLUME };

/** The ephemeral example's Job, finished with a failure. */
const FAILED_JOB: KubeObject = {
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: "workspace", namespace: "ws-agent-fix-1234" },
  status: {
    failed: 1,
    conditions: [
      {
        type: "Failed",
        status: "True",
        reason: "BackoffLimitExceeded",
        message: "Job has reached the specified backoff limit",
        lastTransitionTime: "2026-11-02T09:00:00Z",
      },
    ],
  },
};
const RECORDED = { outcome: { result: "Succeeded", reason: "Completed", finishedAt: "2026-11-01T10:00:00Z" } };

/**
 * The ephemeral example's Job as it was created (the reviewed golden's), running, and a profile
 * whose codex runtime (the one it runs) has since moved to a new image.
 */
const STARTED_JOB: KubeObject = {
  ...(parse(readFileSync(goldenPath("ephemeral"), "utf8")).desired.resources.workload.resource as KubeObject),
  status: { active: 1, ready: 1 },
};
const PROFILE_WITH_NEW_IMAGE = edited(PROFILE, (p: any) => (p.spec.runtimes.find((r: any) => r.name === "codex").image = "registry.example.com/berth/runtime-codex:0.2.0"));

/** What a workspace says while Crossplane has not yet fetched its profile. */
const WAITING_FOR_PROFILE = {
  kind: "DeveloperWorkspace",
  status: {
    namespace: "ws-alice-payments",
    profile: "standard",
    phase: "Pending",
    reason: "WaitingForProfile",
    message: 'waiting for WorkspaceProfile "standard"',
  },
  reqs: { ...DW_NAMESPACE, profile: requirement.profile },
  warnings: ['DeveloperWorkspace "alice-payments-xr": waiting for WorkspaceProfile "standard"'],
};

export const CASES: Case[] = [
  statusOnlyCase(
    "WaitingForProfile",
    "A new workspace first asks Crossplane for its profile and says in status that it is waiting.",
    request(PERSISTENT),
    WAITING_FOR_PROFILE,
  ),
  statusOnlyCase(
    "FetchingIsNeverFatal",
    "A workspace that owns objects, called before Crossplane has fetched its profile (after a restart), asks for it without a fatal result: a fatal result would stop Crossplane's requirement loop before the fetch. Crossplane calls again and discards this answer.",
    request(PERSISTENT, { observed: OWNED }),
    WAITING_FOR_PROFILE,
  ),
  statusOnlyCase(
    "ProfileNotFoundOwnsNothing",
    "A workspace whose profile does not exist, and which owns nothing yet, is Pending with the reason.",
    request(PERSISTENT, { required: { profile: [] } }),
    {
      kind: "DeveloperWorkspace",
      status: {
        namespace: "ws-alice-payments",
        profile: "standard",
        phase: "Pending",
        reason: "ProfileNotFound",
        message: 'WorkspaceProfile "standard" not found',
      },
      reqs: { ...DW_NAMESPACE, profile: requirement.profile },
      warnings: ['DeveloperWorkspace "alice-payments-xr": WorkspaceProfile "standard" not found'],
    },
  ),
  fatalCase(
    "ProfileNotFoundKeepsExistingObjects",
    "Rule 7: once a workspace owns objects, a missing profile is fatal so that Crossplane deletes nothing (an empty desired state would delete the volume).",
    request(PERSISTENT, { required: { profile: [] }, observed: OWNED }),
    { ...DW_NAMESPACE, profile: requirement.profile },
    'cannot render DeveloperWorkspace "alice-payments-xr": WorkspaceProfile "standard" not found; keeping its 2 existing objects unchanged',
  ),
  fatalCase(
    "NameMustBeWorkspaceIDDashXR",
    "Rule 1: metadata.name must be <workspaceID>-xr.",
    request(
      edited(PERSISTENT, (w) => (w.metadata!.name = "alice-xr")),
      { required: ALL_REQUIRED },
    ),
    {},
    'cannot render DeveloperWorkspace "alice-xr": invalid document: metadata.name: must be "alice-payments-xr" (<spec.workspaceID>-xr)',
  ),
  fatalCase(
    "UnknownDestinationRefused",
    "Rule 5: a capability may only name a destination the profile reviewed; nothing is rendered.",
    request(
      edited(PERSISTENT, (w) => ((w.spec as { capabilities: { registries: object[] } }).capabilities.registries = [{ destination: "pastebin" }])),
      { required: ALL_REQUIRED },
    ),
    ALL_REQUIREMENTS,
    'cannot render DeveloperWorkspace "alice-payments-xr": spec.capabilities.registries[0].destination: WorkspaceProfile "standard" reviews no destination "pastebin"',
  ),
  statusOnlyCase(
    "LocalPathRefusedForPersistentCapacity",
    "Rule 4: local-path sizes volumes at admission only; a persistent workspace on it is refused with the reason, and nothing is rendered.",
    request(PERSISTENT, {
      required: { ...ALL_REQUIRED, "storage-class": [{ ...STORAGE_CLASS, provisioner: "rancher.io/local-path" }] },
    }),
    {
      kind: "DeveloperWorkspace",
      status: {
        namespace: "ws-alice-payments",
        profile: "standard",
        capacity: {
          mode: "persistent",
          size: "20Gi",
          storageClassName: "xfs-quota",
          provisioner: "rancher.io/local-path",
          declared: "Runtime",
          enforcement: "NotEnforced",
          enforced: false,
          reason: "AdmissionOnlyProvisioner",
          message:
            'StorageClass "xfs-quota" uses rancher.io/local-path, which sizes volumes at admission only: it is not a conforming persistent-capacity backend',
        },
        phase: "Failed",
        reason: "CapacityNotEnforced",
        message:
          'persistent storage refused: StorageClass "xfs-quota" uses rancher.io/local-path, which sizes volumes at admission only: it is not a conforming persistent-capacity backend',
      },
      atRest: true,
      reqs: ALL_REQUIREMENTS,
      warnings: [
        'DeveloperWorkspace "alice-payments-xr": persistent storage refused: StorageClass "xfs-quota" uses rancher.io/local-path, which sizes volumes at admission only: it is not a conforming persistent-capacity backend',
      ],
    },
  ),
  statusOnlyCase(
    "CapacityNotDeclaredRefusedForPersistent",
    "Rule 4: the operator's declaration of runtime enforcement is the acceptance gate; without it persistent storage is refused.",
    request(PERSISTENT, {
      required: {
        ...ALL_REQUIRED,
        profile: [edited(PROFILE, (p) => ((p.spec as { storage: { capacityEnforcement: string } }).storage.capacityEnforcement = "AdmissionOnly"))],
      },
    }),
    {
      kind: "DeveloperWorkspace",
      status: {
        namespace: "ws-alice-payments",
        profile: "standard",
        capacity: {
          mode: "persistent",
          size: "20Gi",
          storageClassName: "xfs-quota",
          provisioner: "ok-storage.example.com/local-quota",
          declared: "AdmissionOnly",
          enforcement: "NotEnforced",
          enforced: false,
          reason: "RuntimeEnforcementNotDeclared",
          message: "the profile declares capacityEnforcement AdmissionOnly; persistent workspaces need Runtime",
        },
        phase: "Failed",
        reason: "CapacityNotEnforced",
        message: "persistent storage refused: the profile declares capacityEnforcement AdmissionOnly; persistent workspaces need Runtime",
      },
      atRest: true,
      reqs: ALL_REQUIREMENTS,
      warnings: [
        'DeveloperWorkspace "alice-payments-xr": persistent storage refused: the profile declares capacityEnforcement AdmissionOnly; persistent workspaces need Runtime',
      ],
    },
  ),
  fatalCase(
    "LocalPathRefusalKeepsExistingObjects",
    "Rules 4 and 7: a profile moved onto local-path under a running workspace is refused without deleting its volume.",
    request(PERSISTENT, {
      required: { ...ALL_REQUIRED, "storage-class": [{ ...STORAGE_CLASS, provisioner: "rancher.io/local-path" }] },
      observed: OWNED,
    }),
    ALL_REQUIREMENTS,
    'cannot render DeveloperWorkspace "alice-payments-xr": persistent storage refused: StorageClass "xfs-quota" uses rancher.io/local-path, which sizes volumes at admission only: it is not a conforming persistent-capacity backend; keeping its 2 existing objects unchanged',
  ),
  // Issue 44: the ways around the boundary a workspace's author had (all in test/unit/boundary.test.ts as plain calls).
  fatalCase(
    "GatedDestinationHasNoSideDoor",
    "A destination whose tools the workspace declares is reached through the MCP gate alone: a second, ungated capability to it would open the runtime's own egress to the server the gate guards.",
    request(
      edited(PERSISTENT, (w) => (w.spec as { capabilities: { mcp: unknown[] } }).capabilities.mcp.push({ name: "raw", destination: "docs-mcp" })),
      { required: ALL_REQUIRED },
    ),
    ALL_REQUIREMENTS,
    'cannot render DeveloperWorkspace "alice-payments-xr": spec.capabilities.mcp[1].destination: "docs-mcp" is reached only through the MCP gate (spec.capabilities.mcp[0] declares its tools), so nothing reaches it directly; declare the tools here too, or remove one of them',
  ),
  fatalCase(
    "CredentialCannotSetBerthsOwnVariables",
    "A credential reaches the runtime as BERTH_<PURPOSE>_<NAME>; one named servers, of purpose mcp, would replace BERTH_MCP_SERVERS and point the runtime at servers of the author's choosing.",
    request(
      edited(PERSISTENT, (w) => (w.spec as { credentials: unknown[] }).credentials.push({ name: "servers", purpose: "mcp", secretRef: { name: "x", key: "token" } })),
      { required: ALL_REQUIRED },
    ),
    {},
    'cannot render DeveloperWorkspace "alice-payments-xr": invalid document: spec.credentials[4].name: "servers" would set BERTH_MCP_SERVERS in the runtime, a variable Berth sets itself; choose another name',
  ),
  {
    name: "NamespaceFirst",
    reason: "Crossplane applies desired objects in no set order and stops at the first failure, so the first reconcile asks only for the Namespace; everything else follows once it exists.",
    req: request(PERSISTENT, { required: ALL_REQUIRED }),
    want: { golden: "persistent-first-reconcile" },
  },
  {
    name: "NamespaceFoundAsRequiredRendersTheBoundary",
    reason:
      "The Namespace exists but is not observed as composed: Crossplane reads composed objects through the XR's resourceRefs in its cache of XRs, which lags when the API server closes that watch under load. Fetched as a required resource it counts, and the workspace's boundary is rendered rather than the Namespace alone again.",
    req: request(PERSISTENT, { required: { ...ALL_REQUIRED, "workspace-namespace": [existingNamespace(PERSISTENT)] } }),
    want: { golden: "persistent-namespace-found" },
  },
  {
    name: "NamespaceBeingDeletedIsNotThere",
    reason: "A Namespace being deleted accepts no new object: the workspace asks for its Namespace alone, as on its first reconcile.",
    req: request(PERSISTENT, { required: { ...ALL_REQUIRED, "workspace-namespace": [edited(existingNamespace(PERSISTENT), (n) => (n.metadata!.deletionTimestamp = "2026-12-03T12:00:00Z"))] } }),
    want: { golden: "persistent-first-reconcile" },
  },
  {
    name: "WorkloadWaitsForItsBoundary",
    reason:
      "Rule 5: the Job is not created in the same pass as the NetworkPolicies, quota and ServiceAccount that bound it (Crossplane applies a pass in no set order, so its pod could start unbounded, or with egress denied to its checkout); it follows once they all exist.",
    req: request(EPHEMERAL, { required: ALL_REQUIRED, observed: { namespace: existingNamespace(EPHEMERAL) } }),
    want: { golden: "ephemeral-boundary-first" },
  },
  {
    name: "WorkloadFollowsItsBoundaryFoundAsRequired",
    reason:
      "Rule 5, under load: every boundary object exists but the reconcile does not observe them as composed (Crossplane reads composed objects through its cached XR's resourceRefs, which lag when the API server closes that watch). Fetched as required resources they count, and the Job is created instead of waiting another reconcile.",
    req: request(EPHEMERAL, { required: { ...ALL_REQUIRED, ...boundaryAsRequired(EPHEMERAL, ALL_REQUIRED) }, observed: { namespace: existingNamespace(EPHEMERAL) } }),
    want: { golden: "ephemeral-boundary-found-as-required" },
  },
  {
    name: "WorkloadWaitsWhileOneBoundaryObjectIsMissing",
    reason: "Rule 5: with default-deny neither observed nor found, the Job waits, exactly as when none of its boundary exists.",
    req: request(EPHEMERAL, {
      required: { ...ALL_REQUIRED, ...boundaryAsRequired(EPHEMERAL, ALL_REQUIRED, ["network-policy-default-deny"]) },
      observed: { namespace: existingNamespace(EPHEMERAL) },
    }),
    want: { golden: "ephemeral-boundary-first" },
  },
  {
    name: "ResourceUseIsReadFromTheQuota",
    reason:
      "Operators see what each workspace uses of its budget with kubectl get (CPU, MEMORY, STORAGE): status.usage is its ResourceQuota's own count, used against hard, for the limits, the volume and pods.",
    req: request(PERSISTENT, { required: ALL_REQUIRED, observed: { ...existingBoundary(PERSISTENT, ALL_REQUIRED), "resource-quota": COUNTED_QUOTA } }),
    want: { golden: "resource-use-from-quota" },
  },
  {
    name: "PersistentWorkspace",
    reason: "The full Namespace profile, volume and runtime for the persistent example, nothing observed yet.",
    req: request(PERSISTENT, { required: ALL_REQUIRED, observed: existingBoundary(PERSISTENT, ALL_REQUIRED) }),
    want: { golden: "persistent" },
  },
  {
    name: "EphemeralWorkspace",
    reason: "An ephemeral workspace has no claim and no storage quota, and reads no StorageClass.",
    req: request(EPHEMERAL, { required: ALL_REQUIRED, observed: existingBoundary(EPHEMERAL, ALL_REQUIRED) }),
    want: { golden: "ephemeral" },
  },
  {
    name: "ReviewWorkspaceWithKubernetesRead",
    reason: "Rule 5: RBAC and a projected token exist only because the document declares kubernetes access.",
    req: request(REVIEW, { required: ALL_REQUIRED, observed: existingBoundary(REVIEW, ALL_REQUIRED) }),
    want: { golden: "review" },
  },
  {
    name: "RunningJobKeepsItsPodTemplate",
    reason:
      "Nothing lost: a Job's pod template cannot change, so a profile edit (a new runtime image) leaves the running Job's template as it started, with a warning naming what was not applied, instead of failing every reconcile.",
    req: request(EPHEMERAL, {
      required: { ...ALL_REQUIRED, profile: [PROFILE_WITH_NEW_IMAGE] },
      observed: { namespace: existingNamespace(EPHEMERAL), workload: STARTED_JOB },
    }),
    want: { golden: "running-job-keeps-template" },
  },
  {
    name: "OutcomeIsNeverRewritten",
    reason:
      "Rule 6: a recorded Succeeded outcome is carried forward unchanged although the Job now reports a failure; current health (phase Failed) says that separately.",
    req: request(
      edited(EPHEMERAL, (w) => (w.status = RECORDED)),
      { required: ALL_REQUIRED, observed: { namespace: existingNamespace(EPHEMERAL), workload: FAILED_JOB } },
    ),
    want: { golden: "outcome-carried-forward" },
  },
  {
    name: "FinishedWorkloadIsNotRecreated",
    reason: "Rule 6: once the outcome is recorded, a workload that is gone (deleted or cleaned up) is not rendered again, which would re-run the agent.",
    req: request(
      edited(EPHEMERAL, (w) => (w.status = RECORDED)),
      { required: ALL_REQUIRED, observed: { namespace: existingNamespace(EPHEMERAL) } },
    ),
    want: { golden: "outcome-workload-gone" },
  },
  {
    name: "OutcomeRecordedFromFinishedJob",
    reason:
      "Rule 6: the first time the Job is seen finished, its outcome is recorded in provider-neutral words, and the Job is kept suspended: re-created by a reconcile racing its deletion, it starts no pod.",
    req: request(EPHEMERAL, { required: ALL_REQUIRED, observed: { namespace: existingNamespace(EPHEMERAL), workload: FAILED_JOB } }),
    want: { golden: "outcome-recorded" },
  },
  statusOnlyCase(
    "WorkspaceProfileOnLocalPathSaysSo",
    "Rule 4: a profile whose StorageClass is local-path says in its status that it is not a conforming persistent-capacity backend.",
    request(PROFILE, { required: { "storage-class": [{ ...STORAGE_CLASS, provisioner: "rancher.io/local-path" }] } }),
    {
      kind: "WorkspaceProfile",
      status: {
        phase: "Ready",
        reason: "Validated",
        message:
          'profile is valid; persistent workspaces are refused: StorageClass "xfs-quota" uses rancher.io/local-path, which sizes volumes at admission only: it is not a conforming persistent-capacity backend',
        profileHash: PROFILE_HASH,
        capacity: {
          storageClassName: "xfs-quota",
          provisioner: "rancher.io/local-path",
          declared: "Runtime",
          conforming: false,
          reason: "AdmissionOnlyProvisioner",
          message:
            'StorageClass "xfs-quota" uses rancher.io/local-path, which sizes volumes at admission only: it is not a conforming persistent-capacity backend',
        },
      },
      reqs: { "storage-class": requirement.storageClass },
      warnings: [
        'StorageClass "xfs-quota" uses rancher.io/local-path, which sizes volumes at admission only: it is not a conforming persistent-capacity backend',
      ],
      atRest: true,
      ready: Ready.READY_TRUE,
    },
  ),
  statusOnlyCase(
    "WorkspaceProfileWaitsForItsStorageClass",
    "A profile published before its StorageClass is Pending, not ready, and says what it waits for.",
    request(PROFILE, { required: { "storage-class": [] } }),
    {
      kind: "WorkspaceProfile",
      status: { phase: "Pending", reason: "StorageClassNotFound", message: 'StorageClass "xfs-quota" not found', profileHash: PROFILE_HASH },
      reqs: { "storage-class": requirement.storageClass },
      warnings: ['StorageClass "xfs-quota" not found'],
    },
  ),
  {
    name: "WorkspaceProfileValidated",
    reason: "A WorkspaceProfile renders only its status: valid, conforming capacity, and its hash.",
    req: request(PROFILE, { required: { "storage-class": [STORAGE_CLASS] } }),
    want: { golden: "profile" },
  },
];
