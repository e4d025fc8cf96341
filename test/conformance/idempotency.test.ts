// Issue 30: every object Berth renders is a fixed point of Crossplane's apply.
//
// Crossplane 2.4 server-side-applies every desired object on every reconcile, without comparing
// it with the live one first. An object whose rendered fields do not round-trip through the API
// server (a field it drops, defaults differently or normalizes into something the next apply
// changes back) is then written on every reconcile: a new resourceVersion, a watch event, and one
// more reconcile of the XR that composes it. So each example's converged objects are applied
// here as Crossplane applies them (its field owner, the metadata it adds) and then applied again:
// the second apply must not move any resourceVersion.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { asObserved, fatalMessages, renderConverged } from "../../functions/berth/tooling/local-render.js";
import { type ComposedController, withComposedMetadata } from "../../functions/berth/tooling/render-output.js";
import type { KubeObject } from "../../functions/berth/model.js";
import { RENDER_EXAMPLES } from "../render-examples.js";
import { Cluster, load, loadOne, type Obj, ref, sleep, subsetDiff, waitFor } from "./setup.js";

const c = new Cluster(inject("kubeconfig"));

/** Every name this file creates starts with it, so it touches no other file's workspaces. */
const PREFIX = "idem-";

/**
 * The example as a document of its own: renamed so that its Namespace and cluster-scoped objects
 * are this file's alone. Other documents it refers to (a checkpoint's workspace) are renamed alike.
 */
function renamed(o: Obj): Obj {
  const copy = structuredClone(o);
  switch (copy.kind) {
    case "DeveloperWorkspace":
      copy.spec.workspaceID = `${PREFIX}${copy.spec.workspaceID}`;
      copy.metadata!.name = `${copy.spec.workspaceID}-xr`;
      break;
    case "WorkspaceCheckpoint":
      copy.spec.workspaceRef.name = `${PREFIX}${copy.spec.workspaceRef.name}`;
      copy.metadata!.name = `${PREFIX}${copy.metadata!.name}`;
      break;
    default:
      copy.metadata!.name = `${PREFIX}${copy.metadata!.name}`;
  }
  return copy;
}

/** Crossplane 2.4's field owner for what one XR composes (ComposedFieldOwnerName): a hash of the XR's name and group kind. */
function composedFieldOwner(xr: { apiVersion: string; kind: string; name: string }): string {
  const group = xr.apiVersion.split("/")[0];
  const hash = createHash("sha256").update(`${xr.name}${xr.kind}.${group}`).digest("hex");
  return `apiextensions.crossplane.io/composed/${hash}`;
}

/** Crossplane's apply of one composed object: force, under its field owner. Returns the live object. */
async function applyAsCrossplane(o: Obj, fieldOwner: string): Promise<Obj> {
  const path = await c.path(o.apiVersion!, o.kind!, o.metadata!.name!, o.metadata?.namespace);
  const res = await c.request("PATCH", `${path}?fieldManager=${encodeURIComponent(fieldOwner)}&force=true`, o, { contentType: "application/apply-patch+yaml" });
  if (res.status !== 200 && res.status !== 201) throw new Error(`apply of ${ref(o)} as ${fieldOwner}: HTTP ${res.status}: ${res.text.slice(0, 500)}`);
  return res.body as Obj;
}

interface Composed {
  example: string;
  /** The renamed document the objects were rendered from. */
  document: Obj;
  /** The XR's name: Crossplane labels each object with it and derives its field owner from it. */
  xrName: string;
  fieldOwner: string;
  /** What the example converges to, as Berth renders it, Namespaces first (the others live in them). */
  objects: { resourceName: string; object: KubeObject }[];
}

async function composedByExample(example: (typeof RENDER_EXAMPLES)[number]): Promise<Composed> {
  const document = renamed(loadOne(example.document));
  // A checkpoint's workspace is among its required documents; no example requires its own kind.
  const cluster = example.required.flatMap((p) => load(p)).map((o) => (o.kind === "ExecutionWorkspace" ? renamed(o) : o));
  const { response } = (await renderConverged(document as KubeObject, cluster as KubeObject[])).at(-1)!;
  expect(fatalMessages(response), example.name).toEqual([]);
  const xrName = document.metadata!.name!;
  const objects = Object.entries(asObserved(response)).map(([resourceName, object]) => ({ resourceName, object }));
  objects.sort((a, b) => Number(b.object.kind === "Namespace") - Number(a.object.kind === "Namespace"));
  return { example: example.name, document, xrName, fieldOwner: composedFieldOwner({ apiVersion: document.apiVersion!, kind: document.kind!, name: xrName }), objects };
}

/** The fields of a live object that say what a write changed: all but its resourceVersion. */
function content(o: Obj): Obj {
  const { resourceVersion: _rv, ...metadata } = o.metadata ?? {};
  return { ...o, metadata };
}

/**
 * Applies the object again until one apply leaves its resourceVersion where it was. Controllers
 * write to some of these objects (the quota's usage, a Job's status, a PVC's annotations), and
 * such a write may land between the read and the apply; it does not repeat on every attempt,
 * while a field that does not round-trip moves the resourceVersion every time. Returns undefined
 * when an apply did not write, else what the last apply changed.
 */
async function writesOnReapply(o: Obj, fieldOwner: string, attempts = 4): Promise<string | undefined> {
  let change = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const before = await c.getOf<Obj>(o);
    if (!before) return `${ref(o)} is gone`;
    const after = await applyAsCrossplane(o, fieldOwner);
    if (after.metadata?.resourceVersion === before.metadata?.resourceVersion) return undefined;
    change = subsetDiff(content(after), content(before)).join("; ") || "nothing but its resourceVersion";
    await sleep(1000);
  }
  return `the apply wrote on each of ${attempts} attempts; the last, as it left the object against the object before it: ${change}`;
}

describe("every object Berth renders is a fixed point of Crossplane's apply", () => {
  // The objects' controller: a stand-in this file creates. The XR is not created here (Crossplane
  // would compose it too), and an owner that does not exist would have the garbage collector
  // delete the objects between the two applies.
  const owner: Obj = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: `${PREFIX}owner` }, rules: [] };
  let controller: ComposedController;
  const composed: Composed[] = [];

  /**
   * The params of the class admission bindings this file applies: each renamed class, paused so
   * that Crossplane does not compose it. A class's binding matches every ExecutionWorkspace write
   * and denies when its class is not found (parameterNotFoundAction Deny), so a binding without
   * its class would refuse the other files' ExecutionWorkspaces in the shared cluster.
   */
  const bindingParams = () =>
    composed.filter((x) => x.document.kind === "ExecutionWorkspaceClass").map((x) => ({ ...x.document, metadata: { ...x.document.metadata, annotations: { "crossplane.io/paused": "true" } } }));

  async function deleteAndWait(objects: Obj[]): Promise<void> {
    for (const o of objects) await c.delete(o.apiVersion!, o.kind!, o.metadata!.name!);
    await waitFor(`${objects.map(ref).join(", ")} gone`, async () => (await Promise.all(objects.map((o) => c.getOf(o)))).every((o) => o === undefined), 180_000, 1000);
  }

  /** Deletes the stand-in owner and every cluster-scoped object this file composes (a Namespace takes its contents), then the bindings' params, and waits until they are gone. */
  async function removeEverything(): Promise<void> {
    await deleteAndWait([owner, ...composed.flatMap((x) => x.objects.map(({ object }) => object as Obj)).filter((o) => !o.metadata?.namespace)]);
    await deleteAndWait(bindingParams());
  }

  beforeAll(async () => {
    for (const example of RENDER_EXAMPLES) {
      const rendered = await composedByExample(example);
      if (rendered.objects.length > 0) composed.push(rendered);
    }
    // A run stopped before its afterAll leaves its objects behind: start from none.
    await removeEverything();
    for (const p of bindingParams()) await c.apply(p);
    const live = await c.apply(owner);
    controller = { apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata!.name!, uid: live.metadata!.uid! };
  });

  afterAll(removeEverything);

  it("the field owner is Crossplane's: the name a composed Namespace's managedFields carried on the local control plane", () => {
    // Recorded 2026-12-06 from ws-agent-fix-1234, composed by Crossplane 2.4.0 from examples/developerworkspace-ephemeral.yaml.
    expect(composedFieldOwner({ apiVersion: "workspaces.berth.dev/v1alpha1", kind: "DeveloperWorkspace", name: "agent-fix-1234-xr" })).toBe(
      "apiextensions.crossplane.io/composed/158038099d249e30d5c2d279fbc6ed344e5b0ddd7dbfe50a61e6ecdee3a05865",
    );
  });

  it("the examples compose every kind Berth renders", () => {
    const kinds = new Set(composed.flatMap((x) => x.objects.map(({ object }) => object.kind)));
    expect([...kinds].sort()).toEqual([
      "ActorTemplate", "ClusterRole", "ConfigMap", "Deployment", "Job", "LimitRange", "Namespace", "NetworkPolicy", "PersistentVolumeClaim", "ResourceQuota",
      "Role", "RoleBinding", "Sandbox", "Service", "ServiceAccount", "ValidatingAdmissionPolicyBinding", "VolumeSnapshot", "VolumeSnapshotContent", "WorkerPool",
    ]);
  });

  it("applied twice with Crossplane's field owner, no object is written the second time", async () => {
    // Each object as Crossplane sends it: with the metadata its composer adds.
    const sent = composed.flatMap(({ example, xrName, fieldOwner, objects }) =>
      objects.map(({ resourceName, object }) => ({ example, resourceName, fieldOwner, object: withComposedMetadata(object, resourceName, xrName, controller) as Obj })),
    );
    for (const { object, fieldOwner } of sent) await applyAsCrossplane(object, fieldOwner);
    const written: string[] = [];
    for (const { example, resourceName, fieldOwner, object } of sent) {
      const change = await writesOnReapply(object, fieldOwner);
      if (change) written.push(`${example}: ${resourceName} (${ref(object)}): ${change}`);
    }
    // What breaks it (tried 2026-12-06): an empty list or map the API server does not keep as
    // applied, e.g. `ingress: []` or `podSelector: { matchLabels: {} }` in a NetworkPolicy, which
    // moved its generation on every apply. An empty Namespace finalizers list, a quantity such
    // as 4000m, `creationTimestamp: null` or an empty annotation did not.
    expect(written, `objects Crossplane would write on every reconcile (a field that does not round-trip):\n${written.join("\n")}`).toEqual([]);
  });
});
