// The contract between Berth and the images a workspace runs (the checkout and the runtime), in
// words: what each container is given, what it finds, what it must leave, what its exit code
// means and what it never gets. The names and paths are runtime-env.ts's, which the function
// renders from; the records below are keyed by them, so a variable added there without its words
// here fails the type-check. `npm run generate` writes docs/runtime-contract.md from this module,
// and test/unit/runtime-contract.test.ts holds every variable the render sets to it.
import { CHECKOUT_ENV, RUNTIME_ENV, RUNTIME_PATHS } from "./runtime-env.js";

export type WorkspaceKind = "DeveloperWorkspace" | "ExecutionWorkspace";

export interface Term {
  /** The kinds whose container is given it. */
  readonly kinds: readonly WorkspaceKind[];
  /** When it is set; "always" if it always is. */
  readonly when: string;
  readonly meaning: string;
}

const DW: readonly WorkspaceKind[] = ["DeveloperWorkspace"];
const EW: readonly WorkspaceKind[] = ["ExecutionWorkspace"];
const BOTH: readonly WorkspaceKind[] = ["DeveloperWorkspace", "ExecutionWorkspace"];

/** The checkout init container's variables (a DeveloperWorkspace's; an ExecutionWorkspace has no checkout). */
export const CHECKOUT_TERMS: Record<keyof typeof CHECKOUT_ENV, Term> = {
  repository: { kinds: DW, when: "always", meaning: "the repository to clone, `spec.source.repository`" },
  revision: { kinds: DW, when: "always", meaning: "the branch, tag or commit to check out, `spec.source.revision`" },
  checkoutDir: { kinds: DW, when: "always", meaning: `where to put it: \`${RUNTIME_PATHS.checkout}\`, on the workspace volume` },
  gitToken: { kinds: DW, when: "a credential of purpose `git` is declared", meaning: "the git credential's value, for the hosts the profile reviews for the git destination; the only container given it" },
  caFile: { kinds: DW, when: "the git destination names a CA bundle", meaning: "a PEM file of that CA alone, for TLS clients that read it" },
  gitCaFile: { kinds: DW, when: "the git destination names a CA bundle", meaning: "the same file, for git" },
};

/** The runtime container's variables, Berth's alone: no credential may spell one of them. */
export const RUNTIME_TERMS: Record<keyof typeof RUNTIME_ENV, Term> = {
  workspaceID: { kinds: BOTH, when: "always", meaning: "the workspace's ID; its Namespace is `ws-<ID>`" },
  workspaceDir: { kinds: DW, when: "always", meaning: `the workspace volume, \`${RUNTIME_PATHS.workspace}\`; the checkout is in \`${RUNTIME_PATHS.checkout}\`, the runtime's working directory` },
  model: { kinds: DW, when: "`spec.model` is set", meaning: "the model's name, as the document gives it" },
  inferenceUrl: {
    kinds: BOTH,
    when: "the inference capability is declared and its destination says where its model service answers (the destination's `inference`)",
    meaning: "the model service's base URL, for example `http://llm-gateway.ai.svc:8080/v1`: the runtime's inference requests go there, and the egress rule opens nothing else for them",
  },
  inferenceApi: { kinds: BOTH, when: "with `BERTH_INFERENCE_URL`", meaning: "the API the model service speaks: `openai` (OpenAI's chat completions and responses, under the URL)" },
  inferenceCredential: {
    kinds: DW,
    when: "a credential of purpose `inference` is declared",
    meaning: "the name of the variable that holds the inference credential (the first declared), for example `BERTH_INFERENCE_GATEWAY_KEY`: the runtime sends it as the bearer token",
  },
  task: { kinds: DW, when: "`spec.task` is set", meaning: "what the agent is asked to do: the prompt, as the document gives it (lines and tabs kept, at most 16,384 characters)" },
  verificationCommand: { kinds: DW, when: "`spec.verification` is set", meaning: "the verification command, a JSON array of its arguments, which the runtime runs when its work is done" },
  verificationResult: {
    kinds: DW,
    when: "`spec.verification` is set and the profile exports evidence",
    meaning: 'the file where the runtime writes the verification\'s result, `{"exitCode": <int>, "output": "<text>"}` (the output\'s first 64 KiB are kept); the evidence reports it as the runtime\'s word',
  },
  idleTimeoutMinutes: {
    kinds: BOTH,
    when: "a DeveloperWorkspace's `spec.lifecycle.idleTimeoutMinutes` is set; an ExecutionWorkspace's class always gives it",
    meaning: "minutes of idleness: a DeveloperWorkspace's runtime acts on it itself (Berth does not stop it); an ExecutionWorkspace is suspended by Berth's lifecycle rules after it",
  },
  mcpServers: {
    kinds: BOTH,
    when: "MCP capabilities are declared",
    meaning: "a JSON array of `{name, tools, url?}`: each declared server with its tools; `url` is the workspace's MCP gate, the only way to a server whose tools are declared",
  },
  session: { kinds: EW, when: "always", meaning: "the agent Session the workspace serves, `spec.sessionRef.name`" },
  onDetach: { kinds: EW, when: "always", meaning: "what follows the session's end: `Suspend`, `Delete` or `Keep`" },
  runtimeLease: { kinds: BOTH, when: "`kubernetes.access: edit`", meaning: "the runtime lease's name: every object the runtime makes must be owned by it, and goes with it on a suspend or the run's end" },
};

/** Variables set beside Berth's own. */
export const OTHER_RUNTIME_TERMS: Record<"HOME" | "credential", Term & { readonly name: string }> = {
  HOME: { name: "HOME", kinds: BOTH, when: "always, except on Agent Substrate (the actor's filesystem is its own)", meaning: `\`${RUNTIME_PATHS.home}\`, a writable emptyDir (the root filesystem is read-only)` },
  credential: {
    name: "BERTH_<PURPOSE>_<NAME>",
    kinds: BOTH,
    when: "a credential of purpose `inference`, `registry` or `mcp` (of a server whose tools are not declared) is declared",
    meaning: "its value, from the workspace's Secret: `BERTH_INFERENCE_GATEWAY_KEY` for an inference credential named `gateway-key`",
  },
};

/** What the containers find on disk. */
export const PATH_TERMS: { readonly path: string; readonly kinds: readonly WorkspaceKind[]; readonly meaning: string }[] = [
  { path: RUNTIME_PATHS.workspace, kinds: BOTH, meaning: "the workspace volume, writable, bounded at the document's size; it outlives a suspend (and, for a persistent workspace, the run)" },
  { path: RUNTIME_PATHS.checkout, kinds: DW, meaning: "the checkout, left by the checkout container: a git working tree whose HEAD is the checked-out commit" },
  { path: RUNTIME_PATHS.home, kinds: BOTH, meaning: "`HOME`, an emptyDir of at most 1Gi, gone with the pod (not on Agent Substrate)" },
  { path: RUNTIME_PATHS.tmp, kinds: BOTH, meaning: "an emptyDir of at most 1Gi, gone with the pod (not on Agent Substrate)" },
  { path: RUNTIME_PATHS.apiToken, kinds: BOTH, meaning: "a projected ServiceAccount token, only with `kubernetes.access` `read` or `edit`, scoped to the workspace's Namespace" },
  { path: "/", kinds: BOTH, meaning: "read-only: the image's files (on Agent Substrate, the provider's gVisor sandbox decides)" },
];

/** The rules every runtime and checkout image must live by. */
export const RULES: readonly string[] = [
  "**The checkout** clones `BERTH_SOURCE_REPOSITORY` at `BERTH_SOURCE_REVISION` into `BERTH_CHECKOUT_DIR`, leaving a git working tree whose HEAD is that commit (the evidence collector copies the commit before the runtime starts), and exits 0; any other exit fails the run before the runtime starts. It runs no hook and no config from the repository.",
  "**A DeveloperWorkspace's runtime** runs once, in `BERTH_CHECKOUT_DIR`, and its exit code is the run's outcome: 0 is `Succeeded` (`Completed`), anything else `Failed` (`WorkloadFailed`). It is not restarted. Once it has exited, the changes it left in the checkout are the run's proposed changes.",
  "**The verification**: with `BERTH_VERIFICATION_COMMAND`, the runtime runs it when its work is done, and with `BERTH_VERIFICATION_RESULT`, writes its exit code and output there before exiting. Berth records what the runtime wrote, and says so.",
  "**An ExecutionWorkspace's runtime** serves one agent Session and keeps running (on agent-sandbox its container is restarted if it exits); it keeps what must survive a suspend on the workspace volume: the pod, `HOME` and `/tmp` go, the volume stays.",
  "**Network**: it must work with no egress but DNS and the destinations its document declares; everything else, the API server included, is refused. An MCP server whose tools are declared is reached only at the URL in `BERTH_MCP_SERVERS`.",
  "**Never given to the runtime**: a ServiceAccount token (unless `kubernetes.access` is `read` or `edit`), the git credential, the credential of an MCP server whose tools are declared (its gate holds it), the evidence registry's credential (the export holds it), root on the host (`hostUsers: false` where capacity is enforced), a writable root filesystem.",
];
