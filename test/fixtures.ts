import { readFileSync } from "node:fs";
import { RunFunctionRequest, type Resource } from "@crossplane-org/function-sdk-typescript";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../functions/berth/model.js";
import { runFunction } from "../functions/berth/function.js";
import { asObserved } from "../functions/berth/tooling/local-render.js";

export function loadObjects(path: string): KubeObject[] {
  return parseAllDocuments(readFileSync(path, "utf8")).map((d) => d.toJS() as KubeObject);
}

export function loadObject(path: string): KubeObject {
  const [o] = loadObjects(path);
  if (!o) throw new Error(`${path} holds no object`);
  return o;
}

export const PROFILE = loadObject("examples/profile.yaml");
export const STORAGE_CLASS = loadObject("examples/cluster/storageclass.yaml");
export const SERVICES = loadObjects("examples/cluster/services.yaml");
export const PERSISTENT = loadObject("examples/developerworkspace-persistent.yaml");
export const EPHEMERAL = loadObject("examples/developerworkspace-ephemeral.yaml");
export const REVIEW = loadObject("examples/developerworkspace-review.yaml");
export const EXAMPLE_WORKSPACES = { persistent: PERSISTENT, ephemeral: EPHEMERAL, review: REVIEW };

/** A deep copy with changes applied by `edit`, for table cases that differ from an example. */
export function edited<T>(o: T, edit: (copy: T) => void): T {
  const copy = structuredClone(o);
  edit(copy);
  return copy;
}

/** managedFields entries of the kind the API server keeps, each naming `keys` annotation fields. */
export function managedFields(count: number, keys: number): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    manager: `controller-${i}`,
    operation: "Update",
    apiVersion: "v1",
    time: "2026-12-01T00:00:00Z",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:metadata": { "f:annotations": Object.fromEntries(Array.from({ length: keys }, (_, k) => [`f:example.com/note-${i}-${k}`, {}])) } },
  }));
}

export const resource = (o: KubeObject): Resource => ({ resource: o, connectionDetails: {}, ready: 0 });

/** Required resources under the keys the function asks for, as Crossplane hands them back. */
export function required(entries: Record<string, KubeObject[]>): RunFunctionRequest["requiredResources"] {
  return Object.fromEntries(Object.entries(entries).map(([k, items]) => [k, { items: items.map(resource) }]));
}

/** Everything the example profile refers to, found. */
export const ALL_REQUIRED = {
  profile: [PROFILE],
  "storage-class": [STORAGE_CLASS],
  "service-ai-gateway-gateway": [SERVICES[0]!],
  "service-mcp-docs": [SERVICES[1]!],
};

export function request(
  composite: KubeObject,
  opts: { required?: Record<string, KubeObject[]>; observed?: Record<string, KubeObject> } = {},
): RunFunctionRequest {
  return RunFunctionRequest.fromPartial({
    meta: { tag: "test" },
    observed: {
      composite: resource(composite),
      resources: Object.fromEntries(Object.entries(opts.observed ?? {}).map(([k, o]) => [k, resource(o)])),
    },
    requiredResources: required(opts.required ?? {}),
  });
}

export const CLASS_SANDBOX = loadObject("examples/class-sandbox.yaml");
export const CLASS_SUBSTRATE = loadObject("examples/class-substrate.yaml");
export const EW_SANDBOX = loadObject("examples/executionworkspace-sandbox.yaml");
export const EW_SUBSTRATE = loadObject("examples/executionworkspace-substrate.yaml");
export const EW_RESTORE = loadObject("examples/executionworkspace-restore.yaml");
export const EW_FORK = loadObject("examples/executionworkspace-fork.yaml");
export const CHECKPOINT = loadObject("examples/checkpoint.yaml");
export const CHECKPOINT_READY = loadObject("examples/cluster/checkpoint-ready.yaml");

/** Everything an execution workspace of the sandbox class refers to, found. */
export const SANDBOX_REQUIRED = {
  class: [CLASS_SANDBOX],
  profile: [PROFILE],
  "storage-class": [STORAGE_CLASS],
  "service-ai-gateway-gateway": [SERVICES[0]!],
  "service-mcp-docs": [SERVICES[1]!],
  checkpoint: [CHECKPOINT_READY],
};
export const SUBSTRATE_REQUIRED = { ...SANDBOX_REQUIRED, class: [CLASS_SUBSTRATE] };

/**
 * The controller reference Crossplane puts on every object it composes for `composite`
 * (RenderComposedResourceMetadata): what tells the workspace's own objects from anyone else's.
 */
export function composedBy(composite: KubeObject): { apiVersion: string; kind: string; name: string; uid?: string; controller: true; blockOwnerDeletion: true } {
  const uid = (composite.metadata as { uid?: string } | undefined)?.uid;
  return { apiVersion: composite.apiVersion, kind: composite.kind, name: composite.metadata!.name!, ...(uid ? { uid } : {}), controller: true, blockOwnerDeletion: true };
}

/** `o` as the API server holds it once Crossplane has created it for `composite`. */
export function asComposedBy(o: KubeObject, composite: KubeObject): KubeObject {
  return { ...o, metadata: { ...o.metadata, ownerReferences: [composedBy(composite)] } };
}

/** A workspace's Namespace as the API server reports it once created: later reconciles see it. */
export function existingNamespace(workspace: KubeObject): KubeObject {
  const spec = workspace.spec as { workspaceID?: string };
  const name = `ws-${spec.workspaceID ?? workspace.metadata?.name}`;
  return asComposedBy({ apiVersion: "v1", kind: "Namespace", metadata: { name }, status: { phase: "Active" } }, workspace);
}

/**
 * A workspace whose boundary exists: every object the reconcile after its Namespace's creation
 * asked for (all but what runs code, which comes last: namespace-profile.ts, workloadLast), as
 * the next reconcile observes them. Taken from that reconcile's own answer, as Crossplane does.
 */
export function existingBoundary(workspace: KubeObject, requiredResources: Record<string, KubeObject[]>): Record<string, KubeObject> {
  const namespace = existingNamespace(workspace);
  const previous = runFunction(request(workspace, { required: requiredResources, observed: { namespace } }));
  return { ...asObserved(previous), namespace };
}

/**
 * The same boundary as Crossplane fetches it when the workspace asks for it as required
 * resources (namespace-profile.ts, boundaryLookups), under the keys the function asks for: how a
 * reconcile sees it when its cached XR's resourceRefs lag behind. `missing` names composition
 * resources to leave out, as not created yet.
 */
export function boundaryAsRequired(workspace: KubeObject, requiredResources: Record<string, KubeObject[]>, missing: string[] = []): Record<string, KubeObject[]> {
  const { namespace: _, ...boundary } = existingBoundary(workspace, requiredResources);
  return Object.fromEntries(Object.entries(boundary).map(([name, o]) => [`boundary-${name}`, missing.includes(name) ? [] : [asComposedBy(o, workspace)]]));
}

/** Everything the example checkpoint refers to, found: its workspace, its class, and the workspace's own Namespace. */
export const CHECKPOINT_REQUIRED = { workspace: [EW_SANDBOX], class: [CLASS_SANDBOX], "workspace-namespace": [existingNamespace(EW_SANDBOX)] };
