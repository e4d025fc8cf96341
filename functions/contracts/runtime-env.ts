/**
 * The environment Berth gives a workspace's runtime container: the names of the runtime
 * contract. They are Berth's alone: a credential reaches the runtime as a variable of its own,
 * `BERTH_<PURPOSE>_<NAME>`, and one whose name would spell a variable of Berth's is refused
 * (a credential named `servers`, of purpose `mcp`, would otherwise replace BERTH_MCP_SERVERS and
 * point the runtime at servers of its author's choosing). Imports nothing, so the schemas can
 * check names against it.
 */
export const RUNTIME_ENV = {
  workspaceID: "BERTH_WORKSPACE_ID",
  workspaceDir: "BERTH_WORKSPACE_DIR",
  model: "BERTH_MODEL",
  verificationCommand: "BERTH_VERIFICATION_COMMAND",
  verificationResult: "BERTH_VERIFICATION_RESULT",
  idleTimeoutMinutes: "BERTH_IDLE_TIMEOUT_MINUTES",
  mcpServers: "BERTH_MCP_SERVERS",
  session: "BERTH_SESSION",
  onDetach: "BERTH_ON_DETACH",
  runtimeLease: "BERTH_RUNTIME_LEASE",
} as const;

/** Every variable Berth sets in the runtime container. */
export const RUNTIME_VARIABLES: readonly string[] = [...Object.values(RUNTIME_ENV), "HOME"];

/** The variable a credential reaches the runtime as: `BERTH_INFERENCE_GATEWAY_KEY` for `gateway-key`. */
export function credentialVariable(purpose: string, name: string): string {
  return `BERTH_${purpose}_${name}`.toUpperCase().replace(/-/g, "_");
}
