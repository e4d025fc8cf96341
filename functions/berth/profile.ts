import type { KubeObject } from "./model.js";
import type { Problem } from "./problems.js";
import { describeRequirement, type RequiredResources } from "./required.js";
import { API_VERSION, workspaceProfileSchema } from "./schema/documents.js";
import { parseDocument } from "./schema/errors.js";
import type { WorkspaceProfileSpec } from "./schema/profile.js";

export interface ResolvedProfile {
  type: "found";
  name: string;
  spec: WorkspaceProfileSpec;
}

/** Reads a WorkspaceProfile through Crossplane's required resources and validates it. */
export function resolveProfile(name: string, required: RequiredResources): ResolvedProfile | Problem {
  const requirement = { apiVersion: API_VERSION, kind: "WorkspaceProfile", name };
  const lookup = required.get("profile", requirement);
  if (lookup.state === "pending") return { type: "fetching", reason: "WaitingForProfile", message: `waiting for ${describeRequirement(requirement)}` };
  if (lookup.state === "missing") return { type: "waiting", reason: "ProfileNotFound", message: `${describeRequirement(requirement)} not found` };
  const parsed = parseDocument(workspaceProfileSchema, lookup.object);
  if (!parsed.ok) return { type: "invalid", message: `${describeRequirement(requirement)} is invalid: ${parsed.problems.join("; ")}` };
  return { type: "found", name, spec: parsed.value.spec };
}

/** Reads the profile's StorageClass, which says how persistent capacity is really enforced. */
export function resolveStorageClass(spec: WorkspaceProfileSpec, required: RequiredResources): { type: "found"; object: KubeObject } | Problem {
  const requirement = { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", name: spec.storage.storageClassName };
  const lookup = required.get("storage-class", requirement);
  if (lookup.state === "pending") return { type: "fetching", reason: "WaitingForStorageClass", message: `waiting for ${describeRequirement(requirement)}` };
  if (lookup.state === "missing") return { type: "waiting", reason: "StorageClassNotFound", message: `${describeRequirement(requirement)} not found` };
  return { type: "found", object: lookup.object };
}
