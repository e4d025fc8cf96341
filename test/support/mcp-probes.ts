// The probes the gate must refuse, as raw HTTP requests, and a tiny Streamable HTTP client to send
// them. Raw on purpose: an SDK client would refuse to send a batch, a duplicate key or a malformed
// body, and those are exactly what a hostile runtime would send. The live suite sends the same
// requests from inside a pod, so nothing here depends on the test process.
import type { RecordedMessage } from "./mcp-upstream.js";

/** The fixture the probes are written against: what the workspace declares, what the upstream has. */
export const DECLARED_TOOLS = ["search", "fetch", "ask-model", "later-tool", "missing-tool"] as const;
/**
 * Paged two at a time upstream, so `fetch` (declared) and `admin-shell` (not) are only on page 2.
 * The upstream also offers look-alikes of `search`, as a hostile one could: refusing them must then
 * rest on exact matching alone, not on the upstream lacking them.
 */
export const UPSTREAM_TOOLS = ["search", "delete-all", "fetch", "admin-shell", "ask-model", "Search", "s\u0435arch", "\uff53\uff45\uff41\uff52\uff43\uff48", "search ", " search"] as const;

export interface RpcMessage {
  readonly jsonrpc: "2.0";
  readonly id?: string | number | null;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string };
}

export interface RawReply {
  readonly status: number;
  readonly messages: RpcMessage[];
}

const ACCEPT = "application/json, text/event-stream";

/** The JSON-RPC messages in an SSE body (`data:` lines, events split by blank lines). */
export function parseSse(text: string): RpcMessage[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) => event.split(/\r?\n/).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n"))
    .filter((data) => data !== "")
    .map((data) => JSON.parse(data) as RpcMessage);
}

/** The JSON-RPC messages of one HTTP reply, by its content type (SSE, JSON, or none). */
export function messagesOf(contentType: string, text: string): RpcMessage[] {
  if (contentType.includes("text/event-stream")) return parseSse(text);
  if (contentType.includes("application/json") && text !== "") {
    const parsed = JSON.parse(text) as RpcMessage | RpcMessage[];
    return Array.isArray(parsed) ? parsed : [parsed];
  }
  return [];
}

async function readReply(response: Response): Promise<RawReply> {
  return { status: response.status, messages: messagesOf(response.headers.get("content-type") ?? "", await response.text()) };
}

/** The raw bodies that open a session (initialize, then notifications/initialized), for clients that send bytes themselves. */
export const OPEN_SESSION: readonly string[] = [
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "berth-probe", version: "0.0.0" } } }),
  JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
];

/** An open session: initialize, notifications/initialized, then whatever the caller sends. */
export class RawMcpSession {
  private nextId = 1000;

  private constructor(
    readonly url: string,
    readonly sessionId: string,
    private readonly baseHeaders: Readonly<Record<string, string>>,
  ) {}

  static async open(url: string, headers: Readonly<Record<string, string>> = {}): Promise<RawMcpSession> {
    const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "berth-probe", version: "0.0.0" } } };
    const response = await fetch(url, { method: "POST", headers: { ...headers, accept: ACCEPT, "content-type": "application/json" }, body: JSON.stringify(init) });
    const reply = await readReply(response);
    const sessionId = response.headers.get("mcp-session-id");
    const version = reply.messages[0]?.result?.protocolVersion;
    if (sessionId === null || typeof version !== "string") throw new Error(`initialize failed: HTTP ${reply.status} ${JSON.stringify(reply.messages)}`);
    const session = new RawMcpSession(url, sessionId, { ...headers, "mcp-protocol-version": version });
    const initialized = await session.post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    if (initialized.status !== 202) throw new Error(`notifications/initialized: HTTP ${initialized.status}`);
    return session;
  }

  private headers(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    return { ...this.baseHeaders, ...extra, accept: ACCEPT, "content-type": "application/json", "mcp-session-id": this.sessionId };
  }

  /** Sends `body` exactly as given. */
  async post(body: string, headers: Readonly<Record<string, string>> = {}): Promise<RawReply> {
    return readReply(await fetch(this.url, { method: "POST", headers: this.headers(headers), body }));
  }

  /** A request and the response carrying its id (the reply may hold server requests before it). */
  async request(method: string, params: Record<string, unknown> = {}): Promise<{ response: RpcMessage; reply: RawReply }> {
    const id = this.nextId++;
    const reply = await this.post(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const response = reply.messages.find((message) => message.id === id && message.method === undefined);
    if (!response) throw new Error(`${method}: no response in HTTP ${reply.status} ${JSON.stringify(reply.messages)}`);
    return { response, reply };
  }

  /** Every tool name across every page the server offers. */
  async listToolNames(): Promise<string[]> {
    const names: string[] = [];
    let cursor: unknown;
    do {
      const { response } = await this.request("tools/list", cursor === undefined ? {} : { cursor });
      const result = response.result ?? {};
      names.push(...(result.tools as { name: string }[]).map((tool) => tool.name));
      cursor = result.nextCursor;
    } while (cursor !== undefined);
    return names;
  }

  /** Opens the standalone GET stream, where notifications not tied to a request arrive. */
  async listen(): Promise<EventStream> {
    const abort = new AbortController();
    const response = await fetch(this.url, { method: "GET", headers: { ...this.baseHeaders, accept: "text/event-stream", "mcp-session-id": this.sessionId }, signal: abort.signal });
    if (response.status !== 200 || !response.body) throw new Error(`GET stream: HTTP ${response.status}`);
    return new EventStream(response.body, abort);
  }

  async close(): Promise<void> {
    await fetch(this.url, { method: "DELETE", headers: this.headers() }).catch(() => undefined);
  }
}

export class EventStream {
  readonly messages: RpcMessage[] = [];

  constructor(body: ReadableStream<Uint8Array>, private readonly abort: AbortController) {
    void this.pump(body);
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        const end = buffer.lastIndexOf("\n\n");
        if (end < 0) continue;
        this.messages.push(...parseSse(buffer.slice(0, end + 2)));
        buffer = buffer.slice(end + 2);
      }
    } catch {
      // Aborted by close(), or the server ended the stream.
    }
  }

  async waitFor(predicate: (message: RpcMessage) => boolean, timeoutMs = 5_000): Promise<RpcMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching message on the GET stream within ${timeoutMs} ms: ${JSON.stringify(this.messages)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.abort.abort();
  }
}

/** What a refused probe must not have caused upstream. */
export type Forbidden = { readonly toolCall: string } | { readonly method: string } | { readonly anything: true };

export function isForbidden(forbidden: Forbidden, message: RecordedMessage): boolean {
  if ("anything" in forbidden) return true;
  if ("method" in forbidden) return message.method === forbidden.method;
  return message.method === "tools/call" && message.params?.name === forbidden.toolCall;
}

export interface NegativeProbe {
  readonly name: string;
  /** The body, byte for byte. */
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly forbidden: Forbidden;
  /** A tool the upstream adds at run time before the probe is sent. */
  readonly addedAtRunTime?: string;
}

const call = (id: number, name: string): string => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: {} } });

/**
 * The probes that need only one declared tool (`allowed`) and one undeclared tool the upstream
 * really has (`denied`): they run against any upstream, server-everything included.
 */
export function basicProbes(allowed: string, denied: string): NegativeProbe[] {
  const lookAlike = allowed.replace(/e/, "\u0435");
  // Without an "e" the look-alike would be the allowed name itself, and the probe would be a valid call.
  if (lookAlike === allowed) throw new Error(`basicProbes: "${allowed}" has no "e" to swap for a Cyrillic look-alike`);
  const fullwidth = [...allowed].map((c) => (/[a-z]/.test(c) ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join("");
  const capitalised = allowed.charAt(0).toUpperCase() + allowed.slice(1);
  /** The allowed name first, then `secondKey` (raw JSON, decoding to "name") naming the denied tool. */
  const duplicateName = (id: number, secondKey: string): string =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(allowed)},${secondKey}:${JSON.stringify(denied)},"arguments":{}}}`;
  return [
    { name: "undeclared tool", body: call(1, denied), forbidden: { toolCall: denied } },
    { name: "case variant", body: call(2, capitalised), forbidden: { toolCall: capitalised } },
    { name: "Unicode look-alike (Cyrillic \u0435)", body: call(3, lookAlike), forbidden: { toolCall: lookAlike } },
    { name: "fullwidth letters", body: call(4, fullwidth), forbidden: { toolCall: fullwidth } },
    { name: "trailing space", body: call(5, `${allowed} `), forbidden: { toolCall: `${allowed} ` } },
    { name: "leading space", body: call(6, ` ${allowed}`), forbidden: { toolCall: ` ${allowed}` } },
    { name: "duplicate name keys", body: duplicateName(7, '"name"'), forbidden: { anything: true } },
    { name: "duplicate name keys, one escaped", body: duplicateName(8, '"n\\u0061me"'), forbidden: { anything: true } },
    { name: "batch of an allowed and a denied call", body: `[${call(9, allowed)},${call(10, denied)}]`, forbidden: { anything: true } },
    {
      name: "routing headers naming an allowed tool",
      body: call(11, denied),
      headers: { "Mcp-Tool-Name": allowed, "X-Mcp-Tool": allowed, "Mcp-Method": "tools/list" },
      forbidden: { toolCall: denied },
    },
    { name: "resources/read", body: JSON.stringify({ jsonrpc: "2.0", id: 12, method: "resources/read", params: { uri: "file:///etc/passwd" } }), forbidden: { method: "resources/read" } },
    { name: "prompts/get", body: JSON.stringify({ jsonrpc: "2.0", id: 13, method: "prompts/get", params: { name: "any" } }), forbidden: { method: "prompts/get" } },
    {
      name: "completion/complete",
      body: JSON.stringify({ jsonrpc: "2.0", id: 14, method: "completion/complete", params: { ref: { type: "ref/prompt", name: "any" }, argument: { name: "a", value: "b" } } }),
      forbidden: { method: "completion/complete" },
    },
    { name: "logging/setLevel", body: JSON.stringify({ jsonrpc: "2.0", id: 15, method: "logging/setLevel", params: { level: "debug" } }), forbidden: { method: "logging/setLevel" } },
    { name: "unparseable body", body: `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":${JSON.stringify(allowed)}`, forbidden: { anything: true } },
  ];
}

/** Every probe, against the recording upstream (DECLARED_TOOLS in front of UPSTREAM_TOOLS). */
export const NEGATIVE_PROBES: readonly NegativeProbe[] = [
  ...basicProbes("search", "delete-all"),
  { name: "undeclared tool listed only on page 2", body: call(16, "admin-shell"), forbidden: { toolCall: "admin-shell" } },
  { name: "undeclared tool added at run time", body: call(17, "rogue-tool"), forbidden: { toolCall: "rogue-tool" }, addedAtRunTime: "rogue-tool" },
  { name: "declared tool the upstream does not offer", body: call(18, "missing-tool"), forbidden: { toolCall: "missing-tool" } },
];

/** Declared tools that must work: listed by the gate and callable. */
export interface PositiveProbe {
  readonly name: string;
  readonly tool: string;
  readonly addedAtRunTime?: string;
}

export const POSITIVE_PROBES: readonly PositiveProbe[] = [
  { name: "declared tool on page 1", tool: "search" },
  { name: "declared tool only on page 2", tool: "fetch" },
  { name: "declared tool added at run time", tool: "later-tool", addedAtRunTime: "later-tool" },
];
