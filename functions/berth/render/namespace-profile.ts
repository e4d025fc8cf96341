import type { KubeObject } from "../model.js";
import { ownLookup } from "../observe/ownership.js";
import type { Lookup, RequiredResources } from "../resolve/required.js";
import type { NamespaceProfile } from "../workspace.js";
import { renderCaBundles } from "./evidence.js";
import { renderLimitRange } from "./limit-range.js";
import { renderMcpGate } from "./mcp-gate.js";
import { renderNamespace } from "./namespace.js";
import { renderNetworkPolicies } from "./network-policies.js";
import { renderRbac } from "./rbac.js";
import { renderResourceQuota } from "./resource-quota.js";
import { renderServiceAccount } from "./service-account.js";
import { renderPersistentVolumeClaim } from "./storage.js";

/** Every object of the Namespace profile, by composition resource name. */
export function renderNamespaceProfile(p: NamespaceProfile): Record<string, KubeObject> {
  const volume = renderPersistentVolumeClaim(p);
  return {
    namespace: renderNamespace(p),
    "service-account": renderServiceAccount(p),
    "resource-quota": renderResourceQuota(p),
    "limit-range": renderLimitRange(p),
    ...renderNetworkPolicies(p),
    ...(volume ? { volume } : {}),
    ...renderRbac(p),
    ...renderMcpGate(p),
    ...renderCaBundles(p),
  };
}

/**
 * Crossplane applies desired resources in no set order and stops at the first one that fails,
 * so an object applied before its Namespace exists fails the whole apply, again and again
 * until the Namespace happens to come first. Until the Namespace exists, only it, the
 * cluster-scoped objects and whatever already exists (which must never be dropped) are wanted.
 *
 * It exists when it is observed as composed, or when Crossplane fetched it as a required
 * resource (`workspaceNamespaceLookup`). The second matters under load: Crossplane observes
 * composed resources through the XR's resourceRefs as its cache of XRs holds them, and when the
 * API server closes that watch as too slow, the cache lags a minute or more; the workspace then
 * rendered its Namespace alone, reconcile after reconcile, while the Namespace had long existed.
 * A Namespace being deleted does not count: nothing can be created in it.
 */
export function namespaceFirst(objects: Record<string, KubeObject>, observed: Record<string, KubeObject>, required: Lookup): Record<string, KubeObject> {
  if (namespaceExists(observed, required)) return objects;
  return Object.fromEntries(Object.entries(objects).filter(([name, o]) => o.metadata?.namespace === undefined || observed[name] !== undefined));
}

/** The workspace's Namespace exists: observed as composed, or fetched and not being deleted. */
function namespaceExists(observed: Record<string, KubeObject>, required: Lookup): boolean {
  return observed.namespace !== undefined || (required.state === "found" && required.object.metadata?.deletionTimestamp === undefined);
}

/**
 * What runs code comes after its boundary. In the pass that creates a workspace's objects,
 * Crossplane applies them in no set order and stops at the first that fails, so a workload
 * applied in the same pass as the boundary can start a pod before its default-deny
 * NetworkPolicy, its egress allowances, its ResourceQuota or its ServiceAccount exist: for that
 * moment the pod is unbounded (rule 5), or the network plugin denies it the egress its checkout
 * needs and the run fails. So the workload objects (`workload`, by composition resource name)
 * that do not exist yet are wanted only once every other namespaced object exists; one that
 * exists is never dropped.
 *
 * An object exists when it is observed as composed, or when Crossplane fetched it as a
 * required resource (`boundaryLookups`). The second matters under load, as for the Namespace:
 * Crossplane observes composed resources through the XR's resourceRefs in its cache of XRs, and
 * when that cache lags (the API server closes a watch it cannot keep fed), a reconcile sees the
 * boundary it created itself as missing and holds the workload back again, reconcile after
 * reconcile; Crossplane's caches of the composed kinds keep up. Found by name, an object counts
 * only when this XR controls it (ownership.ts).
 */
export function workloadLast(objects: Record<string, KubeObject>, observed: Record<string, KubeObject>, workload: readonly string[], boundary: Record<string, Lookup>): Record<string, KubeObject> {
  const exists = (name: string) => observed[name] !== undefined || boundary[name]?.state === "found";
  const boundaryMissing = Object.entries(objects).some(([name, o]) => !workload.includes(name) && o.metadata?.namespace !== undefined && !exists(name));
  if (!boundaryMissing) return objects;
  return Object.fromEntries(Object.entries(objects).filter(([name]) => !workload.includes(name) || observed[name] !== undefined));
}

/**
 * Every boundary object (namespaced, not `workload`) as a required resource, keyed by its
 * composition resource name, while it matters: once the workspace's Namespace exists (before,
 * none can exist) and until every workload object exists (after, nothing waits for the
 * boundary). Asked on every call in between, observed or not, so that the set of requirements
 * stays the same from one reconcile to the next and Crossplane seeds each call with it: the set
 * changes twice in a workspace's life, each time costing one more call.
 */
function boundaryLookups(
  composite: KubeObject,
  required: RequiredResources,
  objects: Record<string, KubeObject>,
  observed: Record<string, KubeObject>,
  workload: readonly string[],
  namespaceExists: boolean,
): Record<string, Lookup> {
  const waiting = Object.keys(objects).some((name) => workload.includes(name) && observed[name] === undefined);
  if (!namespaceExists || !waiting) return {};
  const out: Record<string, Lookup> = {};
  for (const [name, o] of Object.entries(objects)) {
    const namespace = o.metadata?.namespace;
    if (workload.includes(name) || namespace === undefined) continue;
    out[name] = ownLookup(required.get(`boundary-${name}`, { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata!.name!, namespace }), composite);
  }
  return out;
}

/**
 * The order a workspace's objects are created in: its Namespace first, its workload last.
 * `namespace` is the workspace's own (ownership.ts, namespaceClaim, is checked first).
 */
export function inCreationOrder(
  composite: KubeObject,
  objects: Record<string, KubeObject>,
  observed: Record<string, KubeObject>,
  required: RequiredResources,
  namespace: Lookup,
  workload: readonly string[],
): Record<string, KubeObject> {
  const boundary = boundaryLookups(composite, required, objects, observed, workload, namespaceExists(observed, namespace));
  return namespaceFirst(workloadLast(objects, observed, workload, boundary), observed, namespace);
}

/**
 * The workspace's Namespace as a required resource. Asked for on every call, first, so that it
 * is in the first round of Crossplane's requirement loop and the set of requirements stays the
 * same from call to call (a changed set costs another round).
 */
export function workspaceNamespaceLookup(required: RequiredResources, namespace: string): Lookup {
  return required.get("workspace-namespace", { apiVersion: "v1", kind: "Namespace", name: namespace });
}
