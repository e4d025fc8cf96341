import type { KubeObject } from "./model.js";
import type { Problem } from "./problems.js";
import type { RequiredResources } from "./required.js";
import { API_VERSION, workspaceProfileSchema } from "./schema/documents.js";
import type { WorkspaceProfileSpec } from "./schema/profile.js";

export interface ResolvedProfile {
  type: "found";
  name: string;
  spec: WorkspaceProfileSpec;
}

/** Reads a WorkspaceProfile through Crossplane's required resources and validates it. */
export function resolveProfile(name: string, required: RequiredResources): ResolvedProfile | Problem {
  const profile = required.needDocument("profile", { apiVersion: API_VERSION, kind: "WorkspaceProfile", name }, "Profile", workspaceProfileSchema);
  return profile.type === "found" ? { type: "found", name, spec: profile.document.spec } : profile;
}

/** Reads the profile's StorageClass, which says how persistent capacity is really enforced. */
export function resolveStorageClass(spec: WorkspaceProfileSpec, required: RequiredResources): { type: "found"; object: KubeObject } | Problem {
  return required.need("storage-class", { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", name: spec.storage.storageClassName }, "StorageClass");
}
