// Upstream MCP servers for the gate's tests, each recording what reaches it, so a test can assert
// that a refused probe left no trace upstream and that its negative control did.
//  - startRecordingUpstream: an SDK Server of our own, lenient on purpose (it runs any tools/call,
//    listed or not), so that the gate and nothing else is what refuses.
//  - startEverything: @modelcontextprotocol/server-everything, the registries' reference server,
//    as a child process behind a recording reverse proxy.
// Loopback only: every listener here binds 127.0.0.1.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, CreateMessageResultSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

/** One JSON-RPC message as it arrived upstream; a body that was not JSON is kept as `raw` alone. */
export interface RecordedMessage {
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly raw: string;
}

/** One HTTP request as it arrived upstream: enough to check which headers got through. */
export interface RecordedRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
}

export interface Recorder {
  readonly messages: RecordedMessage[];
  readonly requests: RecordedRequest[];
  clear(): void;
}

export interface RecordingUpstream extends Recorder {
  /** The Streamable HTTP endpoint. */
  readonly url: string;
  /** What each ask-model call learnt when it asked the client for sampling. */
  readonly samplingOutcomes: string[];
  /** Standalone GET streams now open: where list_changed notifications go. */
  openStreams(): number;
  /** Adds a tool at run time and tells every session its tool list changed. */
  addTool(name: string): Promise<void>;
  close(): Promise<void>;
}

export const PAGE_SIZE = 2;
/** The tool that asks its client for sampling/createMessage when called. */
export const ASK_MODEL = "ask-model";

export async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * Listens on a free port of `host`: loopback, unless the live suite puts it on the host end of
 * its node's veth, where the pods it made reach it.
 */
export async function listen(server: http.Server, host = "127.0.0.1"): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

function record(recorder: Recorder, req: IncomingMessage, raw: string): unknown {
  recorder.requests.push({ method: req.method ?? "", headers: { ...req.headers } });
  if (raw === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    recorder.messages.push({ raw });
    return undefined;
  }
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const fields = typeof message === "object" && message !== null ? (message as Record<string, unknown>) : {};
    recorder.messages.push({
      ...(typeof fields.method === "string" ? { method: fields.method } : {}),
      ...(typeof fields.params === "object" && fields.params !== null ? { params: fields.params as Record<string, unknown> } : {}),
      raw: JSON.stringify(message),
    });
  }
  return parsed;
}

function newRecorder(): Recorder {
  const recorder: Recorder = {
    messages: [],
    requests: [],
    clear: () => {
      recorder.messages.length = 0;
      recorder.requests.length = 0;
    },
  };
  return recorder;
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function jsonError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

/** A recording upstream offering `tools` (paged PAGE_SIZE at a time) plus whatever addTool adds. */
export async function startRecordingUpstream(initialTools: readonly string[], host?: string): Promise<RecordingUpstream> {
  const recorder = newRecorder();
  const tools = [...initialTools];
  const samplingOutcomes: string[] = [];
  const sessions = new Map<string, { server: Server; transport: StreamableHTTPServerTransport }>();
  let streams = 0;

  const newSession = async (): Promise<StreamableHTTPServerTransport> => {
    const server = new Server({ name: "recording-upstream", version: "0.0.0" }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, (request) => {
      const start = Number(request.params?.cursor ?? 0);
      const page = tools.slice(start, start + PAGE_SIZE).map((name) => ({ name, description: `the ${name} tool`, inputSchema: { type: "object" as const } }));
      return start + PAGE_SIZE < tools.length ? { tools: page, nextCursor: String(start + PAGE_SIZE) } : { tools: page };
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name;
      if (name !== ASK_MODEL) return { content: [{ type: "text" as const, text: `called ${name}` }] };
      let outcome: string;
      try {
        await extra.sendRequest({ method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 8 } }, CreateMessageResultSchema, { timeout: 1_500 });
        outcome = "answered";
      } catch (err) {
        outcome = err instanceof McpError ? `refused ${err.code}: ${err.message}` : `failed: ${String(err)}`;
      }
      samplingOutcomes.push(outcome);
      return { content: [{ type: "text" as const, text: `${ASK_MODEL}: ${outcome}` }] };
    });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, { server, transport }),
    });
    transport.onclose = () => void (transport.sessionId !== undefined && sessions.delete(transport.sessionId));
    await server.connect(transport);
    return transport;
  };

  const http_ = http.createServer((req, res) => {
    void (async () => {
      const raw = await readText(req);
      const parsed = record(recorder, req, raw);
      const id = req.headers["mcp-session-id"];
      const existing = typeof id === "string" ? sessions.get(id)?.transport : undefined;
      if (req.method === "POST" && raw !== "" && parsed === undefined) return jsonError(res, 400, -32700, "Parse error");
      if (req.method === "GET" && existing) {
        streams++;
        res.once("close", () => streams--);
      }
      const transport = existing ?? (id === undefined && req.method === "POST" ? await newSession() : undefined);
      if (!transport) return jsonError(res, 404, -32001, "Session not found");
      await transport.handleRequest(req, res, parsed);
    })().catch((err: unknown) => {
      if (!res.headersSent) jsonError(res, 500, -32603, String(err));
    });
  });
  const base = await listen(http_, host);

  return {
    ...recorder,
    url: `${base}/mcp`,
    samplingOutcomes,
    openStreams: () => streams,
    addTool: async (name) => {
      tools.push(name);
      await Promise.all([...sessions.values()].map(({ server }) => server.sendToolListChanged()));
    },
    close: async () => {
      await Promise.allSettled([...sessions.values()].map(({ transport }) => transport.close()));
      http_.closeAllConnections();
      await new Promise<void>((resolve) => http_.close(() => resolve()));
    },
  };
}

export interface EverythingUpstream extends Recorder {
  /** The recording proxy's endpoint in front of server-everything's /mcp. */
  readonly url: string;
  close(): Promise<void>;
}

const EVERYTHING = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));

/**
 * server-everything in Streamable HTTP mode (its endpoint is /mcp on $PORT). It listens on every
 * interface (express's app.listen(PORT), no host option), so the tests reach it through a
 * recording proxy on 127.0.0.1 and never advertise its own address.
 */
export async function startEverything(host?: string): Promise<EverythingUpstream> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  await waitForListening(child);
  const recorder = newRecorder();
  const proxy = http.createServer((req, res) => {
    void (async () => {
      const raw = await readText(req);
      record(recorder, req, raw);
      const headers = { ...req.headers };
      delete headers.host;
      const outgoing = http.request({ host: "127.0.0.1", port, path: req.url, method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
      });
      outgoing.on("error", () => res.destroy());
      res.once("close", () => outgoing.destroy());
      outgoing.end(raw);
    })();
  });
  const base = await listen(proxy, host);
  return {
    ...recorder,
    url: `${base}/mcp`,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

async function waitForListening(child: ChildProcess): Promise<void> {
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${stderr}`)), 20_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      if (/listening on port/i.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited ${code}: ${stderr}`));
    });
  });
}
