// The reference runtimes' side of the contract: the environment the function renders, read back
// by functions/runtimes/inputs.ts into the value each agent's configuration is made from, and
// run.ts's run (agent, verification, result file, exit code) with a stand-in agent.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { IEnvVar } from "kubernetes-models/v1/EnvVar";
import { runtimeInputs } from "../../functions/runtimes/inputs.js";
import { EXIT, runAgent, VERIFICATION_OUTPUT_BYTES } from "../../functions/runtimes/run.js";
import { EXAMPLE_WORKSPACES, edited } from "../fixtures.js";
import { podSpec, renderObjects } from "../rendered.js";
import { tempDirs } from "../support/temp.js";

const tempDir = tempDirs();

/** The runtime container's environment as the pod would have it, a Secret's value standing in for each secretKeyRef. */
function runtimeEnvironment(env: IEnvVar[]): Record<string, string> {
  return Object.fromEntries(env.map((e) => [e.name, e.value ?? `secret:${e.valueFrom?.secretKeyRef?.name}/${e.valueFrom?.secretKeyRef?.key}`]));
}

describe("runtimeInputs: the rendered environment, read back", () => {
  it("the persistent example's runtime: every variable an agent is configured from", () => {
    const task = "Make the failing test pass.\n\tDo not change the API.";
    const workspace = edited(EXAMPLE_WORKSPACES.persistent, (w) => ((w.spec as Record<string, unknown>).task = task));
    const runtime = podSpec(renderObjects(workspace)).containers.find((c) => c.name === "runtime")!;
    const inputs = runtimeInputs(runtimeEnvironment(runtime.env ?? []));
    expect(inputs).toMatchObject({
      workspaceDir: "/workspace",
      checkoutDir: runtime.workingDir,
      home: "/home/workspace",
      model: "qwen3-coder-30b",
      task,
      inference: { url: "http://gateway.ai-gateway.svc:80/v1", api: "openai", apiKey: expect.stringMatching(/^secret:/) },
      verificationCommand: ["npm", "test"],
      verificationResult: "/workspace/.berth/verification.json",
    });
    expect(inputs.mcpServers.map((s) => s.name)).toEqual(["docs"]);
    expect(inputs.mcpServers[0]!.url).toMatch(/^http:\/\/mcp-gate:\d+\/mcp\/docs$/);
  });

  it.each([
    [{}, "BERTH_WORKSPACE_ID"],
    [{ BERTH_WORKSPACE_ID: "w", BERTH_MCP_SERVERS: "[{" }, "BERTH_MCP_SERVERS: is not JSON"],
    [{ BERTH_WORKSPACE_ID: "w", BERTH_VERIFICATION_COMMAND: "[]" }, "BERTH_VERIFICATION_COMMAND"],
    [{ BERTH_WORKSPACE_ID: "w", BERTH_INFERENCE_URL: "ftp://x/v1" }, "BERTH_INFERENCE_URL"],
    [{ BERTH_WORKSPACE_ID: "w", BERTH_INFERENCE_CREDENTIAL: "BERTH_INFERENCE_KEY" }, "BERTH_INFERENCE_CREDENTIAL: names BERTH_INFERENCE_KEY, which is not set"],
  ])("%o: refused, naming %s", (env, named) => {
    expect(() => runtimeInputs(env)).toThrow(named);
  });
});

describe("runAgent: the agent, the verification, its result, the outcome", () => {
  const node = process.execPath;
  const setUp = (verification?: string) => {
    const dir = tempDir("berth-runtime-run-");
    const inputs = { ...runtimeInputs({ BERTH_WORKSPACE_ID: "w", HOME: dir }), checkoutDir: dir, verificationResult: join(dir, ".berth/verification.json"), ...(verification ? { verificationCommand: [node, "-e", verification] } : {}) };
    return { dir, inputs };
  };
  const quiet = { log: () => {}, echo: false };

  it("writes the agent's configuration first, runs it in the checkout, then the verification, whose result it writes", async () => {
    const { dir, inputs } = setUp("process.stdout.write(require('fs').readFileSync('edited.txt', 'utf8')); process.exit(0)");
    const agent = `const fs = require('fs'); fs.writeFileSync('edited.txt', fs.readFileSync(${JSON.stringify(join(dir, "cfg/agent.json"))}, 'utf8') + process.env.AGENT_FLAG)`;
    const outcome = await runAgent(inputs, { files: [{ path: join(dir, "cfg/agent.json"), content: "{}" }], argv: [node, "-e", agent], env: { AGENT_FLAG: "!" } }, quiet);
    expect(outcome).toEqual({ exitCode: EXIT.succeeded, agentExitCode: 0, verification: { exitCode: 0, output: "{}!" } });
    expect(JSON.parse(readFileSync(inputs.verificationResult, "utf8"))).toEqual({ exitCode: 0, output: "{}!" });
  });

  it("gives the agent its stdin when the invocation has one, and none otherwise", async () => {
    const { dir, inputs } = setUp();
    const echo = `require('fs').writeFileSync('stdin.txt', require('fs').readFileSync(0, 'utf8'))`;
    await runAgent(inputs, { files: [], argv: [node, "-e", echo], env: {}, stdin: 'Fix "it".\n\t42' }, quiet);
    expect(readFileSync(join(dir, "stdin.txt"), "utf8")).toBe('Fix "it".\n\t42');
    await runAgent(inputs, { files: [], argv: [node, "-e", echo], env: {} }, quiet);
    expect(readFileSync(join(dir, "stdin.txt"), "utf8")).toBe("");
  });

  it.each([
    ["the agent fails: agentFailed, the verification still reported", "process.exit(4)", "process.exit(0)", EXIT.agentFailed, 0],
    ["the verification fails: verificationFailed", "process.exit(0)", "process.exit(5)", EXIT.verificationFailed, 5],
  ])("%s", async (_, agent, verification, exitCode, verified) => {
    const { inputs } = setUp(verification);
    const outcome = await runAgent(inputs, { files: [], argv: [node, "-e", agent], env: {} }, quiet);
    expect([outcome.exitCode, outcome.verification?.exitCode]).toEqual([exitCode, verified]);
  });

  it("keeps the verification output's first 64 KiB, as the evidence does", async () => {
    const { inputs } = setUp(`process.stdout.write('x'.repeat(${VERIFICATION_OUTPUT_BYTES + 1000}))`);
    const outcome = await runAgent(inputs, { files: [], argv: [node, "-e", ""], env: {} }, quiet);
    expect(outcome.verification?.output.length).toBe(VERIFICATION_OUTPUT_BYTES);
  });

  it("a verification command that cannot start is reported as 127, and fails the run", async () => {
    const { dir, inputs } = setUp();
    const outcome = await runAgent({ ...inputs, verificationCommand: [join(dir, "no-such-command")] }, { files: [], argv: [node, "-e", ""], env: {} }, quiet);
    expect([outcome.exitCode, outcome.verification?.exitCode]).toEqual([EXIT.verificationFailed, 127]);
  });
});
