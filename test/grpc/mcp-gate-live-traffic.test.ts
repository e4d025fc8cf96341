// The MCP gate over real loopback traffic. Each refused probe is checked twice: the enforcing gate
// answers a JSON-RPC error and the upstream records nothing forbidden; the same bytes through a
// gate started with enforce: false reach the upstream. A probe that failed for some unrelated
// reason would fail its negative control, so no refusal here passes vacuously.
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningGate, startGate } from "../../functions/mcp-gate/gate.js";
import { createGatedSession } from "../../functions/mcp-gate/gated-session.js";
import type { Policy } from "../../functions/contracts/mcp-gate-policy.js";
import { basicProbes, DECLARED_TOOLS, isForbidden, NEGATIVE_PROBES, type NegativeProbe, POSITIVE_PROBES, RawMcpSession, type RawReply, UPSTREAM_TOOLS } from "../support/mcp-probes.js";
import { ASK_MODEL, type EverythingUpstream, type Recorder, type RecordingUpstream, startEverything, startRecordingUpstream } from "../support/mcp-upstream.js";

const LOOPBACK = { host: "127.0.0.1", port: 0 };
const SECRET = "gate-only-secret";

async function until(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Exactly one message came back, and it is a JSON-RPC error. */
function refusalOf(reply: RawReply): { code: number; message: string } | string {
  const [only, ...rest] = reply.messages;
  if (!only || rest.length > 0 || only.result !== undefined || !only.error) return `not a single error: HTTP ${reply.status} ${JSON.stringify(reply.messages)}`;
  return only.error;
}

async function sendProbe(gateUrl: string, upstream: Recorder, probe: NegativeProbe): Promise<RawReply> {
  const session = await RawMcpSession.open(gateUrl);
  // List first so the gate's own upstream session and tools/list are done before the record is cleared.
  await session.listToolNames();
  upstream.clear();
  const reply = await session.post(probe.body, probe.headers);
  await session.close();
  return reply;
}

describe("the MCP gate in front of a recording upstream", () => {
  let upstream: RecordingUpstream;
  let gate: RunningGate;
  let control: RunningGate;
  const logLines: Record<string, unknown>[] = [];
  const gateUrl = (): string => `${gate.url}/mcp/docs`;
  const controlUrl = (): string => `${control.url}/mcp/docs`;
  const added = new Set<string>();

  /** Adds a tool upstream (once) while `session` listens, and waits for list_changed to reach it. */
  const addTool = async (session: RawMcpSession, name: string): Promise<void> => {
    const before = upstream.openStreams();
    const stream = await session.listen();
    await session.listToolNames();
    // The gate opens its upstream GET stream after its handshake; notifications sent before it is
    // open would be dropped by the upstream's transport.
    await until(() => upstream.openStreams() > before, "the gate's upstream GET stream");
    if (!added.has(name)) await upstream.addTool(name);
    added.add(name);
    await stream.waitFor((message) => message.method === "notifications/tools/list_changed");
    stream.close();
  };

  beforeAll(async () => {
    upstream = await startRecordingUpstream(UPSTREAM_TOOLS);
    const policy: Policy = { servers: [{ name: "docs", upstream: upstream.url, tools: [...DECLARED_TOOLS], credentialEnv: "BERTH_MCP_DOCS" }] };
    const logger = pino({ level: "info" }, { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) });
    gate = await startGate({ policy, listen: LOOPBACK, enforce: true, env: { BERTH_MCP_DOCS: SECRET }, logger });
    control = await startGate({ policy, listen: LOOPBACK, enforce: false, env: { BERTH_MCP_DOCS: SECRET }, logger: pino({ level: "silent" }) });
  });
  afterAll(async () => {
    await gate?.close();
    await control?.close();
    await upstream?.close();
  });

  it("answers /healthz and 404s a server nobody declared", async () => {
    const health = await fetch(`${gate.url}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, "ok"]);
    const unknown = await fetch(`${gate.url}/mcp/admin`, { method: "POST", body: "{}" });
    expect([unknown.status, await unknown.json()]).toEqual([404, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "no MCP server is declared at /mcp/admin" } }]);
  });

  it("lists the declared tools from every upstream page, and only those", async () => {
    const session = await RawMcpSession.open(gateUrl());
    expect(await session.listToolNames()).toEqual(["search", "fetch", "ask-model"]);
    await session.close();
    const direct = await RawMcpSession.open(controlUrl());
    expect(await direct.listToolNames()).toEqual([...UPSTREAM_TOOLS]);
    await direct.close();
  });

  it.each(NEGATIVE_PROBES)("refuses $name; the same request through the control reaches the upstream", async (probe) => {
    if (probe.addedAtRunTime !== undefined) {
      const session = await RawMcpSession.open(gateUrl());
      await addTool(session, probe.addedAtRunTime);
      // After list_changed the workspace re-lists: the new tool is not in it.
      expect(await session.listToolNames()).not.toContain(probe.addedAtRunTime);
      await session.close();
    }
    const refused = await sendProbe(gateUrl(), upstream, probe);
    expect(typeof refusalOf(refused)).toBe("object");
    expect(upstream.messages.filter((message) => isForbidden(probe.forbidden, message))).toEqual([]);

    const passed = await sendProbe(controlUrl(), upstream, probe);
    expect(passed.status).toBeLessThan(500);
    expect(upstream.messages.filter((message) => isForbidden(probe.forbidden, message)).length).toBeGreaterThan(0);
  });

  it("refuses an undeclared tool with its name and reason, and logs who asked", async () => {
    const session = await RawMcpSession.open(gateUrl());
    const { response } = await session.request("tools/call", { name: "delete-all", arguments: {} });
    expect(response.error).toEqual({ code: -32602, message: 'tool "delete-all" is not declared for this workspace' });
    const line = logLines.find((entry) => entry.msg === "refused" && entry.tool === "delete-all" && entry.session === session.sessionId);
    expect(line && { method: line.method, reason: line.reason }).toEqual({ method: "tools/call", reason: 'tool "delete-all" is not declared for this workspace' });
    await session.close();
  });

  it("refuses a batch with HTTP 400 and the reason", async () => {
    const [batch] = NEGATIVE_PROBES.filter((probe) => probe.name.startsWith("batch"));
    const reply = await sendProbe(gateUrl(), upstream, batch!);
    expect([reply.status, refusalOf(reply)]).toEqual([400, { code: -32600, message: "batches are not accepted" }]);
  });

  it.each(POSITIVE_PROBES)("serves $name ($tool)", async ({ tool, addedAtRunTime }) => {
    const session = await RawMcpSession.open(gateUrl());
    if (addedAtRunTime !== undefined) await addTool(session, addedAtRunTime);
    expect(await session.listToolNames()).toContain(tool);
    upstream.clear();
    const { response } = await session.request("tools/call", { name: tool, arguments: {} });
    expect(response.result).toEqual({ content: [{ type: "text", text: `called ${tool}` }] });
    expect(upstream.messages.filter((message) => message.method === "tools/call").map((message) => message.params?.name)).toEqual([tool]);
    await session.close();
  });

  it("refuses the upstream's sampling request; it never reaches the workspace", async () => {
    const session = await RawMcpSession.open(gateUrl());
    const { response, reply } = await session.request("tools/call", { name: ASK_MODEL, arguments: {} });
    expect(response.result).toEqual({ content: [{ type: "text", text: `${ASK_MODEL}: refused -32601: MCP error -32601: Method not found` }] });
    expect(reply.messages.filter((message) => message.method !== undefined)).toEqual([]);
    await session.close();

    // Control: without the gate the workspace is asked to sample (and, not answering, times out;
    // the upstream may then also send notifications/cancelled).
    const direct = await RawMcpSession.open(controlUrl());
    const passed = await direct.request("tools/call", { name: ASK_MODEL, arguments: {} });
    expect(passed.reply.messages.filter((message) => message.method !== undefined).map((message) => message.method)).toContain("sampling/createMessage");
    await direct.close();
  });

  it("sends the credential from credentialEnv upstream, and none of the workspace's headers", async () => {
    const headers = { authorization: "Bearer workspace-token", "x-mcp-tool": "delete-all" };
    upstream.clear();
    const session = await RawMcpSession.open(gateUrl(), headers);
    await session.listToolNames();
    await session.request("tools/call", { name: "search", arguments: {} });
    await session.close();
    await until(() => upstream.requests.some((request) => request.method === "DELETE"), "the gate closing its upstream session");
    expect(upstream.requests.length).toBeGreaterThan(2);
    expect([...new Set(upstream.requests.map((request) => request.headers.authorization))]).toEqual([`Bearer ${SECRET}`]);
    expect(upstream.requests.filter((request) => request.headers["x-mcp-tool"] !== undefined)).toEqual([]);

    // Control: through a plain proxy the workspace's own token and headers would arrive.
    upstream.clear();
    const direct = await RawMcpSession.open(controlUrl(), headers);
    await direct.close();
    expect(upstream.requests.map((request) => [request.headers.authorization, request.headers["x-mcp-tool"]])).toContainEqual(["Bearer workspace-token", "delete-all"]);
  });

  // Below the gate's pre-parse: the gated Server alone, fed over an in-memory transport, must
  // itself answer "Method not found" to everything but tools, and send none of it upstream.
  it.each(["resources/read", "resources/list", "prompts/get", "prompts/list", "completion/complete", "logging/setLevel", "sampling/createMessage"])(
    "the SDK Server answers %s with Method not found and forwards nothing",
    async (method) => {
      const target = { url: new URL(upstream.url), headers: {} };
      const gated = createGatedSession({ policy: { name: "docs", upstream: upstream.url, tools: [...DECLARED_TOOLS] }, target, log: pino({ level: "silent" }), sessionId: () => "in-memory" });
      const [workspace, gateSide] = InMemoryTransport.createLinkedPair();
      const answers: JSONRPCMessage[] = [];
      workspace.onmessage = (message) => void answers.push(message);
      await gated.server.connect(gateSide);
      await workspace.start();
      const send = async (message: JSONRPCMessage, count: number): Promise<void> => {
        await workspace.send(message);
        await until(() => answers.length >= count, `answer ${count}`);
      };
      await send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } }, 1);
      await workspace.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      // tools/list goes upstream: the link is live, so the silence below is not a dead connection.
      await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, 2);
      upstream.clear();
      await send({ jsonrpc: "2.0", id: 3, method, params: {} }, 3);
      expect(answers[1]).toEqual({ jsonrpc: "2.0", id: 2, result: { tools: expect.any(Array) } });
      expect(answers[2]).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32601, message: "Method not found" } });
      expect(upstream.messages).toEqual([]);
      await gated.close();
    },
  );
});

describe("the MCP gate in front of server-everything", () => {
  let everything: EverythingUpstream;
  let gate: RunningGate;
  let control: RunningGate;

  beforeAll(async () => {
    everything = await startEverything();
    const policy: Policy = { servers: [{ name: "everything", upstream: everything.url, tools: ["echo", "get-sum"] }] };
    gate = await startGate({ policy, listen: LOOPBACK, enforce: true, env: {}, logger: pino({ level: "silent" }) });
    control = await startGate({ policy, listen: LOOPBACK, enforce: false, env: {}, logger: pino({ level: "silent" }) });
  });
  afterAll(async () => {
    await gate?.close();
    await control?.close();
    await everything?.close();
  });

  it("offers echo and get-sum only, and they work", async () => {
    const session = await RawMcpSession.open(`${gate.url}/mcp/everything`);
    expect(await session.listToolNames()).toEqual(["echo", "get-sum"]);
    const { response } = await session.request("tools/call", { name: "get-sum", arguments: { a: 2, b: 3 } });
    expect(response.result?.content).toEqual([{ type: "text", text: "The sum of 2 and 3 is 5." }]);
    await session.close();
    const direct = await RawMcpSession.open(`${control.url}/mcp/everything`);
    expect(await direct.listToolNames()).toEqual(expect.arrayContaining(["echo", "get-sum", "get-env"]));
    await direct.close();
  });

  // get-env returns the server's environment: the kind of tool a workspace must not reach.
  it.each(basicProbes("echo", "get-env"))("refuses $name; the control reaches server-everything", async (probe) => {
    const refused = await sendProbe(`${gate.url}/mcp/everything`, everything, probe);
    expect(typeof refusalOf(refused)).toBe("object");
    expect(everything.messages.filter((message) => isForbidden(probe.forbidden, message))).toEqual([]);

    const passed = await sendProbe(`${control.url}/mcp/everything`, everything, probe);
    expect(passed.status).toBeLessThan(500);
    expect(everything.messages.filter((message) => isForbidden(probe.forbidden, message)).length).toBeGreaterThan(0);
  });
});
