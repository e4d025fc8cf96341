// The gate's HTTP face: /healthz, and one Streamable HTTP endpoint per declared server at
// /mcp/<name>. It terminates MCP: each workspace session gets its own SDK Server and its own
// upstream Client session (gated-session.ts), and a POST body is read strictly (policy.ts) before
// the SDK sees it.
import { randomUUID } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { pino, type Logger } from "pino";
import { createGatedSession, type GatedSession, type UpstreamTarget } from "./gated-session.js";
import { passThrough } from "./passthrough.js";
import type { GatedServer, Policy } from "../contracts/mcp-gate-policy.js";
import { checkIncomingBody, type JsonRpcErrorResponse, rpcError, RPC_ERROR } from "./policy.js";

/** A POST body larger than this is refused unread: no MCP request the gate forwards needs more. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Sessions per gate: a runaway runtime opening sessions must not grow the gate without bound. */
export const MAX_SESSIONS = 64;

export interface GateOptions {
  readonly policy: Policy;
  readonly listen: { readonly host: string; readonly port: number };
  /** false only for the tests' negative controls: the gate then proxies every request unchanged. */
  readonly enforce: boolean;
  /** Where credentialEnv names are looked up (process.env in production). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
}

export interface RunningGate {
  readonly url: string;
  close(): Promise<void>;
}

interface Route {
  readonly policy: GatedServer;
  readonly target: UpstreamTarget;
}

interface Session {
  readonly server: string;
  readonly transport: StreamableHTTPServerTransport;
  readonly gated: GatedSession;
}

export async function startGate(options: GateOptions): Promise<RunningGate> {
  const log = options.logger ?? pino({ base: { component: "mcp-gate" } });
  const routes = new Map(options.policy.servers.map((server, index) => [server.name, { policy: server, target: upstreamTarget(server, index, options.env) }]));
  const sessions = new Map<string, Session>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://gate").pathname;
    if (path === "/healthz" && req.method === "GET") return void res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    const match = /^\/mcp\/([^/]+)$/.exec(path);
    const route = match ? routes.get(match[1]!) : undefined;
    if (!route) return sendRpcError(res, 404, rpcError(null, RPC_ERROR.invalidRequest, `no MCP server is declared at ${path}`));
    if (!options.enforce) return passThrough(req, res, route.target.url);
    if (req.method === "POST") return handlePost(req, res, route);
    if (req.method === "GET" || req.method === "DELETE") {
      const session = findSession(req, res, route);
      return session && session.transport.handleRequest(req, res);
    }
    res.writeHead(405, { allow: "GET, POST, DELETE" }).end();
  };

  const handlePost = async (req: IncomingMessage, res: ServerResponse, route: Route): Promise<void> => {
    const raw = await readBody(req);
    const sessionHeader = header(req, "mcp-session-id");
    if (raw === undefined) return sendRpcError(res, 413, rpcError(null, RPC_ERROR.invalidRequest, `body larger than ${MAX_BODY_BYTES} bytes`));
    const body = checkIncomingBody(raw);
    if (!body.ok) {
      log.warn({ session: sessionHeader, server: route.policy.name, reason: body.error.error.message }, "refused");
      return sendRpcError(res, 400, body.error);
    }
    if (sessionHeader === undefined && body.message.method === "initialize") {
      const session = await openSession(route, res);
      return session && session.transport.handleRequest(req, res, body.message);
    }
    const session = findSession(req, res, route);
    return session && session.transport.handleRequest(req, res, body.message);
  };

  const findSession = (req: IncomingMessage, res: ServerResponse, route: Route): Session | undefined => {
    const id = header(req, "mcp-session-id");
    if (id === undefined) return void sendRpcError(res, 400, rpcError(null, RPC_ERROR.invalidRequest, "Mcp-Session-Id header is required after initialize"));
    const session = sessions.get(id);
    // A session opened on one server's path is not valid on another's.
    if (!session || session.server !== route.policy.name) return void sendRpcError(res, 404, rpcError(null, -32001, "Session not found"));
    return session;
  };

  const openSession = async (route: Route, res: ServerResponse): Promise<Session | undefined> => {
    if (sessions.size >= MAX_SESSIONS) return void sendRpcError(res, 503, rpcError(null, RPC_ERROR.internal, `too many sessions (${MAX_SESSIONS})`));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, session),
    });
    const gated = createGatedSession({ policy: route.policy, target: route.target, log, sessionId: () => transport.sessionId });
    const session: Session = { server: route.policy.name, transport, gated };
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      gated.close().catch((err: unknown) => log.debug({ session: transport.sessionId, err }, "cannot close upstream session"));
    };
    await gated.server.connect(transport);
    return session;
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err, path: req.url }, "cannot handle request");
      if (!res.headersSent) sendRpcError(res, 500, rpcError(null, RPC_ERROR.internal, "internal error"));
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.listen.port, options.listen.host, resolve);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((session) => session.transport.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The upstream URL and the gate's own headers for it: the bearer credential and nothing else. */
function upstreamTarget(server: GatedServer, index: number, env: GateOptions["env"]): UpstreamTarget {
  if (server.credentialEnv === undefined) return { url: new URL(server.upstream), headers: {} };
  const credential = env[server.credentialEnv];
  if (credential === undefined || credential === "") throw new Error(`cannot start gate: servers[${index}].credentialEnv: ${server.credentialEnv} is not set`);
  return { url: new URL(server.upstream), headers: { authorization: `Bearer ${credential}` } };
}

/** The body as text, or undefined once it exceeds MAX_BODY_BYTES (the rest is drained unread). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      req.off("data", onData);
      req.resume();
      resolve(undefined);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.once("error", reject);
  });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sendRpcError(res: ServerResponse, status: number, error: JsonRpcErrorResponse): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(error));
}
