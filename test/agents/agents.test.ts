// The reference runtimes as they ship: each image built from its pinned sources, and the real
// agent in it (OpenCode 1.18, Codex CLI 0.169) run by its entrypoint on a DeveloperWorkspace's
// task, configured only by the runtime contract's variables, in a root filesystem that is
// read-only, as 65532. The model is a scripted OpenAI-compatible server; the MCP server is
// @modelcontextprotocol/server-everything behind Berth's MCP gate, which declares one of its tools.
// The script has the agent edit a file of the checkout with its own tool, call the declared tool
// through the gate, call an undeclared one, and finish; the verification then runs and reports.
// Everything listens on 127.0.0.1.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUNTIME_ENV, RUNTIME_PATHS } from "../../functions/contracts/runtime-env.js";
import { type RunningGate, startGate } from "../../functions/mcp-gate/gate.js";
import { EXIT } from "../../functions/runtimes/run.js";
import { buildRuntimeImage, RUNTIME_AGENTS, type RuntimeAgent, runtimeBundle } from "../../image/build.js";
import type { BuiltImage } from "../../image/oci.js";
import { unpackImage } from "../../image/oci.js";
import { type ModelReply, type ModelRequest, type ModelServer, type ModelToolCall, startModelServer, toolResults } from "../support/model-server.js";
import { type EverythingUpstream, startEverything } from "../support/mcp-upstream.js";
import { tempDirs } from "../support/temp.js";
import { type BoxRun, prepareRootfs, runInBox, WORKLOAD_USER } from "./box.js";

const tempDir = tempDirs();
const isRoot = process.getuid?.() === 0;
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

const FILE = "greeting.txt";
const BEFORE = "hello, world\n";
const AFTER = "hello, berth\n";
const TASK = `Change the greeting in ${FILE} to greet berth, then ask the docs server to echo "berth-probe".`;
const PROBE = "berth-probe";
/** A command of the image's shell userland, whose output the model must get back. */
const SHELL_COMMAND = `cat ${FILE} | tr a-z A-Z`;
const MODEL = "berth-scripted";
const API_KEY = "sk-berth-test-key";
/** The MCP server's name in the document; its gate offers only echo. */
const SERVER = "docs";
const DECLARED = "echo";
const UNDECLARED = "get-sum";
/** What server-everything's get-sum would answer for 2 and 3: it must never come back. */
const UNDECLARED_ANSWER = "The sum of 2 and 3 is 5";

/** How each agent's model asks for what the script wants: its tools' names and arguments. */
interface AgentTools {
  /** The edit of FILE, with the agent's own editing tool. */
  edit(): ModelToolCall;
  /** A command the agent runs with its shell tool. */
  shell(command: string): ModelToolCall;
  /** A call of an MCP server's tool, as the agent names it to the model. */
  mcp(server: string, tool: string, args: Record<string, unknown>): ModelToolCall;
  /** A request that is not the task's conversation (OpenCode asks for a session title first). */
  aside(req: ModelRequest): boolean;
}

const TOOLS: Record<RuntimeAgent, AgentTools> = {
  opencode: {
    edit: () => ({ name: "edit", arguments: { filePath: join(RUNTIME_PATHS.checkout, FILE), oldString: "hello, world", newString: "hello, berth" } }),
    shell: (command) => ({ name: "bash", arguments: { command, description: "Show the greeting" } }),
    mcp: (server, tool, args) => ({ name: `${server}_${tool}`, arguments: args }),
    aside: (req) => req.tools.length === 0,
  },
  codex: {
    // A model Codex does not know gets no apply_patch tool; Codex runs apply_patch given to its
    // exec_command itself, without a shell.
    edit: () => ({ name: "exec_command", arguments: { cmd: `apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: ${FILE}\n@@\n-hello, world\n+hello, berth\n*** End Patch\nEOF\n` } }),
    shell: (command) => ({ name: "exec_command", arguments: { cmd: command } }),
    mcp: (server, tool, args) => ({ namespace: `mcp__${server.replaceAll("-", "_")}`, name: tool.replaceAll("-", "_"), arguments: args }),
    aside: () => false,
  },
};

/** The task's conversation, one step per tool result so far: edit, a command, declared tool, undeclared tool, done. */
function script(tools: AgentTools): (req: ModelRequest) => ModelReply {
  return (req) => {
    if (tools.aside(req)) return { text: "Greeting for berth" };
    const step = toolResults(req).length;
    if (step === 0) return { toolCalls: [tools.edit()] };
    if (step === 1) return { toolCalls: [tools.shell(SHELL_COMMAND)] };
    if (step === 2) return { toolCalls: [tools.mcp(SERVER, DECLARED, { message: PROBE })] };
    if (step === 3) return { toolCalls: [tools.mcp(SERVER, UNDECLARED, { a: 2, b: 3 })] };
    return { text: "Done: the greeting now says hello to berth." };
  };
}

/** The last lines of every log the agent kept on the volume: what a failed run is read from. */
function agentLogs(dir: string): string {
  if (!existsSync(dir)) return `(no ${dir})`;
  const logs = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".log"));
  return logs.map((f) => `== ${f}\n${readFileSync(join(dir, f), "utf8").split("\n").slice(-40).join("\n")}`).join("\n");
}

/** A git repository with one commit, as the checkout leaves it in /workspace/src. */
function checkout(workspace: string): void {
  const src = join(workspace, "src");
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, FILE), BEFORE);
  const git = (...args: string[]) => execFileSync("git", ["-C", src, "-c", "user.name=berth", "-c", "user.email=berth@example.com", ...args], { stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", FILE);
  git("commit", "-q", "-m", "greeting");
  execFileSync("chown", ["-R", `${WORKLOAD_USER}:${WORKLOAD_USER}`, workspace]);
}

describe.skipIf(!isRoot).each(RUNTIME_AGENTS.map((agent) => [agent]))("runtime-%s: the real agent on a task, in its image", (agent) => {
  let image: BuiltImage;
  let rootfs: string;
  let workspace: string;
  let model: ModelServer;
  let everything: EverythingUpstream;
  let gate: RunningGate;
  let run: BoxRun;
  let firstModelRequestMs: number | undefined;
  const entrypoint = () => (JSON.parse(image.config.bytes.toString("utf8")) as { config: { Entrypoint: string[] } }).config.Entrypoint;

  beforeAll(async () => {
    execFileSync("npm", ["run", "-s", runtimeBundle(agent).bundleScript], { stdio: "inherit" });
    image = await buildRuntimeImage({ agent, name: `berth.local/runtime-${agent}:test` });
    rootfs = join(tempDir(`berth-runtime-${agent}-`), "rootfs");
    await unpackImage(image, rootfs);
    prepareRootfs(rootfs);
    workspace = tempDir(`berth-runtime-${agent}-workspace-`);
    checkout(workspace);
    everything = await startEverything();
    gate = await startGate({ policy: { servers: [{ name: SERVER, upstream: everything.url, tools: [DECLARED] }] }, listen: { host: "127.0.0.1", port: 0 }, enforce: true, env: {}, logger: pino({ level: "silent" }) });
    const started = Date.now();
    const answer = script(TOOLS[agent]);
    model = await startModelServer((req) => {
      firstModelRequestMs ??= Date.now() - started;
      return answer(req);
    });
    run = await runInBox({
      rootfs,
      workspace,
      entrypoint: entrypoint(),
      timeoutMs: 240_000,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: RUNTIME_PATHS.home,
        [RUNTIME_ENV.workspaceID]: "w-agent-test",
        [RUNTIME_ENV.workspaceDir]: RUNTIME_PATHS.workspace,
        [RUNTIME_ENV.model]: MODEL,
        [RUNTIME_ENV.task]: TASK,
        [RUNTIME_ENV.inferenceUrl]: model.url,
        [RUNTIME_ENV.inferenceApi]: "openai",
        [RUNTIME_ENV.inferenceCredential]: "BERTH_INFERENCE_GATEWAY_KEY",
        BERTH_INFERENCE_GATEWAY_KEY: API_KEY,
        [RUNTIME_ENV.mcpServers]: JSON.stringify([{ name: SERVER, tools: [DECLARED], url: `${gate.url}/mcp/${SERVER}` }]),
        [RUNTIME_ENV.verificationCommand]: JSON.stringify(["/usr/bin/git", "grep", "-q", "-e", AFTER.trim(), "--", FILE]),
        [RUNTIME_ENV.verificationResult]: RUNTIME_PATHS.verificationResult,
      },
    });
    console.log(
      `runtime-${agent}: image ${mb(image.size)} compressed, ${mb(image.layers.reduce((n, l) => n + l.uncompressedSize, 0))} uncompressed; ` +
        `box start to first model request ${firstModelRequestMs ?? "never"} ms; run ${run.elapsedMs} ms; ${model.requests.length} model requests`,
    );
  });

  afterAll(async () => {
    await model?.close();
    await gate?.close();
    await everything?.close();
  });

  const conversation = () => model.requests.filter((r) => (r.api === "chat" || r.api === "responses") && !TOOLS[agent].aside(r));
  const lastResults = () => toolResults(conversation().at(-1)!);

  it("exits 0: the agent finished and the verification passed", () => {
    expect(run.exitCode, `${run.stderr}\n${run.stdout}\n${agentLogs(join(workspace, ".berth", agent))}`).toBe(EXIT.succeeded);
  });

  it("was told the task, by the model it was given, with the inference credential as its bearer token, and called nothing but the model's API", () => {
    const first = conversation()[0]!;
    expect(first.turns.some((t) => t.role === "user" && t.text.includes(TASK))).toBe(true);
    expect(new Set(conversation().map((r) => r.model))).toEqual(new Set([MODEL]));
    expect(new Set(model.requests.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${API_KEY}`]));
    expect(model.requests.filter((r) => !r.path.startsWith("/v1/")).map((r) => r.path)).toEqual([]);
  });

  it("edited the checkout's file with its own tool, and the verification's result says so", () => {
    expect(readFileSync(join(workspace, "src", FILE), "utf8")).toBe(AFTER);
    const result = JSON.parse(readFileSync(join(workspace, ".berth/verification.json"), "utf8")) as { exitCode: number };
    expect(result.exitCode).toBe(0);
  });

  it("ran a command with its shell tool, in the checkout, and the model got its output", () => {
    expect(lastResults()[1]?.text).toContain(AFTER.trim().toUpperCase());
  });

  it("called the declared MCP tool through the gate, and the model got its answer", () => {
    expect(everything.messages.filter((m) => m.method === "tools/call").map((m) => m.params?.name)).toContain(DECLARED);
    expect(lastResults()[2]?.text).toContain(`Echo: ${PROBE}`);
  });

  it("negative control: the undeclared tool never reached the server, and the model was told it is not there", () => {
    expect(everything.messages.filter((m) => m.method === "tools/call").map((m) => m.params?.name)).not.toContain(UNDECLARED);
    const refused = lastResults()[3]!;
    expect(refused.text).not.toContain(UNDECLARED_ANSWER);
    console.log(`runtime-${agent}: the undeclared call's result, as the model saw it: ${JSON.stringify(refused.text.slice(0, 300))}`);
  });

  it("kept its state on the workspace volume and wrote nothing outside it but HOME and /tmp (the root is read-only)", () => {
    expect(existsSync(join(workspace, ".berth", agent))).toBe(true);
    expect(run.stderr).not.toMatch(/read-only file system/i);
  });
});

if (!isRoot) console.log("the reference runtimes' runs are skipped: running an image's root filesystem needs root (unshare --root, mounts); CI runs them");
