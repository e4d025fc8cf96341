// The runtime-codex image's entrypoint: Codex CLI run on the workspace's task, configured from
// the runtime contract (config.ts), with the verification and the outcome of run.ts.
import { runtimeMain } from "../run.js";
import { codexInvocation } from "./config.js";

await runtimeMain("codex", codexInvocation);
