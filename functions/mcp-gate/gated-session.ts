// One workspace session through the gate: an SDK Server facing the workspace, and one SDK Client
// session to the upstream behind it. Only tools/list and tools/call have handlers; the SDK answers
// every other request with "Method not found" itself, so nothing else has a path upstream.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { GatedServer } from "../contracts/mcp-gate-policy.js";
import { isToolAllowed, offeredTools } from "./policy.js";

export const GATE_VERSION = "0.1.0";

/** Where the gate's own client connects, with the only headers it ever sends of its own. */
export interface UpstreamTarget {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
}

export interface GatedSession {
  readonly server: Server;
  close(): Promise<void>;
}

export interface GatedSessionOptions {
  readonly policy: GatedServer;
  readonly target: UpstreamTarget;
  readonly log: Logger;
  /** The downstream session id, known only once the transport has assigned it. */
  readonly sessionId: () => string | undefined;
}

export function createGatedSession({ policy, target, log, sessionId }: GatedSessionOptions): GatedSession {
  const server = new Server({ name: `berth-mcp-gate/${policy.name}`, version: GATE_VERSION }, { capabilities: { tools: { listChanged: true } } });
  const upstream = new UpstreamLink(target, log, () => {
    known = undefined;
    server.sendToolListChanged().catch((err: unknown) => log.warn({ session: sessionId(), err }, "cannot forward tools/list_changed"));
  });
  /** Upstream tool names at the last listing; undefined until listed or after list_changed. */
  let known: Set<string> | undefined;

  const listUpstream = async (): Promise<Tool[]> => {
    const tools = await listAllTools(await upstream.client());
    known = new Set(tools.map((tool) => tool.name));
    return tools;
  };

  const refuse = (tool: string, reason: string): never => {
    log.warn({ session: sessionId(), server: policy.name, method: "tools/call", tool, reason }, "refused");
    throw new Refusal(ErrorCode.InvalidParams, reason);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: offeredTools(policy, await listUpstream()) }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    if (!isToolAllowed(policy, name)) refuse(name, `tool "${name}" is not declared for this workspace`);
    // Declared is not enough: the upstream must offer it now, or a tool it dropped (or renamed)
    // would be forwarded on the strength of a stale listing. One refresh covers a tool just added.
    if (!known?.has(name)) await listUpstream();
    if (!known?.has(name)) refuse(name, `tool "${name}" is declared but upstream "${policy.name}" does not offer it`);
    // Only name and arguments go upstream: _meta and task fields are the workspace's, not the tool's.
    return (await upstream.client()).callTool({ name, arguments: request.params.arguments }, undefined, { signal: extra.signal });
  });

  // Connect upstream as soon as the workspace has finished its handshake, so that list_changed
  // notifications flow before the first tools/list.
  server.oninitialized = () => {
    upstream.client().catch((err: unknown) => log.warn({ session: sessionId(), server: policy.name, err }, "cannot connect upstream"));
  };
  server.onerror = (err) => log.debug({ session: sessionId(), err }, "downstream protocol error");

  return {
    server,
    close: async () => {
      await upstream.close();
      await server.close();
    },
  };
}

/**
 * An error the SDK turns into a JSON-RPC error with this code and message. Not McpError: its
 * constructor prefixes "MCP error <code>: " to the message, and the workspace should read the
 * reason as written.
 */
class Refusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Every page of the upstream's tools/list, in order. */
export async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    // An upstream that hands back a cursor it already gave would keep the gate paging forever.
    if (cursor !== undefined && cursors.has(cursor)) throw new McpError(ErrorCode.InternalError, `upstream repeated tools/list cursor "${cursor}"`);
    if (cursor !== undefined) cursors.add(cursor);
  } while (cursor !== undefined);
  return tools;
}

/** The upstream client session, connected on first use and again after a failed attempt. */
class UpstreamLink {
  private connecting: Promise<Client> | undefined;
  private closed = false;

  constructor(
    private readonly target: UpstreamTarget,
    private readonly log: Logger,
    private readonly onToolListChanged: () => void,
  ) {}

  client(): Promise<Client> {
    if (this.closed) return Promise.reject(new McpError(ErrorCode.ConnectionClosed, "session closed"));
    this.connecting ??= this.connect().catch((err: unknown) => {
      this.connecting = undefined;
      throw new McpError(ErrorCode.InternalError, `cannot reach upstream ${this.target.url.href}: ${err instanceof Error ? err.message : String(err)}`);
    });
    return this.connecting;
  }

  private async connect(): Promise<Client> {
    // No capabilities: the upstream cannot ask for sampling, elicitation or roots. The SDK
    // answers such requests "Method not found" and they never reach the workspace.
    const client = new Client({ name: "berth-mcp-gate", version: GATE_VERSION }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.onToolListChanged());
    client.onerror = (err) => this.log.debug({ upstream: this.target.url.href, err }, "upstream protocol error");
    await client.connect(new StreamableHTTPClientTransport(this.target.url, { requestInit: { headers: { ...this.target.headers } } }));
    return client;
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = await this.connecting?.catch(() => undefined);
    if (!client) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
}
