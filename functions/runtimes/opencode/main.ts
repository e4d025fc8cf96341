// The runtime-opencode image's entrypoint: OpenCode run on the workspace's task, configured from
// the runtime contract (config.ts), with the verification and the outcome of run.ts.
import { runtimeMain } from "../run.js";
import { opencodeInvocation } from "./config.js";

await runtimeMain("opencode", opencodeInvocation);
