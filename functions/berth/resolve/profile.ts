import type { KubeObject } from "../model.js";
import type { Problem } from "../problems.js";
import type { RequiredResources } from "./required.js";
import { API_VERSION, workspaceProfileSchema } from "../schema/documents.js";
import type { WorkspaceProfileSpec } from "../schema/profile.js";
import { quantityValue, sumOf } from "../schema/quantity.js";

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

/** What a workspace is to get, each value with the document field it comes from. */
export interface Asked {
  storage: { field: string; size: string };
  resources: { field: string; cpu: string; memory: string };
  /** With access edit, what the pods the runtime makes may use, on top of `resources`. */
  runtimeMade?: { field: string; cpu: string; memory: string } | undefined;
}

/**
 * Anything a workspace is to get beyond its profile's ceilings (the volume's maxSize, the
 * containers' limits.max) is refused: the profile is what the platform team agreed to, and a
 * profile tightened under live workspaces refuses them too (they keep what they have).
 */
export function beyondProfile(asked: Asked, profile: ResolvedProfile): Problem | undefined {
  const exceeds = (value: string, ceiling: string) => quantityValue(value) > quantityValue(ceiling);
  const { storage, limits } = profile.spec;
  const over: string[] = [];
  if (exceeds(asked.storage.size, storage.maxSize)) over.push(`${asked.storage.field}: ${asked.storage.size} exceeds the maxSize ${storage.maxSize}`);
  for (const r of ["cpu", "memory"] as const) {
    if (exceeds(asked.resources[r], limits.max[r])) over.push(`${asked.resources.field}.${r}: ${asked.resources[r]} exceeds the max ${limits.max[r]}`);
    else if (asked.runtimeMade && exceeds(sumOf(r, asked.resources[r], asked.runtimeMade[r]), limits.max[r])) {
      over.push(`${asked.runtimeMade.field}.${r}: ${asked.runtimeMade[r]} beside ${asked.resources.field}.${r} ${asked.resources[r]} exceeds the max ${limits.max[r]}`);
    }
  }
  return over.length === 0 ? undefined : { type: "invalid", message: `${over.join("; ")} of WorkspaceProfile "${profile.name}"` };
}
