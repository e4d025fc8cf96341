import type { KubeObject } from "../model.js";
import type { Problem } from "../problems.js";
import type { Lookup } from "../resolve/required.js";

/**
 * A workspace owns only what it created. Crossplane records that on every object it composes,
 * as the one ownerReference with `controller: true`, naming the XR by kind, name and uid; it
 * already ignores observed objects another XR controls. Objects Berth finds by name (the
 * Namespace, and the boundary while the workload waits for it) are fetched as required
 * resources, which say nothing about who made them: without this check an ExecutionWorkspace
 * named `alice` found the Namespace `ws-alice` of the DeveloperWorkspace `alice-xr`, counted its
 * boundary as its own, and rendered policies, RBAC and a Sandbox mounting Alice's volume into it.
 */

interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/** The object's controller: the one ownerReference marked `controller: true`. */
export function controllerOf(o: KubeObject): OwnerReference | undefined {
  const refs = (o.metadata as { ownerReferences?: OwnerReference[] } | undefined)?.ownerReferences ?? [];
  return refs.find((r) => r.controller === true);
}

/**
 * Whether `composite` controls `o`. The uid decides (a document deleted and re-created under the
 * same name is another document); a composite without one (a local render) is matched by kind
 * and name.
 */
export function isControlledBy(o: KubeObject, composite: KubeObject): boolean {
  const c = controllerOf(o);
  if (c === undefined || c.kind !== composite.kind || c.name !== composite.metadata?.name) return false;
  const uid = (composite.metadata as { uid?: string } | undefined)?.uid;
  return uid === undefined || c.uid === uid;
}

/** A lookup as this composite may count it: an object it does not control is not there for it. */
export function ownLookup(lookup: Lookup, composite: KubeObject): Lookup {
  return lookup.state === "found" && !isControlledBy(lookup.object, composite) ? { state: "missing" } : lookup;
}

/** How an object's controller reads in a message: `DeveloperWorkspace "alice-payments-xr"`. */
const describeController = (c: OwnerReference) => `${c.kind ?? "an object"} "${c.name ?? ""}"`;

/**
 * The workspace's Namespace, when it exists, must be the workspace's own. A Namespace another
 * document controls, or one that nobody does (made by hand, or left by something else), is a
 * refusal that names it: Berth never adopts a Namespace, because whatever it renders there
 * (NetworkPolicies with `podSelector: {}`, a Role, a pod mounting `workspace`) acts on pods and
 * volumes that are not the workspace's.
 */
export function namespaceClaim(lookup: Lookup, composite: KubeObject, namespace: string): (Problem & { type: "refused" }) | undefined {
  if (lookup.state !== "found" || isControlledBy(lookup.object, composite)) return undefined;
  const controller = controllerOf(lookup.object);
  const deleting = lookup.object.metadata?.deletionTimestamp !== undefined ? " (it is being deleted; this workspace is rendered once it is gone)" : "";
  return {
    type: "refused",
    reason: "NamespaceTaken",
    message:
      controller === undefined
        ? `Namespace "${namespace}" already exists and no workspace controls it${deleting}: Berth renders a workspace only into the Namespace it creates, and never adopts one; delete it or choose another name`
        : `Namespace "${namespace}" belongs to ${describeController(controller)}${deleting}: a workspace renders only into the Namespace it creates; choose another name`,
  };
}

/**
 * Who created an ExecutionWorkspace or a WorkspaceCheckpoint, recorded by its creator and checked
 * at admission (admission/policies.yaml, berth-workspace-owner: it must be the requester's own
 * user name, and it never changes). Only that user (and Crossplane, the operators and
 * administrators) may change or delete the object afterwards.
 */
export const CREATED_BY = "workspaces.berth.dev/created-by";

/** The recorded creator, if any (an object made by an operator or administrator may have none). */
export function createdBy(o: { metadata?: unknown }): string | undefined {
  const value = (o.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations?.[CREATED_BY];
  return typeof value === "string" && value !== "" ? value : undefined;
}
