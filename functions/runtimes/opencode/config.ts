// OpenCode (1.18) configured from the runtime contract: one config file, the variables around it
// and the command line. Pure: run.ts writes the files and starts the command. Each setting was
// tried on the binary itself, headless, as uid 65532 on a read-only root with loopback only.
import type { RuntimeInputs } from "../inputs.js";
import type { Invocation } from "../run.js";

/** Where the runtime-opencode image puts the binary of the opencode-linux-x64 package. */
export const OPENCODE_BIN = "/opt/opencode/bin/opencode";

/** OpenCode's name for Berth's inference endpoint: models are chosen as `berth/<model>`. */
export const PROVIDER_ID = "berth";

/**
 * The variable holding the inference key. The config names it as `{env:…}`, which OpenCode
 * substitutes when it reads the file, so the key is in the process's environment and on no disk.
 * Not BERTH_*: those names are the contract's.
 */
export const API_KEY_ENV = "OPENCODE_BERTH_API_KEY";

const namePart = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, "_");

/** OpenCode's name for an MCP tool, `<server>_<tool>`, each part with anything but [A-Za-z0-9_-] as "_". */
export function mcpToolName(server: string, tool: string): string {
  return `${namePart(server)}_${namePart(tool)}`;
}

function permissions(inputs: RuntimeInputs): Record<string, string | Record<string, string>> {
  const gated = inputs.mcpServers.filter((s) => s.url !== undefined);
  return {
    // Everything is allowed already except what asks. `opencode run` rejects an ask and
    // `opencode serve` waits for an answer that never comes, so each is decided here instead.
    edit: "allow",
    bash: "allow",
    // Files, .env included (bash reads them anyway); not MCP resources, which OpenCode's
    // list_mcp_resources and read_mcp_resource ask for as "mcp:<server>:<uri>": Berth declares
    // tools only, and those tools stay in the model's list whatever their permission.
    read: { "*": "allow", "mcp:*": "deny" },
    // The pod is the sandbox; the checkout's edge is not a boundary worth a refusal.
    external_directory: "allow",
    // The same call three times over: refusing tells the model to stop instead of waiting.
    doom_loop: "deny",
    question: "deny",
    plan_enter: "deny",
    plan_exit: "deny",
    // No egress but DNS: a fetch can only wait for its timeout.
    webfetch: "deny",
    websearch: "deny",
    // The last rule that matches wins, so every server's refusal comes before any server's
    // allowances: "a_*" also matches the tools of a server named "a_b". A denied tool is not in
    // the model's list at all.
    ...Object.fromEntries(gated.map((s) => [`${namePart(s.name)}_*`, "deny"])),
    ...Object.fromEntries(gated.flatMap((s) => s.tools.map((t) => [mcpToolName(s.name, t), "allow"]))),
  };
}

function config(inputs: RuntimeInputs): Record<string, unknown> {
  const { inference, model } = inputs;
  return {
    autoupdate: false,
    share: "disabled",
    // Both are off by default in 1.18; a language server would be downloaded, and a formatter
    // would change files the model did not.
    lsp: false,
    formatter: false,
    // A shadow git copy of the whole checkout, for undo and revert, taken before the first model
    // request: Berth keeps its own checkpoints.
    snapshot: false,
    // OPENCODE_DISABLE_PROJECT_CONFIG also drops OpenCode's own search for AGENTS.md; an
    // absolute path is still read.
    instructions: [`${inputs.checkoutDir}/AGENTS.md`],
    ...(inference
      ? {
          provider: {
            [PROVIDER_ID]: {
              // Bundled in the binary: nothing is installed at run time.
              npm: "@ai-sdk/openai-compatible",
              name: "Berth inference",
              options: { baseURL: inference.url, ...(inference.apiKey !== undefined ? { apiKey: `{env:${API_KEY_ENV}}` } : {}) },
              ...(model !== undefined ? { models: { [model]: { name: model } } } : {}),
            },
          },
        }
      : {}),
    // The first "/" ends the provider's name: a model named "org/model" is "berth/org/model".
    ...(inference && model !== undefined ? { model: `${PROVIDER_ID}/${model}` } : {}),
    permission: permissions(inputs),
    mcp: Object.fromEntries(
      inputs.mcpServers.flatMap((s) =>
        s.url === undefined
          ? []
          : // oauth: false, or a 401 from the gate starts OAuth discovery and a browser sign-in.
            [[s.name, { type: "remote", url: s.url, enabled: true, oauth: false }]],
      ),
    ),
  };
}

/** OpenCode run once on the workspace's task, headless, with only what the workspace declares. */
export function opencodeInvocation(inputs: RuntimeInputs): Invocation {
  const configHome = `${inputs.home}/.config`;
  const env: Record<string, string> = {
    XDG_CONFIG_HOME: configHome,
    // OpenCode appends "opencode": sessions, their database and logs go to
    // <workspace>/.berth/opencode, on the workspace's volume, beside the checkout and not in it.
    XDG_DATA_HOME: `${inputs.workspaceDir}/.berth`,
    XDG_CACHE_HOME: `${inputs.home}/.cache`,
    XDG_STATE_HOME: `${inputs.home}/.local/state`,
    // Bun unpacks the binary's native libraries here.
    TMPDIR: inputs.tmp,
    // What would need egress: models.dev's catalogue, fetched at start and hourly (the provider
    // above needs none of it), the update check and language-server downloads.
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    // The checkout's opencode.json and .opencode/ would add MCP servers, plugins and permissions
    // of the repository's choosing: Berth's declaration is the whole configuration. (An MCP server
    // past the egress rule alone holds the start for a minute: two transports, 30 s each.)
    OPENCODE_DISABLE_PROJECT_CONFIG: "1",
    // OpenCode installs @opencode-ai/plugin into its config directory in the background at every
    // start; offline, npm fails at once instead of asking the registry.
    npm_config_offline: "true",
    // A recursive inotify watch of the whole checkout (watches are a per-user kernel limit), which
    // a headless run does without.
    OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER: "1",
    ...(inputs.inference?.apiKey !== undefined ? { [API_KEY_ENV]: inputs.inference.apiKey } : {}),
  };
  return {
    files: [{ path: `${configHome}/opencode/opencode.json`, content: `${JSON.stringify(config(inputs), null, 2)}\n` }],
    // A title of our own spares the model request OpenCode would make to name the session.
    argv: [OPENCODE_BIN, "run", "--title", `Berth workspace ${inputs.workspaceID}`],
    // On stdin, the task reaches the model as written: as message arguments, OpenCode would
    // wrap each that holds a space in quotes (escaping those inside), and yargs would read a
    // lone number as a number.
    ...(inputs.task !== undefined ? { stdin: inputs.task } : {}),
    env,
  };
}
