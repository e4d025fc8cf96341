import type { KubeObject } from "../model.js";
import type { Lookup, RequiredResources } from "../required.js";
import type { NamespaceProfile } from "../workspace.js";
import { renderLimitRange } from "./limit-range.js";
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
  if (observed.namespace !== undefined) return objects;
  if (required.state === "found" && required.object.metadata?.deletionTimestamp === undefined) return objects;
  return Object.fromEntries(Object.entries(objects).filter(([name, o]) => o.metadata?.namespace === undefined || observed[name] !== undefined));
}

/**
 * What runs code comes after its boundary. In the pass that creates a workspace's objects,
 * Crossplane applies them in no set order and stops at the first that fails, so a workload
 * applied in the same pass as the boundary can start a pod before its default-deny
 * NetworkPolicy, its egress allowances, its ResourceQuota or its ServiceAccount exist: for that
 * moment the pod is unbounded (rule 5), or the network plugin denies it the egress its checkout
 * needs and the run fails. So the workload objects (`workload`, by composition resource name)
 * that do not exist yet are wanted only once every other namespaced object is observed; one
 * that exists is never dropped. Observed, not fetched: the boundary's existence is what matters,
 * and Crossplane reports it for every composed object with no extra request.
 */
export function workloadLast(objects: Record<string, KubeObject>, observed: Record<string, KubeObject>, workload: readonly string[]): Record<string, KubeObject> {
  const boundaryMissing = Object.entries(objects).some(([name, o]) => !workload.includes(name) && o.metadata?.namespace !== undefined && observed[name] === undefined);
  if (!boundaryMissing) return objects;
  return Object.fromEntries(Object.entries(objects).filter(([name]) => !workload.includes(name) || observed[name] !== undefined));
}

/**
 * The order a workspace's objects are created in: its Namespace first, its workload last.
 */
export function inCreationOrder(objects: Record<string, KubeObject>, observed: Record<string, KubeObject>, namespace: Lookup, workload: readonly string[]): Record<string, KubeObject> {
  return namespaceFirst(workloadLast(objects, observed, workload), observed, namespace);
}

/**
 * The workspace's Namespace as a required resource. Asked for on every call, first, so that it
 * is in the first round of Crossplane's requirement loop and the set of requirements stays the
 * same from call to call (a changed set costs another round).
 */
export function workspaceNamespaceLookup(required: RequiredResources, namespace: string): Lookup {
  return required.get("workspace-namespace", { apiVersion: "v1", kind: "Namespace", name: namespace });
}
