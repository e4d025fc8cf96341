// Issue 44 on a real API server with real Crossplane: the ways around the boundary found on
// 539ceab by reading it as an attacker would, each tried here as the identity that would use it
// (an operator, a class user, a second class user, a workspace's own ServiceAccount granted
// `edit`, a provider's ServiceAccount beside Crossplane), each beside a control that differs only
// in what the rule is about. The same findings as plain calls are in test/unit/boundary.test.ts;
// what only a kubelet shows is in test/live/live.test.ts ("kubernetes access edit").
//
// Users are impersonated, as in admission.test.ts. Creates meant to be refused are dry runs
// (?dryRun=All: authorization and every admission policy, nothing stored); the workspaces whose
// rendering is the question are created for real and rendered by Crossplane and Berth's function.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { applyExampleCluster, applyExampleProfileAndClass, can as canDo, classPermitsInEffect, Cluster, clusterRoleBinding, condition, type Identity, loadOne, type Obj, type RawResponse, waitFor } from "./setup.js";

const c = new Cluster(inject("kubeconfig"));
const API = "workspaces.berth.dev/v1alpha1";
const RBAC = "rbac.authorization.k8s.io/v1";
const LABEL = { "berth-conformance": "boundary" };
const CREATED_BY = "workspaces.berth.dev/created-by";
const CLASS = "sandbox-session";

const serviceAccount = (namespace: string, name: string): Identity => ({
  user: `system:serviceaccount:${namespace}:${name}`,
  groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
});
const OPERATOR: Identity = { user: "olga-bnd-operator", groups: ["berth:operators", "system:authenticated"] };
const CARL: Identity = { user: "carl-bnd", groups: ["system:authenticated"] }; // a class user
const RHEA: Identity = { user: "rhea-bnd", groups: ["system:authenticated"] }; // another class user, with use on the same class
const PROVIDER = serviceAccount("crossplane-system", "provider-kubernetes"); // installed beside Crossplane, given Berth's operator role
const CROSSPLANE = serviceAccount("crossplane-system", "crossplane"); // Crossplane itself (the Helm chart's ServiceAccount)

/** The DeveloperWorkspace whose runtime is granted edit, and the identity its runtime runs as. */
const EDIT = { id: "bnd-edit", ns: "ws-bnd-edit" };
const RUNTIME = serviceAccount(EDIT.ns, "workspace");
const LEASE = "runtime-lease";
/** A RuntimeClass that exists (the API server refuses a pod naming one that does not before any policy runs), and is not the workspace's. */
const RUNTIME_CLASS = "bnd-other-runtime";

const clusterBinding = (name: string, role: string, who: Identity): Obj => clusterRoleBinding(name, role, who, LABEL);
const RBAC_OBJECTS: Obj[] = [
  clusterBinding("bnd-operator", "berth-operator", OPERATOR),
  clusterBinding("bnd-provider", "berth-operator", PROVIDER),
  clusterBinding("bnd-crossplane", "berth-operator", CROSSPLANE),
  ...[CARL, RHEA].flatMap((u) => [clusterBinding(`bnd-${u.user}`, "berth-workspace-user", u), clusterBinding(`bnd-${u.user}-class`, `berth-class-${CLASS}-use`, u)]),
];

const DW = loadOne("examples/developerworkspace-ephemeral.yaml");
/** The ephemeral example under another ID, edited. */
function developerWorkspace(id: string, edit: (spec: any) => void = () => {}): Obj {
  const spec = structuredClone(DW.spec);
  spec.workspaceID = id;
  edit(spec);
  return { apiVersion: API, kind: "DeveloperWorkspace", metadata: { name: `${id}-xr`, labels: LABEL }, spec };
}
/** An ExecutionWorkspace on the example class, recording its creator as admission requires. */
function executionWorkspace(name: string, creator: Identity | undefined, spec: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: API,
    kind: "ExecutionWorkspace",
    metadata: { name, labels: LABEL, ...(creator ? { annotations: { [CREATED_BY]: creator.user } } : {}) },
    spec: { classRef: { name: CLASS }, sessionRef: { name, namespace: "team-payments" }, reusePolicy: "Session", ...spec },
  };
}
const checkpoint = (name: string, workspace: string, creator: Identity): Obj => ({
  apiVersion: API,
  kind: "WorkspaceCheckpoint",
  metadata: { name, labels: LABEL, annotations: { [CREATED_BY]: creator.user } },
  spec: { workspaceRef: { name: workspace }, classRef: { name: CLASS }, volumeSnapshotClassName: "csi-snapshots" },
});

async function must(res: RawResponse, status: number, what: string): Promise<RawResponse> {
  expect(res.status, `${what}: ${res.text}`).toBe(status);
  return res;
}
/** Refused (403 Forbidden) by that policy, with that text in its message. */
async function refusedBy(res: Promise<RawResponse>, policy: string, text: string, what: string): Promise<void> {
  const r = await res;
  expect(r.status, `${what} should be refused: ${r.text}`).toBe(403);
  expect(r.body.message, what).toContain(`ValidatingAdmissionPolicy '${policy}'`);
  expect(r.body.message, what).toContain(text);
}
const dryRun = (method: string, path: string, body: unknown, as: Identity, contentType?: string) =>
  c.request(method, `${path}${path.includes("?") ? "&" : "?"}dryRun=All`, body, { as, ...(contentType ? { contentType } : {}) });
const mergePatch = (path: string, patch: unknown, as: Identity) => dryRun("PATCH", path, patch, as, "application/merge-patch+json");

/** The API server's authorizer answer (so a refusal is shown to be the policy's, or RBAC's where that is the boundary). */
const can = (as: Identity, attrs: Record<string, string>) => canDo(c, as, attrs);

/** What an XR controls in a namespace, by uid: the objects whose controller reference is it. */
async function controlledIn(namespace: string, uid: string): Promise<string[]> {
  const kinds: [string, string][] = [
    ["/api/v1", "configmaps"],
    ["/api/v1", "serviceaccounts"],
    ["/api/v1", "resourcequotas"],
    ["/api/v1", "limitranges"],
    ["/api/v1", "persistentvolumeclaims"],
    ["/apis/networking.k8s.io/v1", "networkpolicies"],
    ["/apis/rbac.authorization.k8s.io/v1", "roles"],
    ["/apis/rbac.authorization.k8s.io/v1", "rolebindings"],
    ["/apis/agents.x-k8s.io/v1beta1", "sandboxes"],
  ];
  const found: string[] = [];
  for (const [base, resource] of kinds) {
    const res = await c.request("GET", `${base}/namespaces/${namespace}/${resource}`);
    for (const o of (res.body?.items ?? []) as Obj[]) {
      if ((o.metadata?.ownerReferences ?? []).some((r: { uid?: string }) => r.uid === uid)) found.push(`${resource}/${o.metadata!.name}`);
    }
  }
  return found;
}

const xr = (kind: string, name: string) => c.get(API, kind, name);
/** Waits until the XR says it was refused (the fix) or `hole` shows the finding (539ceab), whichever comes first. */
async function settled(what: string, refused: () => Promise<boolean>, hole: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  await waitFor(what, async () => (await refused()) || (await hole()), timeoutMs, 1000);
}

describe("issue 44: the boundary against the people it bounds, on a real API server", () => {
  beforeAll(async () => {
    await applyExampleCluster(c);
    await applyExampleProfileAndClass(c);
    await waitFor(`ClusterRole berth-class-${CLASS}-use`, () => c.get(RBAC, "ClusterRole", `berth-class-${CLASS}-use`), 60_000);
    for (const o of RBAC_OBJECTS) await c.apply(o);
    await c.apply({ apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", metadata: { name: RUNTIME_CLASS, labels: LABEL }, handler: "runc" });
    await waitFor("RBAC in effect", async () => (await can(RHEA, { group: "workspaces.berth.dev", resource: "executionworkspaceclasses", name: CLASS, verb: "use" })) && (await can(PROVIDER, { group: "workspaces.berth.dev", resource: "developerworkspaces", verb: "create" })), 30_000);
    await classPermitsInEffect(c, CLASS, CARL);
    // Rendered while the tests before its own run.
    await c.apply(developerWorkspace(EDIT.id, (s) => (s.capabilities.kubernetes = { access: "edit", destination: "kube-api", resources: { cpu: "200m", memory: "256Mi" } })));
  });

  afterAll(async () => {
    for (const [kind, name] of [
      ["WorkspaceCheckpoint", "bnd-cp-carl"],
      ["WorkspaceCheckpoint", "bnd-cp-rhea"],
      ["ExecutionWorkspace", "bnd-coll"],
      ["ExecutionWorkspace", "bnd-coll2"],
      ["ExecutionWorkspace", "bnd-plain"],
      ["DeveloperWorkspace", "bnd-coll-xr"],
      ["DeveloperWorkspace", `${EDIT.id}-xr`],
      ["DeveloperWorkspace", "bnd-gated-xr"],
      ["DeveloperWorkspace", "bnd-servers-xr"],
      ["DeveloperWorkspace", "bnd-host-xr"],
      ["DeveloperWorkspace", "bnd-headless-xr"],
      ["WorkspaceProfile", "bnd-headless"],
    ] as const) await c.delete(API, kind, name).catch(() => undefined);
    await c.delete("v1", "Namespace", "ws-bnd-plain").catch(() => undefined);
    await c.delete("v1", "Service", "bnd-headless", "mcp").catch(() => undefined);
    for (const o of RBAC_OBJECTS) await c.delete(o.apiVersion!, o.kind!, o.metadata!.name!).catch(() => undefined);
    await c.delete("node.k8s.io/v1", "RuntimeClass", RUNTIME_CLASS).catch(() => undefined);
    await c.delete(RBAC, "Role", "bnd-configmaps", EDIT.ns).catch(() => undefined);
    await c.delete(RBAC, "RoleBinding", "bnd-configmaps", EDIT.ns).catch(() => undefined);
  });

  describe("finding 1: no workspace renders into another's Namespace", () => {
    beforeAll(async () => {
      await must(await c.create(developerWorkspace("bnd-coll"), { as: OPERATOR }), 201, "the operator creating DeveloperWorkspace bnd-coll-xr");
      await waitFor("the DeveloperWorkspace's boundary in ws-bnd-coll", () => c.get("networking.k8s.io/v1", "NetworkPolicy", "default-deny", "ws-bnd-coll"), 90_000);
    });

    it("a class user's ExecutionWorkspace bnd-coll, beside the operators' bnd-coll-xr, renders nothing into ws-bnd-coll and says whose it is", async () => {
      const mcp = { requests: { capabilities: { mcp: [{ name: "docs", destination: "docs-mcp" }] } } };
      await must(await c.create(executionWorkspace("bnd-coll", CARL, mcp), { as: CARL }), 201, "the class user creating ExecutionWorkspace bnd-coll");
      const uid = (await xr("ExecutionWorkspace", "bnd-coll"))!.metadata!.uid!;
      await settled(
        "bnd-coll refused, or objects of it in ws-bnd-coll",
        async () => (await xr("ExecutionWorkspace", "bnd-coll"))?.status?.reason === "NamespaceTaken",
        async () => (await controlledIn("ws-bnd-coll", uid)).length > 0,
      );
      expect(await controlledIn("ws-bnd-coll", uid), "objects the ExecutionWorkspace controls in the DeveloperWorkspace's Namespace").toEqual([]);
      expect((await xr("ExecutionWorkspace", "bnd-coll"))!.status).toMatchObject({
        phase: "Failed",
        reason: "NamespaceTaken",
        message: 'Namespace "ws-bnd-coll" belongs to DeveloperWorkspace "bnd-coll-xr": a workspace renders only into the Namespace it creates; choose another name',
      });
      // The DeveloperWorkspace's own boundary is untouched: still its, still one default-deny.
      const policy = (await c.get("networking.k8s.io/v1", "NetworkPolicy", "default-deny", "ws-bnd-coll"))!;
      expect(policy.metadata!.ownerReferences!.map((r: { kind: string; name: string }) => `${r.kind}/${r.name}`)).toEqual(["DeveloperWorkspace/bnd-coll-xr"]);
    });

    it("control: the same request under a free name, bnd-coll2, renders its boundary into ws-bnd-coll2, which it controls", async () => {
      await must(await c.create(executionWorkspace("bnd-coll2", CARL), { as: CARL }), 201, "the class user creating ExecutionWorkspace bnd-coll2");
      const uid = (await xr("ExecutionWorkspace", "bnd-coll2"))!.metadata!.uid!;
      const ns = await waitFor("Namespace ws-bnd-coll2", () => c.get("v1", "Namespace", "ws-bnd-coll2"), 90_000);
      expect(ns.metadata!.ownerReferences!.find((r: { controller?: boolean }) => r.controller)?.uid).toBe(uid);
      await waitFor("bnd-coll2's default-deny", async () => (await controlledIn("ws-bnd-coll2", uid)).includes("networkpolicies/default-deny"), 90_000);
    });

    it("a Namespace an administrator made, ws-bnd-plain, is not adopted by the ExecutionWorkspace bnd-plain", async () => {
      await c.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ws-bnd-plain", labels: LABEL } });
      await must(await c.create(executionWorkspace("bnd-plain", CARL), { as: CARL }), 201, "the class user creating ExecutionWorkspace bnd-plain");
      const uid = (await xr("ExecutionWorkspace", "bnd-plain"))!.metadata!.uid!;
      await settled(
        "bnd-plain refused, or ws-bnd-plain adopted",
        async () => (await xr("ExecutionWorkspace", "bnd-plain"))?.status?.reason === "NamespaceTaken",
        async () => ((await c.get("v1", "Namespace", "ws-bnd-plain"))?.metadata?.ownerReferences ?? []).length > 0,
      );
      expect((await c.get("v1", "Namespace", "ws-bnd-plain"))!.metadata!.ownerReferences, "the Namespace's owners").toBeUndefined();
      expect(await controlledIn("ws-bnd-plain", uid)).toEqual([]);
      expect((await xr("ExecutionWorkspace", "bnd-plain"))!.status.message).toBe(
        'Namespace "ws-bnd-plain" already exists and no workspace controls it: Berth renders a workspace only into the Namespace it creates, and never adopts one; delete it or choose another name',
      );
    });
  });

  describe("finding 4: a class user acts only on the workspaces and checkpoints they created", () => {
    const path = (name: string) => `/apis/${API}/executionworkspaces/${name}`;
    beforeAll(async () => {
      // Carl's workspace is the one the control above made (created by Carl, recording him).
      if ((await xr("ExecutionWorkspace", "bnd-coll2")) === undefined) await must(await c.create(executionWorkspace("bnd-coll2", CARL), { as: CARL }), 201, "Carl creating bnd-coll2");
    });

    it("creating one needs the creator recorded as the annotation workspaces.berth.dev/created-by, with the creator's own name", async () => {
      await refusedBy(c.create(executionWorkspace("bnd-anon", undefined), { as: CARL, dryRun: true }), "berth-workspace-owner", `set the annotation ${CREATED_BY} to carl-bnd`, "a create without the annotation");
      await refusedBy(c.create(executionWorkspace("bnd-anon", RHEA), { as: CARL, dryRun: true }), "berth-workspace-owner", `set the annotation ${CREATED_BY} to carl-bnd`, "a create naming someone else");
      await must(await c.create(executionWorkspace("bnd-anon", CARL), { as: CARL, dryRun: true }), 201, "control: naming himself");
    });

    it("another class user may not delete it, suspend it or detach it; its creator and the operators may", async () => {
      const deleting = (as: Identity) => dryRun("DELETE", path("bnd-coll2"), undefined, as);
      await refusedBy(deleting(RHEA), "berth-workspace-owner", "rhea-bnd may not delete ExecutionWorkspace bnd-coll2: it was created by carl-bnd", "Rhea deleting Carl's workspace");
      await refusedBy(mergePatch(path("bnd-coll2"), { spec: { desiredState: "Suspended" } }, RHEA), "berth-workspace-owner", "rhea-bnd may not update ExecutionWorkspace bnd-coll2: it was created by carl-bnd", "Rhea suspending it");
      await refusedBy(mergePatch(path("bnd-coll2"), { metadata: { annotations: { "lifecycle.berth.dev/detached-at": "2026-12-07T10:00:00Z" } } }, RHEA), "berth-workspace-owner", "rhea-bnd may not update", "Rhea detaching it");
      await must(await deleting(CARL), 200, "control: Carl deleting his own (dry run)");
      await must(await mergePatch(path("bnd-coll2"), { spec: { desiredState: "Suspended" } }, CARL), 200, "control: Carl suspending his own (dry run)");
      await must(await deleting(OPERATOR), 200, "control: an operator deleting it (dry run)");
    });

    it("the recorded creator cannot be changed, not even by the creator", async () => {
      await refusedBy(mergePatch(path("bnd-coll2"), { metadata: { annotations: { [CREATED_BY]: RHEA.user } } }, CARL), "berth-workspace-owner", `${CREATED_BY} is immutable`, "Carl handing his workspace to Rhea");
    });

    it("a checkpoint: its creator deletes it, another class user may not; one another user takes of Carl's workspace is refused by the function and snapshots nothing", async () => {
      await must(await c.create(checkpoint("bnd-cp-carl", "bnd-coll2", CARL), { as: CARL }), 201, "Carl checkpointing his workspace");
      await must(await c.create(checkpoint("bnd-cp-rhea", "bnd-coll2", RHEA), { as: RHEA }), 201, "Rhea checkpointing Carl's workspace (she may use the class, so admission lets it in)");
      const cpPath = (name: string) => `/apis/${API}/workspacecheckpoints/${name}`;
      await refusedBy(dryRun("DELETE", cpPath("bnd-cp-carl"), undefined, RHEA), "berth-workspace-owner", "rhea-bnd may not delete WorkspaceCheckpoint bnd-cp-carl: it was created by carl-bnd", "Rhea deleting Carl's checkpoint");
      await must(await dryRun("DELETE", cpPath("bnd-cp-carl"), undefined, CARL), 200, "control: Carl deleting his own (dry run)");
      const snapshot = (name: string) => c.get("snapshot.storage.k8s.io/v1", "VolumeSnapshot", name, "ws-bnd-coll2");
      await waitFor("Carl's checkpoint's VolumeSnapshot", () => snapshot("bnd-cp-carl"), 90_000);
      await settled(
        "Rhea's checkpoint refused, or its VolumeSnapshot of Carl's volume",
        async () => (await xr("WorkspaceCheckpoint", "bnd-cp-rhea"))?.status?.reason === "NotTheWorkspacesCreator",
        async () => (await snapshot("bnd-cp-rhea")) !== undefined,
      );
      expect(await snapshot("bnd-cp-rhea"), "a VolumeSnapshot of Carl's volume for Rhea").toBeUndefined();
      expect((await xr("WorkspaceCheckpoint", "bnd-cp-rhea"))!.status.message).toBe(
        'WorkspaceCheckpoint "bnd-cp-rhea" was created by rhea-bnd and ExecutionWorkspace "bnd-coll2" by carl-bnd: only a workspace\'s creator checkpoints its files',
      );
    });

    it("status is Crossplane's: no class user may write an ExecutionWorkspace's status (RBAC; held on 539ceab too)", async () => {
      for (const u of [CARL, RHEA]) {
        expect(await can(u, { group: "workspaces.berth.dev", resource: "executionworkspaces", subresource: "status", verb: "patch", name: "bnd-coll2" }), `${u.user} patching status`).toBe(false);
        expect(await can(u, { group: "workspaces.berth.dev", resource: "workspacecheckpoints", subresource: "status", verb: "update" }), `${u.user} updating a checkpoint's status`).toBe(false);
      }
    });
  });

  describe("finding 5: only Crossplane's own ServiceAccount is Crossplane", () => {
    it("a provider's ServiceAccount in crossplane-system, given Berth's operator role, may not create a DeveloperWorkspace or a profile; Crossplane's own may", async () => {
      const dw = developerWorkspace("bnd-provider");
      await refusedBy(c.create(dw, { as: PROVIDER, dryRun: true }), "berth-operators-only", `${PROVIDER.user} is not one`, "the provider creating a DeveloperWorkspace");
      await must(await c.create(dw, { as: CROSSPLANE, dryRun: true }), 201, "control: Crossplane's ServiceAccount");
      const profile = { ...loadOne("examples/profile.yaml"), metadata: { name: "bnd-provider" } };
      await refusedBy(c.create(profile, { as: PROVIDER, dryRun: true }), "berth-operators-only", `${PROVIDER.user} is not one`, "the provider publishing a profile");
      await must(await c.create(profile, { as: CROSSPLANE, dryRun: true }), 201, "control: Crossplane's ServiceAccount");
    });

    it("nor write an MCP gate's policy in a workspace Namespace; Crossplane's own may", async () => {
      await waitFor(`Namespace ${EDIT.ns}`, () => c.get("v1", "Namespace", EDIT.ns), 120_000);
      await c.apply({ apiVersion: RBAC, kind: "Role", metadata: { name: "bnd-configmaps", namespace: EDIT.ns }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["create"] }] });
      await c.apply({
        apiVersion: RBAC,
        kind: "RoleBinding",
        metadata: { name: "bnd-configmaps", namespace: EDIT.ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "bnd-configmaps" },
        subjects: [PROVIDER, CROSSPLANE].map((sa) => ({ kind: "ServiceAccount", name: sa.user.split(":")[3], namespace: "crossplane-system" })),
      });
      await waitFor("the ConfigMap grant in effect", () => can(PROVIDER, { namespace: EDIT.ns, resource: "configmaps", verb: "create" }), 30_000);
      const gatePolicy = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "mcp-gate", namespace: EDIT.ns }, data: { "policy.json": '{"servers":[]}' } };
      await refusedBy(c.create(gatePolicy, { as: PROVIDER, dryRun: true }), "berth-mcp-gate-policy", `only Crossplane writes the MCP gate ConfigMap mcp-gate; ${PROVIDER.user} may not`, "the provider writing the gate's policy");
      await must(await c.create(gatePolicy, { as: CROSSPLANE, dryRun: true }), 201, "control: Crossplane's ServiceAccount");
    });
  });

  describe("findings 2 and 6: a runtime granted edit makes only pods that follow the rules, and touches nothing it did not make", () => {
    const podsPath = `/api/v1/namespaces/${EDIT.ns}/pods`;
    let leaseUid: string | undefined;
    const restricted = { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } };
    const container = (extra: Record<string, unknown> = {}) => ({
      name: "c",
      image: "registry.example.com/busybox:1",
      resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "10m", memory: "16Mi" } },
      securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
      ...extra,
    });
    /** A pod spec as the rules want it: restricted, in a user namespace, bounded. */
    const podSpec = (edit: (s: any) => void = () => {}) => {
      const s: any = { hostUsers: false, automountServiceAccountToken: false, securityContext: restricted, containers: [container()], restartPolicy: "Never" };
      edit(s);
      return s;
    };
    const owned = () => [{ apiVersion: "v1", kind: "ConfigMap", name: LEASE, uid: leaseUid ?? "no-lease-on-539ceab" }];
    const pod = (name: string, edit: (s: any) => void = () => {}, metadata: Record<string, unknown> = {}): Obj => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, namespace: EDIT.ns, ownerReferences: owned(), ...metadata },
      spec: podSpec(edit),
    });
    const asRuntime = (o: Obj) => c.create(o, { as: RUNTIME, dryRun: true });

    beforeAll(async () => {
      await waitFor(`RoleBinding workspace-edit in ${EDIT.ns}`, () => c.get(RBAC, "RoleBinding", "workspace-edit", EDIT.ns), 120_000);
      await waitFor("the runtime's grant in effect", () => can(RUNTIME, { namespace: EDIT.ns, resource: "pods", verb: "create" }), 30_000);
      // The operator's secret tooling delivers the git credential into the workspace's Namespace.
      await c.apply({ apiVersion: "v1", kind: "Secret", metadata: { name: "payments-bot-github", namespace: EDIT.ns }, stringData: { token: "bnd-git-token" } });
      leaseUid = (await waitFor(`ConfigMap ${LEASE} in ${EDIT.ns}`, () => c.get("v1", "ConfigMap", LEASE, EDIT.ns), 60_000).catch(() => undefined))?.metadata?.uid;
    });

    const refusals: [string, Obj, string][] = [
      ["an env var from the git Secret", pod("bnd-secret-env", (s) => (s.containers[0].env = [{ name: "T", valueFrom: { secretKeyRef: { name: "payments-bot-github", key: "token" } } }])), "may not reference a Secret"],
      ["envFrom the git Secret", pod("bnd-secret-envfrom", (s) => (s.containers[0].envFrom = [{ secretRef: { name: "payments-bot-github" } }])), "may not reference a Secret"],
      ["a Secret volume", pod("bnd-secret-volume", (s) => (s.volumes = [{ name: "s", secret: { secretName: "payments-bot-github" } }])), "may not reference a Secret"],
      ["a projected Secret", pod("bnd-secret-projected", (s) => (s.volumes = [{ name: "s", projected: { sources: [{ secret: { name: "payments-bot-github" } }] } }])), "may not reference a Secret"],
      ["an image pull Secret", pod("bnd-pull-secret", (s) => (s.imagePullSecrets = [{ name: "payments-bot-github" }])), "may not reference a Secret"],
      ["an inline CSI volume", pod("bnd-csi", (s) => (s.volumes = [{ name: "v", csi: { driver: "secrets-store.csi.k8s.io" } }])), "may not mount csi or ephemeral volumes"],
      ["an ephemeral volume", pod("bnd-ephemeral", (s) => (s.volumes = [{ name: "v", ephemeral: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } } } }])), "may not mount csi or ephemeral volumes"],
      ["nodeName", pod("bnd-node", (s) => (s.nodeName = "node-1")), "may not set nodeName"],
      ["another runtime class", pod("bnd-runtime-class", (s) => (s.runtimeClassName = RUNTIME_CLASS)), "must run with the workspace's runtime class (none)"],
      ["no owner", pod("bnd-unowned", () => {}, { ownerReferences: undefined }), "only what it made"],
      ["a second owner, which would outlive the lease", pod("bnd-two-owners", () => {}, { ownerReferences: [...owned(), { apiVersion: "v1", kind: "ConfigMap", name: "kube-root-ca.crt", uid: "x" }] }), "only what it made"],
      ["a finalizer", pod("bnd-finalizer", () => {}, { finalizers: ["example.com/keep"] }), "only what it made"],
      ["the Job controller's labels, which would have the workspace Job adopt it", pod("bnd-job-label", () => {}, { labels: { "batch.kubernetes.io/controller-uid": "uid-of-the-workspace-job", "controller-uid": "uid-of-the-workspace-job" } }), "may not carry the labels"],
    ];
    it.each(refusals)("a pod of its own with %s is refused", async (_, o, text) => {
      expect(await can(RUNTIME, { namespace: EDIT.ns, resource: "pods", verb: "create" }), "RBAC lets the runtime create pods").toBe(true);
      await refusedBy(asRuntime(o), "berth-workspace-runtime", text, `the runtime creating ${o.metadata!.name}`);
    });

    it("a pod asking for no CPU and no memory is refused by the LimitRange (the quota would count it as nothing)", async () => {
      const zero = pod("bnd-zero", (s) => (s.containers[0].resources = { requests: { cpu: "0", memory: "0" }, limits: { cpu: "0", memory: "0" } }));
      const r = await asRuntime(zero);
      expect(r.status, r.text).toBe(403);
      expect(r.body.message).toContain("minimum cpu usage per Container is 1m");
    });

    it("workloads: a Deployment or CronJob whose pods name a Secret, and a Job that picks its own selector or the workspace Job's pods, are refused", async () => {
      const template = (edit: (s: any) => void = () => {}, labels: Record<string, string> = { app: "mine" }) => ({ metadata: { labels }, spec: podSpec(edit) });
      const secretEnv = (s: any) => (s.containers[0].env = [{ name: "T", valueFrom: { secretKeyRef: { name: "payments-bot-github", key: "token" } } }]);
      const meta = (name: string) => ({ name, namespace: EDIT.ns, ownerReferences: owned() });
      await refusedBy(asRuntime({ apiVersion: "apps/v1", kind: "Deployment", metadata: meta("bnd-deploy"), spec: { selector: { matchLabels: { app: "mine" } }, template: { ...template(secretEnv), spec: { ...podSpec(secretEnv), restartPolicy: "Always" } } } }), "berth-workspace-runtime", "may not reference a Secret", "a Deployment");
      await refusedBy(asRuntime({ apiVersion: "batch/v1", kind: "CronJob", metadata: meta("bnd-cron"), spec: { schedule: "* * * * *", jobTemplate: { spec: { template: template(secretEnv) } } } }), "berth-workspace-runtime", "may not reference a Secret", "a CronJob");
      const manual = (labels: Record<string, string>) => ({ apiVersion: "batch/v1", kind: "Job", metadata: meta("bnd-manual"), spec: { manualSelector: true, selector: { matchLabels: labels }, template: template(() => {}, labels) } });
      await refusedBy(asRuntime(manual({ app: "mine" })), "berth-workspace-runtime", "may not set manualSelector", "a Job that picks its own selector");
      await refusedBy(asRuntime(manual({ "batch.kubernetes.io/job-name": "workspace" })), "berth-workspace-runtime", "may not carry the labels", "a Job whose pods would be the workspace Job's");
      await must(await asRuntime({ apiVersion: "apps/v1", kind: "Deployment", metadata: meta("bnd-deploy"), spec: { selector: { matchLabels: { app: "mine" } }, template: { ...template(), spec: { ...podSpec(), restartPolicy: "Always" } } } }), 201, "control: the same Deployment without the Secret");
      await must(await asRuntime({ apiVersion: "batch/v1", kind: "Job", metadata: meta("bnd-job"), spec: { template: template() } }), 201, "control: a Job that lets the API server pick its selector");
    });

    it("control: the pod that follows the rules is admitted, and the runtime deletes it; a pod of its making goes with the lease", async () => {
      expect(leaseUid, `ConfigMap ${LEASE} exists in ${EDIT.ns}`).toBeDefined();
      await must(await asRuntime(pod("bnd-ok")), 201, "the pod that follows the rules (dry run)");
      const made = await must(await c.create(pod("bnd-made"), { as: RUNTIME }), 201, "the runtime making it for real");
      await must(await c.request("DELETE", `${podsPath}/bnd-made`, undefined, { as: RUNTIME }), 200, "the runtime deleting what it made");
      expect(made.body.metadata.ownerReferences).toEqual(owned());
      // What it made goes with the lease: delete the lease (Crossplane makes a new one) and the
      // garbage collector deletes the pod, whose owner is gone.
      await must(await c.create(pod("bnd-leased"), { as: RUNTIME }), 201, "the runtime making a pod under its lease");
      await c.delete("v1", "ConfigMap", LEASE, EDIT.ns);
      await waitFor("the pod gone with its lease", async () => (await c.get("v1", "Pod", "bnd-leased", EDIT.ns)) === undefined, 90_000);
      const renewed = await waitFor("a new lease", async () => {
        const l = await c.get("v1", "ConfigMap", LEASE, EDIT.ns);
        return l?.metadata?.uid !== leaseUid && l;
      }, 90_000);
      leaseUid = renewed.metadata!.uid;
    });

    it("it may not delete or relabel what Berth made: the workspace Job, or the pod of the run", async () => {
      await waitFor(`Job workspace in ${EDIT.ns}`, () => c.get("batch/v1", "Job", "workspace", EDIT.ns), 120_000);
      await refusedBy(dryRun("DELETE", `/apis/batch/v1/namespaces/${EDIT.ns}/jobs/workspace`, undefined, RUNTIME), "berth-workspace-runtime", "only what it made", "the runtime deleting the workspace Job");
      // The run's pod, as the Job controller labels it (the local control plane runs no Job controller: the test stands in).
      const runPod = pod("bnd-run-pod", () => {}, { ownerReferences: undefined, labels: { "batch.kubernetes.io/job-name": "workspace", "job-name": "workspace" } });
      await c.apply(runPod);
      // Two policies refuse this one (the pod was the Job's, and is not the runtime's); the API
      // server names whichever it evaluated first.
      const strip = await mergePatch(`${podsPath}/bnd-run-pod`, { metadata: { labels: { "batch.kubernetes.io/job-name": null, "job-name": null } } }, RUNTIME);
      expect(strip.status, `the runtime stripping the run's pod of its Job's label should be refused: ${strip.text}`).toBe(403);
      expect(strip.body.message).toMatch(/ValidatingAdmissionPolicy '(berth-workspace-runtime|berth-evidence-pods)'.*(only what it made|only the Job controller makes a pod of the workspace)/);
      await refusedBy(dryRun("DELETE", `${podsPath}/bnd-run-pod`, undefined, RUNTIME), "berth-workspace-runtime", "only what it made", "the runtime deleting the run's pod");
      await refusedBy(dryRun("DELETE", `/api/v1/namespaces/${EDIT.ns}/configmaps/${LEASE}`, undefined, RUNTIME), "berth-workspace-runtime", "only what it made", "the runtime deleting its lease");
      await c.delete("v1", "Pod", "bnd-run-pod", EDIT.ns);
    });

    it("RBAC keeps it from Secrets, exec, attach, ephemeral containers and pod status (held on 539ceab too)", async () => {
      for (const [resource, subresource, verb] of [
        ["secrets", "", "get"],
        ["secrets", "", "list"],
        ["pods", "exec", "create"],
        ["pods", "attach", "create"],
        ["pods", "ephemeralcontainers", "patch"],
        ["pods", "status", "patch"],
        ["roles", "", "create"],
        ["networkpolicies", "", "delete"],
      ] as const) {
        const attrs = { namespace: EDIT.ns, resource, verb, ...(subresource ? { subresource } : {}), ...(resource === "roles" ? { group: "rbac.authorization.k8s.io" } : resource === "networkpolicies" ? { group: "networking.k8s.io" } : {}) };
        expect(await can(RUNTIME, attrs), `${verb} ${resource}${subresource ? `/${subresource}` : ""}`).toBe(false);
      }
    });
  });

  describe("findings 3 and 7: a gated destination has no side door; a credential cannot steer the runtime", () => {
    const refusedWith = async (name: string, text: string) => {
      await settled(
        `${name} refused, or its Namespace made`,
        async () => String(condition(await xr("DeveloperWorkspace", name), "Synced")?.message ?? "").includes(text),
        async () => (await c.get("v1", "Namespace", `ws-${name.replace(/-xr$/, "")}`)) !== undefined && (await c.request("GET", `/apis/networking.k8s.io/v1/namespaces/ws-${name.replace(/-xr$/, "")}/networkpolicies`)).body?.items?.length > 0,
      );
      expect(condition(await xr("DeveloperWorkspace", name), "Synced")).toMatchObject({ status: "False" });
      expect(condition(await xr("DeveloperWorkspace", name), "Synced")?.message).toContain(text);
      expect(await c.get("v1", "Namespace", `ws-${name.replace(/-xr$/, "")}`), "nothing was created").toBeUndefined();
    };

    it("a second, ungated MCP capability to the gated server is refused, naming the field; no egress-mcp-raw exists", async () => {
      await c.apply(developerWorkspace("bnd-gated", (s) => (s.capabilities.mcp = [{ name: "docs", destination: "docs-mcp", tools: ["search"] }, { name: "raw", destination: "docs-mcp" }])));
      await refusedWith("bnd-gated-xr", 'spec.capabilities.mcp[1].destination: "docs-mcp" is reached only through the MCP gate');
      expect(await c.get("networking.k8s.io/v1", "NetworkPolicy", "egress-mcp-raw", "ws-bnd-gated")).toBeUndefined();
    });

    it("a reviewed Service without ports is refused (an egress rule without ports allows every port)", async () => {
      await c.apply({ apiVersion: "v1", kind: "Service", metadata: { name: "bnd-headless", namespace: "mcp", labels: LABEL }, spec: { clusterIP: "None", selector: { app: "bnd-headless" } } });
      const profile = loadOne("examples/profile.yaml");
      profile.metadata = { name: "bnd-headless", labels: LABEL };
      profile.spec.destinations.push({ name: "headless", service: { namespace: "mcp", name: "bnd-headless" } });
      await c.apply(profile);
      await c.apply(developerWorkspace("bnd-headless", (s) => {
        s.profileRef = { name: "bnd-headless" };
        s.capabilities.registries = [{ destination: "headless" }];
      }));
      await refusedWith("bnd-headless-xr", 'Service "mcp/bnd-headless" has no ports, and an egress rule without ports allows every port');
    });

    it("a git credential for a repository on a host the profile does not review for the git destination is refused", async () => {
      await c.apply(developerWorkspace("bnd-host", (s) => (s.source.repository = "https://gateway.ai-gateway.svc/example/payments.git")));
      await refusedWith("bnd-host-xr", 'spec.source.repository: host "gateway.ai-gateway.svc" is not a host WorkspaceProfile "standard" reviews for destination "github"');
    });

    it("a credential named servers, which would set BERTH_MCP_SERVERS in the runtime, is refused, naming the field", async () => {
      await c.apply(developerWorkspace("bnd-servers", (s) => s.credentials.push({ name: "servers", purpose: "mcp", secretRef: { name: "x", key: "token" } })));
      await refusedWith("bnd-servers-xr", 'spec.credentials[1].name: "servers" would set BERTH_MCP_SERVERS in the runtime');
    });
  });
});
