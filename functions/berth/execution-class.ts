import { specHash } from "./hash.js";
import type { Problem } from "./problems.js";
import { describeRequirement, type RequiredResources } from "./required.js";
import { API_VERSION, executionWorkspaceClassSchema } from "./schema/documents.js";
import { parseDocument } from "./schema/errors.js";
import type { ExecutionWorkspaceClassSpec } from "./schema/execution.js";

/** A class as a workspace binds to it: what it says, and which version of it. */
export interface Binding {
  name: string;
  uid?: string;
  generation?: number;
  classHash: string;
}

export interface ResolvedClass {
  type: "found";
  spec: ExecutionWorkspaceClassSpec;
  binding: Binding;
}

/** Reads an ExecutionWorkspaceClass through Crossplane's required resources and validates it. */
export function resolveClass(name: string, required: RequiredResources): ResolvedClass | Problem {
  const requirement = { apiVersion: API_VERSION, kind: "ExecutionWorkspaceClass", name };
  const lookup = required.get("class", requirement);
  if (lookup.state === "pending") return { type: "fetching", reason: "WaitingForClass", message: `waiting for ${describeRequirement(requirement)}` };
  if (lookup.state === "missing") return { type: "waiting", reason: "ClassNotFound", message: `${describeRequirement(requirement)} not found` };
  const parsed = parseDocument(executionWorkspaceClassSchema, lookup.object);
  if (!parsed.ok) return { type: "invalid", message: `${describeRequirement(requirement)} is invalid: ${parsed.problems.join("; ")}` };
  const { metadata, spec } = parsed.value;
  return {
    type: "found",
    spec,
    binding: {
      name,
      ...(metadata.uid ? { uid: metadata.uid } : {}),
      ...(metadata.generation !== undefined ? { generation: metadata.generation } : {}),
      classHash: specHash(spec),
    },
  };
}
