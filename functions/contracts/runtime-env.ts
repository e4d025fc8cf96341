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
  inferenceUrl: "BERTH_INFERENCE_URL",
  inferenceApi: "BERTH_INFERENCE_API",
  inferenceCredential: "BERTH_INFERENCE_CREDENTIAL",
  task: "BERTH_TASK",
  verificationCommand: "BERTH_VERIFICATION_COMMAND",
  verificationResult: "BERTH_VERIFICATION_RESULT",
  idleTimeoutMinutes: "BERTH_IDLE_TIMEOUT_MINUTES",
  mcpServers: "BERTH_MCP_SERVERS",
  session: "BERTH_SESSION",
  onDetach: "BERTH_ON_DETACH",
  runtimeLease: "BERTH_RUNTIME_LEASE",
} as const;

/** The paths the containers of a workspace find: its volume, the checkout in it, a writable home and /tmp. */
export const RUNTIME_PATHS = {
  workspace: "/workspace",
  checkout: "/workspace/src",
  /** Where the runtime writes the verification's result, when the workspace exports evidence. */
  verificationResult: "/workspace/.berth/verification.json",
  home: "/home/workspace",
  tmp: "/tmp",
  apiToken: "/var/run/secrets/kubernetes.io/serviceaccount",
} as const;

/**
 * The environment of a DeveloperWorkspace's checkout init container: what to fetch, where to put
 * it, and the git credential, which reaches no other container.
 */
export const CHECKOUT_ENV = {
  repository: "BERTH_SOURCE_REPOSITORY",
  revision: "BERTH_SOURCE_REVISION",
  checkoutDir: "BERTH_CHECKOUT_DIR",
  gitToken: "GIT_TOKEN",
  caFile: "SSL_CERT_FILE",
  gitCaFile: "GIT_SSL_CAINFO",
} as const;

/** Every variable Berth sets in the runtime container. */
export const RUNTIME_VARIABLES: readonly string[] = [...Object.values(RUNTIME_ENV), "HOME"];

/** The variable a credential reaches the runtime as: `BERTH_INFERENCE_GATEWAY_KEY` for `gateway-key`. */
export function credentialVariable(purpose: string, name: string): string {
  return `BERTH_${purpose}_${name}`.toUpperCase().replace(/-/g, "_");
}
