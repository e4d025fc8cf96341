// Issue 5: Berth's admission policies (admission/policies.yaml and the per-class binding each
// ExecutionWorkspaceClass renders) on a real API server, as NON-ADMIN users.
//
// Users are impersonated: requests go out with the admin kubeconfig's credentials plus
// Impersonate-User / Impersonate-Group headers (the admin may impersonate anyone; the API server
// then authorizes and admits the request as the impersonated user, exactly as for a real one).
// This works unchanged on kind, where the suite has no access to the cluster CA's key.
//
// Every user gets the RBAC the request needs (berth-operator or berth-workspace-user, a Role for
// Pods), so each denial below is the POLICY's, and every denial is asserted on the policy's own
// message and paired with an allowed request that differs only in what the rule is about, so
// no rule passes by denying everything. Creates are dry runs (?dryRun=All): they pass through
// authorization and every admission policy but store nothing, so no workspace is rendered.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { can as canDo, classPermitsInEffect, Cluster, clusterRoleBinding, condition, type Identity, load, loadOne, type Obj, waitFor } from "./setup.js";

const c = new Cluster(inject("kubeconfig"));
const API = "workspaces.berth.dev/v1alpha1";
const RBAC = "rbac.authorization.k8s.io/v1";
const LABEL = { "berth-conformance": "admission" };
const CHECKPOINT = "adm-checkpoint";
const POD_NS = "adm-capacity-enforced";

// Who is who. None is in system:masters; the operators group is admission/params.yaml's.
const OPERATOR: Identity = { user: "olga-operator", groups: ["berth:operators", "system:authenticated"] };
const NOT_OPERATOR: Identity = { user: "nick-not-operator", groups: ["system:authenticated"] }; // has berth-operator's RBAC, not the group
const NO_USE: Identity = { user: "una-no-use", groups: ["system:authenticated"] }; // workspace user, no use on any class
const CLASS_USER: Identity = { user: "carl-class-user", groups: ["system:authenticated"] }; // use on sandbox-session, not on any checkpoint
const RESTORER: Identity = { user: "rita-restorer", groups: ["system:authenticated"] }; // use on sandbox-session and on adm-checkpoint
const POD_USER: Identity = { user: "pete-pods", groups: ["system:authenticated"] };

const clusterBinding = (name: string, role: string, user: string): Obj => clusterRoleBinding(name, role, { user }, LABEL);

const RBAC_OBJECTS: Obj[] = [
  clusterBinding("adm-operator", "berth-operator", OPERATOR.user),
  clusterBinding("adm-not-operator", "berth-operator", NOT_OPERATOR.user),
  ...[NO_USE, CLASS_USER, RESTORER].map((u) => clusterBinding(`adm-${u.user}`, "berth-workspace-user", u.user)),
  ...[CLASS_USER, RESTORER].map((u) => clusterBinding(`adm-${u.user}-class`, "berth-class-sandbox-session-use", u.user)),
  // Checkpoints are cluster-scoped, so `use` on one is a ClusterRole naming it.
  { apiVersion: RBAC, kind: "ClusterRole", metadata: { name: "adm-checkpoint-use", labels: LABEL }, rules: [{ apiGroups: ["workspaces.berth.dev"], resources: ["workspacecheckpoints"], resourceNames: [CHECKPOINT], verbs: ["use"] }] },
  clusterBinding("adm-rita-checkpoint", "adm-checkpoint-use", RESTORER.user),
];

const POD_OBJECTS: Obj[] = [
  {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: POD_NS,
      // What Berth's Namespace profile puts on a workspace whose profile declares runtime-enforced capacity.
      labels: { ...LABEL, "workspaces.berth.dev/capacity-enforcement": "Runtime", "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest" },
    },
  },
  { apiVersion: RBAC, kind: "Role", metadata: { name: "adm-pods", namespace: POD_NS }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "get"] }] },
  {
    apiVersion: RBAC,
    kind: "RoleBinding",
    metadata: { name: "adm-pods", namespace: POD_NS },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "adm-pods" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: POD_USER.user }],
  },
];

// A workspace Namespace as Berth labels it, and a user whose Role lets it write the kinds a
// workload granted edit access may write, so that each denial below is the MCP gate policies'.
const GATE_NS = "adm-mcp-gate";
const GATE_LABELS = { "workspaces.berth.dev/component": "mcp-gate" };
const GATE_OBJECTS: Obj[] = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: GATE_NS, labels: { ...LABEL, "app.kubernetes.io/managed-by": "berth", "pod-security.kubernetes.io/enforce": "restricted" } } },
  {
    apiVersion: RBAC,
    kind: "Role",
    metadata: { name: "adm-edit", namespace: GATE_NS },
    rules: [
      { apiGroups: [""], resources: ["pods", "configmaps"], verbs: ["create", "get", "update"] },
      { apiGroups: ["apps"], resources: ["deployments", "replicasets"], verbs: ["create", "get", "update"] },
      { apiGroups: ["batch"], resources: ["jobs"], verbs: ["create", "get", "update"] },
    ],
  },
  {
    apiVersion: RBAC,
    kind: "RoleBinding",
    metadata: { name: "adm-edit", namespace: GATE_NS },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "adm-edit" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: POD_USER.user }],
  },
];

const DW = loadOne("examples/developerworkspace-ephemeral.yaml");
const dw = (): Obj => ({ ...structuredClone(DW), metadata: { name: "adm-dw-1-xr" }, spec: { ...structuredClone(DW.spec), workspaceID: "adm-dw-1" } });
const ew = (name: string, spec: Record<string, unknown> = {}): Obj => ({
  apiVersion: API,
  kind: "ExecutionWorkspace",
  metadata: { name },
  spec: { classRef: { name: "sandbox-session" }, sessionRef: { name, namespace: "team-payments" }, ...spec },
});
/** A Pod that meets Pod Security "restricted", with or without hostUsers: false. */
const pod = (hostUsers: boolean | undefined): Obj => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: `adm-pod-${hostUsers === undefined ? "unset" : hostUsers}`, namespace: POD_NS },
  spec: {
    ...(hostUsers === undefined ? {} : { hostUsers }),
    automountServiceAccountToken: false,
    securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } },
    containers: [{ name: "c", image: "registry.example.com/busybox:1", securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } }],
  },
});

/**
 * An ExecutionWorkspace or checkpoint as `as` creates it: recording its creator, as
 * berth-workspace-owner requires (boundary.test.ts proves that rule), so that each denial here is
 * the policy under test's alone.
 */
function recordingCreator(obj: Obj, as: Identity): Obj {
  if (obj.kind !== "ExecutionWorkspace" && obj.kind !== "WorkspaceCheckpoint") return obj;
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata?.annotations, "workspaces.berth.dev/created-by": as.user } } };
}

/**
 * Denied by that policy, with that message. Validations with reason Forbidden answer 403; the
 * class permits carry no reason, so the API server answers 422 Invalid for them.
 */
async function expectDenied(obj: Obj, as: Identity, policy: string, message: string): Promise<void> {
  const res = await c.create(recordingCreator(obj, as), { as, dryRun: true });
  const what = `${as.user} creating ${obj.kind} ${obj.metadata?.name}: ${res.text}`;
  expect(res.status, what).toBe(policy === "berth-class-permits" ? 422 : 403);
  expect(res.body.message, what).toContain(`ValidatingAdmissionPolicy '${policy}'`);
  expect(res.body.message, what).toContain(message);
}

async function expectAllowed(obj: Obj, as: Identity): Promise<void> {
  const res = await c.create(recordingCreator(obj, as), { as, dryRun: true });
  expect(res.status, `${as.user} creating ${obj.kind} ${obj.metadata?.name}: ${res.text}`).toBe(201);
}

/** The API server's authorizer answer for one access (so a denial can be shown not to be RBAC's). */
const can = (as: Identity, attrs: Record<string, string>) => canDo(c, as, attrs);

describe("admission policies, as non-admin users", () => {
  beforeAll(async () => {
    for (const ns of ["ai-gateway", "mcp"]) await c.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    for (const o of [...load("examples/cluster/storageclass.yaml"), ...load("examples/cluster/services.yaml"), loadOne("examples/profile.yaml")]) await c.apply(o);
    for (const f of ["examples/class-sandbox.yaml", "examples/class-substrate.yaml"]) await c.apply(loadOne(f));
    // Each class renders its own permits binding and use role; wait for both.
    for (const cls of ["sandbox-session", "substrate-session"]) {
      await waitFor(`class ${cls} Ready`, async () => condition(await c.get(API, "ExecutionWorkspaceClass", cls), "Ready")?.status === "True", 120_000);
      await waitFor(`ClusterRole berth-class-${cls}-use`, () => c.get(RBAC, "ClusterRole", `berth-class-${cls}-use`), 60_000);
    }
    for (const o of [...RBAC_OBJECTS, ...POD_OBJECTS, ...GATE_OBJECTS]) await c.apply(o);
    await waitFor(`ServiceAccount default in ${POD_NS}`, () => c.get("v1", "ServiceAccount", "default", POD_NS), 60_000);
    // RBAC (and the policies' param objects) reach the API server's caches asynchronously:
    // wait until the last grant is visible to the authorizer.
    await waitFor("RBAC in effect", () => can(RESTORER, { group: "workspaces.berth.dev", resource: "workspacecheckpoints", name: CHECKPOINT, verb: "use" }), 30_000);
    // Each class's binding reads the class as its parameter; wait until it refuses what it must.
    for (const cls of ["sandbox-session", "substrate-session"]) await classPermitsInEffect(c, cls, OPERATOR);
  });

  afterAll(async () => {
    for (const o of [...RBAC_OBJECTS].reverse()) await c.delete(o.apiVersion!, o.kind!, o.metadata!.name!).catch(() => undefined);
    await c.delete("v1", "Namespace", POD_NS).catch(() => undefined);
    await c.delete("v1", "Namespace", GATE_NS).catch(() => undefined);
  });

  describe("only operators create DeveloperWorkspaces", () => {
    it("a non-operator (with the RBAC to create them) is denied by berth-operators-only", async () => {
      expect(await can(NOT_OPERATOR, { group: "workspaces.berth.dev", resource: "developerworkspaces", verb: "create" }), "RBAC allows it").toBe(true);
      await expectDenied(dw(), NOT_OPERATOR, "berth-operators-only", `only members of berth:operators may create developerworkspaces; ${NOT_OPERATOR.user} is not one`);
    });
    it("an operator is allowed", async () => {
      await expectAllowed(dw(), OPERATOR);
    });
    it("a non-operator may not publish a class either; an operator may", async () => {
      const cls = { ...loadOne("examples/class-sandbox.yaml"), metadata: { name: "adm-class" } };
      await expectDenied(cls, NOT_OPERATOR, "berth-operators-only", "only members of berth:operators may create executionworkspaceclasses");
      await expectAllowed(cls, OPERATOR);
    });
  });

  describe("choosing a class needs use on it", () => {
    it("a user without use on the class is denied by berth-use", async () => {
      expect(await can(NO_USE, { group: "workspaces.berth.dev", resource: "executionworkspaces", verb: "create" }), "RBAC allows the create").toBe(true);
      await expectDenied(ew("adm-ew-1"), NO_USE, "berth-use", `${NO_USE.user} may not use ExecutionWorkspaceClass "sandbox-session" (needs the use verb on executionworkspaceclasses/sandbox-session)`);
    });
    it("with the class's berth-class-sandbox-session-use role, the same request is allowed", async () => {
      await expectAllowed(ew("adm-ew-1"), CLASS_USER);
    });
    it("use on one class is not use on another", async () => {
      await expectDenied(ew("adm-ew-2", { classRef: { name: "substrate-session" }, reusePolicy: "Session" }), CLASS_USER, "berth-use", `may not use ExecutionWorkspaceClass "substrate-session"`);
    });
  });

  describe("restoring needs use on the checkpoint", () => {
    const restore = () => ew("adm-ew-restore", { restoreFrom: { checkpointRef: { name: CHECKPOINT } } });
    it("a class user without use on the checkpoint is denied", async () => {
      await expectDenied(restore(), CLASS_USER, "berth-use", `${CLASS_USER.user} may not use WorkspaceCheckpoint "${CHECKPOINT}" (needs the use verb on workspacecheckpoints/${CHECKPOINT})`);
    });
    it("with a role granting use on that checkpoint, the restore is allowed", async () => {
      await expectAllowed(restore(), RESTORER);
    });
    it("forking needs it too", async () => {
      const fork = ew("adm-ew-fork", { forkFrom: { checkpointRef: { name: CHECKPOINT } } });
      await expectDenied(fork, CLASS_USER, "berth-use", `may not use WorkspaceCheckpoint "${CHECKPOINT}"`);
      await expectAllowed(fork, RESTORER);
    });
  });

  describe("options the class does not permit are refused by the class's own binding", () => {
    it("cpu above the class's max is denied; at the max it is allowed", async () => {
      await expectDenied(ew("adm-ew-cpu", { requests: { resources: { cpu: "16" } } }), CLASS_USER, "berth-class-permits", `spec.requests.resources.cpu: exceeds what ExecutionWorkspaceClass "sandbox-session" permits (max 4)`);
      await expectAllowed(ew("adm-ew-cpu", { requests: { resources: { cpu: "4" } } }), CLASS_USER);
    });
    it("a destination the class does not permit is denied; a permitted one is allowed", async () => {
      await expectDenied(
        ew("adm-ew-dest", { requests: { capabilities: { registries: [{ destination: "npm-mirror" }] } } }),
        CLASS_USER,
        "berth-class-permits",
        `spec.requests.capabilities: ExecutionWorkspaceClass "sandbox-session" permits only the destinations github, model-gateway, docs-mcp`,
      );
      await expectAllowed(ew("adm-ew-dest", { requests: { capabilities: { mcp: [{ name: "docs", destination: "docs-mcp" }] } } }), CLASS_USER);
    });
    it("a reuse policy the class does not permit is denied", async () => {
      await expectDenied(ew("adm-ew-reuse", { classRef: { name: "substrate-session" }, reusePolicy: "None" }), OPERATOR, "berth-class-permits", `spec.reusePolicy: ExecutionWorkspaceClass "substrate-session" does not permit None`);
      await expectAllowed(ew("adm-ew-reuse", { classRef: { name: "substrate-session" }, reusePolicy: "Session" }), OPERATOR);
    });
  });

  describe("Pods in a capacity-enforced namespace must set hostUsers: false", () => {
    it("a Pod without hostUsers: false is denied by berth-host-users", async () => {
      expect(await can(POD_USER, { namespace: POD_NS, resource: "pods", verb: "create" }), "RBAC allows it").toBe(true);
      await expectDenied(pod(undefined), POD_USER, "berth-host-users", "pods in this workspace must set spec.hostUsers: false");
      await expectDenied(pod(true), POD_USER, "berth-host-users", "pods in this workspace must set spec.hostUsers: false");
    });
    it("the same Pod with hostUsers: false is allowed (and meets Pod Security restricted)", async () => {
      await expectAllowed(pod(false), POD_USER);
    });
    it("outside such namespaces the policy does not apply", async () => {
      const other = { ...pod(undefined), metadata: { name: "adm-pod-elsewhere", namespace: "default" } };
      // As the admin (no RBAC needed): only the namespace label decides.
      const res = await c.create(other, { dryRun: true });
      expect(res.status, res.text).toBe(201);
    });
  });

  describe("in a workspace Namespace, only Crossplane and the controllers make or change the MCP gate", () => {
    const gatePod = (labels: Record<string, string>): Obj => ({ ...pod(false), metadata: { name: "adm-gate-pod", namespace: GATE_NS, labels } });
    const template = (labels: Record<string, string>) => ({ metadata: { labels }, spec: (pod(false).spec as Record<string, unknown>) });
    const deployment = (labels: Record<string, string>): Obj => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "adm-gate-deployment", namespace: GATE_NS },
      spec: { selector: { matchLabels: labels }, template: template(labels) },
    });
    const job = (labels: Record<string, string>): Obj => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "adm-gate-job", namespace: GATE_NS },
      spec: { template: { ...template(labels), spec: { ...(pod(false).spec as Record<string, unknown>), restartPolicy: "Never" } } },
    });
    const configMap = (name: string): Obj => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: GATE_NS }, data: { "policy.json": "{}" } });

    it("a pod of the workload's own labelled as the gate is denied; the same pod unlabelled is allowed", async () => {
      expect(await can(POD_USER, { namespace: GATE_NS, resource: "pods", verb: "create" }), "RBAC allows it").toBe(true);
      await expectDenied(gatePod(GATE_LABELS), POD_USER, "berth-mcp-gate-pods", "only the MCP gate ReplicaSet makes a pod labelled workspaces.berth.dev/component=mcp-gate; pete-pods may not");
      await expectAllowed(gatePod({ app: "mine" }), POD_USER);
    });
    it("a Deployment or Job of gate pods is denied; the same without the label is allowed", async () => {
      await expectDenied(deployment(GATE_LABELS), POD_USER, "berth-mcp-gate-workloads", "only Crossplane and the Deployment controller write a Deployment of MCP gate pods; pete-pods may not");
      await expectAllowed(deployment({ app: "mine" }), POD_USER);
      await expectDenied(job(GATE_LABELS), POD_USER, "berth-mcp-gate-workloads", "write a Job of MCP gate pods");
      await expectAllowed(job({ app: "mine" }), POD_USER);
    });
    it("the gate's policy ConfigMap mcp-gate is Crossplane's alone; another ConfigMap is allowed", async () => {
      await expectDenied(configMap("mcp-gate"), POD_USER, "berth-mcp-gate-policy", "only Crossplane writes the MCP gate ConfigMap mcp-gate; pete-pods may not");
      await expectAllowed(configMap("notes"), POD_USER);
    });
  });

  describe("in a workspace Namespace, only Crossplane and the Job controller make the evidence export, the run's pods or a private CA", () => {
    const labelledPod = (labels: Record<string, string>): Obj => ({ ...pod(false), metadata: { name: "adm-evidence-pod", namespace: GATE_NS, labels } });
    const job = (name: string, labels: Record<string, string>): Obj => ({
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name, namespace: GATE_NS },
      spec: { template: { metadata: { labels }, spec: { ...(pod(false).spec as Record<string, unknown>), restartPolicy: "Never" } } },
    });
    const configMap = (name: string): Obj => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: GATE_NS }, data: { "ca.crt": "-----BEGIN CERTIFICATE-----" } });

    it("a pod labelled as the export's, or as the workspace Job's, is denied; the same pod unlabelled is allowed", async () => {
      const message = "only the Job controller makes a pod of the workspace or evidence-export Job; pete-pods may not";
      await expectDenied(labelledPod({ "workspaces.berth.dev/component": "evidence-export" }), POD_USER, "berth-evidence-pods", message);
      await expectDenied(labelledPod({ "batch.kubernetes.io/job-name": "workspace" }), POD_USER, "berth-evidence-pods", message);
      await expectDenied(labelledPod({ "job-name": "evidence-export" }), POD_USER, "berth-evidence-pods", message);
      await expectAllowed(labelledPod({ app: "mine" }), POD_USER);
    });
    it("a Job of export pods, or named as Berth's, is denied; another Job is allowed", async () => {
      await expectDenied(job("adm-export", { "workspaces.berth.dev/component": "evidence-export" }), POD_USER, "berth-evidence-workloads", "only Crossplane writes the Job adm-export (Berth evidence export and private CAs); pete-pods may not");
      await expectDenied(job("evidence-export", {}), POD_USER, "berth-evidence-workloads", "only Crossplane writes the Job evidence-export");
      await expectDenied(job("workspace", {}), POD_USER, "berth-evidence-workloads", "only Crossplane writes the Job workspace");
      await expectAllowed(job("adm-mine", { app: "mine" }), POD_USER);
    });
    it("a private CA's copy (ConfigMap ca-*) is Crossplane's alone", async () => {
      await expectDenied(configMap("ca-github"), POD_USER, "berth-evidence-workloads", "only Crossplane writes the ConfigMap ca-github");
      await expectAllowed(configMap("notes-ca"), POD_USER);
    });
  });

  describe("a finished DeveloperWorkspace whose evidence is not recorded is not deleted, not even by an administrator, until it is or an operator waives it", () => {
    const NAME = "adm-evidence-xr";
    const review = loadOne("examples/developerworkspace-review.yaml");
    const deleteDryRun = () => c.request("DELETE", `/apis/workspaces.berth.dev/v1alpha1/developerworkspaces/${NAME}?dryRun=All`);
    afterAll(async () => {
      await c.mergePatch({ apiVersion: API, kind: "DeveloperWorkspace", metadata: { name: NAME, annotations: { "workspaces.berth.dev/evidence-waived": "conformance clean-up" } } }).catch(() => undefined);
      await c.delete(API, "DeveloperWorkspace", NAME);
    });

    it("refused once the outcome is recorded without evidence; allowed once waived", async () => {
      await c.apply({ ...structuredClone(review), metadata: { name: NAME }, spec: { ...structuredClone(review.spec as object), workspaceID: "adm-evidence" } });
      // Still running (no outcome): deleting cancels the run, and is allowed.
      const running = await deleteDryRun();
      expect(running.status, running.text).toBe(200);
      // Berth records the outcome from the runtime; here, as the status subresource writer would.
      const patched = await c.patchStatus(API, "DeveloperWorkspace", NAME, undefined, { outcome: { result: "Succeeded", reason: "Completed", finishedAt: "2026-12-07T10:00:00Z" } });
      expect(patched.status, patched.text).toBe(200);
      const refused = await deleteDryRun();
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.message).toContain("ValidatingAdmissionPolicy 'berth-evidence-before-cleanup'");
      expect(refused.body.message).toContain(`DeveloperWorkspace ${NAME} has finished, and its evidence is not exported yet`);
      await c.mergePatch({ apiVersion: API, kind: "DeveloperWorkspace", metadata: { name: NAME, annotations: { "workspaces.berth.dev/evidence-waived": "conformance: no registry here" } } });
      const waived = await deleteDryRun();
      expect(waived.status, waived.text).toBe(200);
    });
  });
});
