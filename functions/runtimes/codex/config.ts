// How the Codex runtime starts Codex CLI (0.169) on the task: its configuration and command line,
// a plain function of the runtime contract. Each choice below was checked by running that release
// as uid 65532, with no capabilities, a read-only root, no user namespaces and only loopback.
import type { RuntimeInputs } from "../inputs.js";
import type { Invocation } from "../run.js";

/**
 * Where the image puts the codex binary: the npm package's vendor/<target>/ laid out as /opt/codex.
 * With its codex-package.json and codex-path/ beside bin/, Codex puts codex-path (rg) first on the
 * PATH of the agent's commands; bwrap, codex-code-mode-host and the voice host are not needed.
 */
export const CODEX_BIN = "/opt/codex/bin/codex";

/**
 * The inference key's variable, named by `env_key` so the key stays out of config.toml. Not
 * BERTH_*: those are the contract's, and a credential's name could spell one. Not CODEX_API_KEY
 * either, which Codex reads as a key for OpenAI's own service.
 */
export const API_KEY_ENV = "CODEX_BERTH_API_KEY";

/** The contract's inference credential (and its URL and API) as the pod's variables: inputs.ts. */
const INFERENCE_CREDENTIAL_PREFIX = "BERTH_INFERENCE_";

/** The provider's id in config.toml: Codex's built-in "openai" wants a login and OpenAI's service. */
const PROVIDER = "berth";

/**
 * CODEX_HOME, on the workspace volume: sessions (sessions/YYYY/MM/DD/rollout-*.jsonl), their
 * SQLite index and Codex's own scratch all go there, so `codex exec resume <id>` works after a
 * suspend, and nothing is written to HOME or the read-only root.
 */
export function codexHome(inputs: Pick<RuntimeInputs, "workspaceDir">): string {
  return `${inputs.workspaceDir}/.berth/codex`;
}

export function codexInvocation(inputs: RuntimeInputs): Invocation {
  const home = codexHome(inputs);
  const apiKey = inputs.inference?.apiKey;
  return {
    files: [{ path: `${home}/config.toml`, content: configToml(inputs) }],
    // No --sandbox: config.toml turns the sandbox off, and a `codex exec resume` reads it too.
    // --strict-config: a key this release does not know fails the run instead of being ignored
    // (a renamed `plugins` would otherwise quietly mean requests to GitHub and ChatGPT again).
    // --skip-git-repo-check: Codex refuses a directory that is not a git tree unless trusted, and
    // trusting the checkout would also load the repository's own .codex/config.toml.
    // "--" ends the options, so a task that begins with "-" is still the prompt.
    argv: [CODEX_BIN, "exec", "--strict-config", "--skip-git-repo-check", "--cd", inputs.checkoutDir, "--", ...(inputs.task === undefined ? [] : [inputs.task])],
    env: { CODEX_HOME: home, ...(apiKey === undefined ? {} : { [API_KEY_ENV]: apiKey }) },
  };
}

/**
 * TOML basic strings accept every escape JSON.stringify writes (\" \\ \b \f \n \r \t \uXXXX), so
 * its output is a TOML string; https://toml.io/en/v1.0.0#string. Two things JSON allows and TOML
 * does not are mended first: a raw DEL (U+007F), and a lone surrogate (JSON.parse of
 * BERTH_MCP_SERVERS can make one; TOML's \u must name a scalar value).
 */
function str(value: string): string {
  const wellFormed = value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
  return JSON.stringify(wellFormed).replace(/\u007f/g, "\\u007f");
}

const list = (values: readonly string[]): string => `[${values.map(str).join(", ")}]`;

function configToml(inputs: RuntimeInputs): string {
  const lines = [
    ...(inputs.model === undefined ? [] : [`model = ${str(inputs.model)}`]),
    // Without inference, Codex falls back to OpenAI's service, which the pod cannot reach: it fails.
    ...(inputs.inference === undefined ? [] : [`model_provider = ${str(PROVIDER)}`]),
    // The pod is the sandbox. Codex's own needs bubblewrap's user namespaces, which RuntimeDefault
    // seccomp refuses: every command would fail. Nobody is there to approve anything either.
    `approval_policy = "never"`,
    `sandbox_mode = "danger-full-access"`,
    // A hosted tool the provider would be asked to run; Berth's endpoint has no web to search.
    `web_search = "disabled"`,
    `check_for_update_on_startup = false`,
    "",
    // Otherwise OTel metrics go to OpenAI's collector every run.
    "[analytics]",
    "enabled = false",
    "",
    "[features]",
    // Otherwise each start runs `git ls-remote` on OpenAI's plugin repository and asks GitHub
    // and ChatGPT for the curated plugins.
    "plugins = false",
    // Otherwise an unreachable endpoint is retried forever ("waiting for network"); with this,
    // Codex gives up after the provider's retries (5 requests x 6 streams, about 25 s) and exits 1.
    "unbounded_connection_retries = false",
    "",
    // Keeps the key out of what the agent's commands inherit, and so out of an `env` they print.
    // Not a boundary: they run as Codex's uid and could read /proc/<codex>/environ.
    "[shell_environment_policy]",
    `exclude = ${list([API_KEY_ENV, `${INFERENCE_CREDENTIAL_PREFIX}*`])}`,
  ];
  if (inputs.inference !== undefined) {
    lines.push(
      "",
      `[model_providers.${PROVIDER}]`,
      `name = "Berth"`,
      // Codex POSTs `${base_url}/responses` and reads server-sent events; 0.169 refuses "chat".
      `base_url = ${str(inputs.inference.url)}`,
      `wire_api = "responses"`,
      // No key, no Authorization header: Codex needs no login (auth.json) for its own provider.
      ...(inputs.inference.apiKey === undefined ? [] : [`env_key = ${str(API_KEY_ENV)}`]),
    );
  }
  // A server without a URL has no gate: Codex could not reach it. The model sees a server's tools
  // as namespace `mcp__<name>` (hyphens made underscores); enabled_tools takes the MCP names as
  // the server lists them, and an empty list offers none. Not `required`: the gate is a pod of
  // its own and may be ready a moment after the runtime, while Codex retries a server for about
  // a second before it would fail the run.
  for (const server of inputs.mcpServers) {
    if (server.url === undefined) continue;
    lines.push("", `[mcp_servers.${str(server.name)}]`, `url = ${str(server.url)}`, `enabled_tools = ${list(server.tools)}`);
  }
  return `${lines.join("\n")}\n`;
}
