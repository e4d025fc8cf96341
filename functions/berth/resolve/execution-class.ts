import { specHash } from "../hash.js";
import type { Problem } from "../problems.js";
import type { RequiredResources } from "./required.js";
import { API_VERSION, executionWorkspaceClassSchema } from "../schema/documents.js";
import type { ExecutionWorkspaceClassSpec } from "../schema/execution.js";
import type { Binding } from "../workspace.js";

export interface ResolvedClass {
  type: "found";
  spec: ExecutionWorkspaceClassSpec;
  binding: Binding;
}

/** Reads an ExecutionWorkspaceClass through Crossplane's required resources and validates it. */
export function resolveClass(name: string, required: RequiredResources): ResolvedClass | Problem {
  const cls = required.needDocument("class", { apiVersion: API_VERSION, kind: "ExecutionWorkspaceClass", name }, "Class", executionWorkspaceClassSchema);
  if (cls.type !== "found") return cls;
  const { metadata, spec } = cls.document;
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
