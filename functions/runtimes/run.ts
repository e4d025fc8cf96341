// What a reference runtime does once its agent is configured: run the agent on the task in the
// checkout, then the verification, write the verification's result where the contract says, and
// exit with the run's outcome. The agent-specific part is only the invocation (config.ts of each
// agent); everything the contract asks of a runtime is here, once.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type RuntimeInputs, runtimeInputs } from "./inputs.js";
import { RUNTIME_ENV } from "../contracts/runtime-env.js";

/** How an agent is started: files to write first (its configuration), the command, variables besides the contract's. */
export interface Invocation {
  files: { path: string; content: string }[];
  argv: string[];
  env: Record<string, string>;
  /** What the agent reads on its standard input; without it, none (an agent waiting on a terminal would wait for ever). */
  stdin?: string;
}

/** The reference runtimes' exit codes: 0 is the run's success; any other fails it (the contract). */
export const EXIT = {
  succeeded: 0,
  /** The agent exited non-zero, or was killed. */
  agentFailed: 1,
  /** The runtime could not start: a variable of the contract is missing or malformed. */
  misconfigured: 2,
  /** The agent finished, and the verification did not pass. */
  verificationFailed: 3,
} as const;

/** The verification's output kept in its result: what the evidence keeps (runtime-contract.ts). */
export const VERIFICATION_OUTPUT_BYTES = 64 * 1024;

export interface RunOutcome {
  exitCode: number;
  agentExitCode: number | null;
  verification?: { exitCode: number; output: string };
}

/** Where the run reports: its own lines, and whether the children's output is passed through (the pod's log). */
export interface RunIO {
  log: (line: string) => void;
  echo: boolean;
}

const POD_LOG: RunIO = { log: (line) => process.stderr.write(`${line}\n`), echo: true };

/**
 * Runs a child to its end, its output passed through (and, when `keep` is given, its first bytes
 * kept). Its PWD is its working directory: Bun-built agents (OpenCode) take their project from
 * PWD, and one inherited from a shell that started the entrypoint elsewhere would be wrong.
 */
function runChild(argv: string[], options: { cwd: string; env: NodeJS.ProcessEnv; echo: boolean; keep?: number; stdin?: string }): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    // An agent that exits before reading it all must not fail the run with EPIPE.
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.stdin);
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const take = (chunk: Buffer, to: NodeJS.WriteStream) => {
      if (options.echo) to.write(chunk);
      if (options.keep === undefined || keptBytes >= options.keep) return;
      kept.push(chunk.subarray(0, options.keep - keptBytes));
      keptBytes += Math.min(chunk.length, options.keep - keptBytes);
    };
    child.stdout!.on("data", (c: Buffer) => take(c, process.stdout));
    child.stderr!.on("data", (c: Buffer) => take(c, process.stderr));
    // The pod's end (SIGTERM) reaches the agent, which may still save its session.
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGTERM", forward).on("SIGINT", forward);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      process.off("SIGTERM", forward).off("SIGINT", forward);
      resolve({ code: signal ? null : code, output: Buffer.concat(kept).toString("utf8") });
    });
  });
}

/**
 * The run: the agent, then the verification (also after a failed agent: what it left is still
 * the run's proposed change, and its verification is still worth reporting), its result written
 * for the evidence, and the outcome. A verification that cannot start is reported as exit code 127,
 * as a shell would.
 */
export async function runAgent(inputs: RuntimeInputs, invocation: Invocation, io: RunIO = POD_LOG): Promise<RunOutcome> {
  const { log, echo } = io;
  for (const file of invocation.files) {
    mkdirSync(dirname(file.path), { recursive: true, mode: 0o700 });
    writeFileSync(file.path, file.content, { mode: 0o600 });
  }
  log(`berth-runtime: running ${invocation.argv[0]} in ${inputs.checkoutDir}`);
  const agent = await runChild(invocation.argv, { cwd: inputs.checkoutDir, env: { ...process.env, ...invocation.env, PWD: inputs.checkoutDir }, echo, ...(invocation.stdin !== undefined ? { stdin: invocation.stdin } : {}) });
  log(`berth-runtime: the agent exited ${agent.code === null ? "on a signal" : `with ${agent.code}`}`);
  let verification: RunOutcome["verification"];
  if (inputs.verificationCommand) {
    const ran = await runChild(inputs.verificationCommand, { cwd: inputs.checkoutDir, env: { ...process.env, PWD: inputs.checkoutDir }, echo, keep: VERIFICATION_OUTPUT_BYTES }).catch((e: Error) => ({ code: 127, output: `${e.message}\n` }));
    verification = { exitCode: ran.code ?? 128, output: ran.output };
    log(`berth-runtime: the verification exited with ${verification.exitCode}`);
    if (inputs.verificationResult) {
      mkdirSync(dirname(inputs.verificationResult), { recursive: true });
      writeFileSync(inputs.verificationResult, JSON.stringify(verification));
    }
  }
  const exitCode = agent.code !== 0 ? EXIT.agentFailed : verification && verification.exitCode !== 0 ? EXIT.verificationFailed : EXIT.succeeded;
  return { exitCode, agentExitCode: agent.code, ...(verification ? { verification } : {}) };
}

/** A reference runtime's whole program: the contract read, the agent run, the outcome as exit code. */
export async function runtimeMain(agent: string, invocationOf: (inputs: RuntimeInputs) => Invocation): Promise<never> {
  let inputs: RuntimeInputs;
  try {
    inputs = runtimeInputs(process.env);
    if (inputs.task === undefined) throw new Error(`${RUNTIME_ENV.task}: not set; the ${agent} runtime runs a DeveloperWorkspace's task (spec.task)`);
  } catch (e) {
    process.stderr.write(`berth-runtime (${agent}): ${(e as Error).message}\n`);
    process.exit(EXIT.misconfigured);
  }
  const outcome = await runAgent(inputs, invocationOf(inputs));
  process.exit(outcome.exitCode);
}
