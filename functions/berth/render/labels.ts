/** Labels and names every rendered object shares, so one selector finds a whole workspace. */

export const MANAGED_BY = { "app.kubernetes.io/managed-by": "berth" } as const;
export const WORKSPACE_ID_LABEL = "workspaces.berth.dev/workspace-id";

/**
 * Namespaces whose profile declares runtime-enforced persistent capacity carry this label;
 * Berth's admission policy rejects any Pod there without `hostUsers: false`.
 */
export const CAPACITY_ENFORCEMENT_LABEL = "workspaces.berth.dev/capacity-enforcement";

/**
 * The RuntimeClass of the workspace's runtime, on its Namespace when it has one: admission
 * requires the same of every pod the runtime makes (none when the Namespace names none).
 */
export const RUNTIME_CLASS_LABEL = "workspaces.berth.dev/runtime-class";

/** A workspace's Namespace. The prefix keeps a workspace ID from ever naming a system namespace. */
export function workspaceNamespace(workspaceID: string): string {
  return `ws-${workspaceID}`;
}

export function workspaceLabels(workspaceID: string): Record<string, string> {
  return { ...MANAGED_BY, [WORKSPACE_ID_LABEL]: workspaceID };
}

/** The name Berth gives every per-workspace object inside the Namespace. */
export const WORKSPACE_OBJECT_NAME = "workspace";

/** What part of a workspace a pod is, on pods Berth adds beside the runtime: `mcp-gate`, `evidence-export`. */
export const COMPONENT_LABEL = "workspaces.berth.dev/component";
