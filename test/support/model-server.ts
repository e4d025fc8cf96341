// A scripted model server: the OpenAI-compatible endpoints coding-agent CLIs speak, with a script
// in place of the model, so the harness can run OpenCode (Chat Completions) and Codex CLI (the
// Responses API) through a known conversation on loopback and read back every request they sent.
// Each request is normalised into turns that read the same whichever API carried them; the
// script's reply goes back in that API's own wire format, streamed or whole:
//   https://platform.openai.com/docs/api-reference/chat-streaming
//   https://platform.openai.com/docs/api-reference/responses-streaming
// Ids are numbered per server (chatcmpl-1, resp_1, msg_1, fc_1_0, call_1_0) so that tests can
// expect them exactly; an agent never sees two servers in one session, so they need not be unique
// beyond that.
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { describeIssues } from "../../functions/contracts/parse-document.js";

/** A call the script has the model make; `arguments` goes on the wire as its JSON text. */
export interface ModelToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  /**
   * The namespace tool the function belongs to (Responses API only): Codex offers each MCP
   * server's tools inside a `namespace` tool, and runs a call only when it names it.
   */
  readonly namespace?: string;
}

/** What the model says: text, or tool calls (after some text, if `text` is given). */
export type ModelReply = { text: string } | { toolCalls: ModelToolCall[]; text?: string };

/**
 * One message of the conversation, whichever API carried it. A `developer` message is a
 * "system" turn, and a message of several text parts is their texts joined with "\n".
 */
export interface ModelTurn {
  readonly role: "system" | "user" | "assistant" | "tool";
  readonly text: string;
  /** An assistant turn's calls, `arguments` as the text the client sent back. */
  readonly toolCalls?: readonly { id: string; name: string; arguments: string }[];
  /** A tool turn: the id of the call it answers. */
  readonly toolCallId?: string;
}

/** The two APIs a script answers. */
export type ModelApi = "chat" | "responses";

export interface ModelRequest {
  /** The endpoint. A script sees only "chat" and "responses"; "models" and "other" are recorded. */
  readonly api: ModelApi | "models" | "other";
  readonly method: string;
  /** "" when the request is not a model call. */
  readonly model: string;
  readonly stream: boolean;
  readonly turns: readonly ModelTurn[];
  /** The tools offered, by name; a tool without one (web_search, local_shell) by its type. */
  readonly tools: readonly string[];
  /** The request body as sent: its JSON, its text when not JSON, undefined when it was too large. */
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** As requested, query included. */
  readonly path: string;
  /** Set when the server answered with an error: refused, or the script failed. */
  error?: { readonly status: number; readonly message: string };
}

/** Answers one model call. It may be async, to hold a request open on purpose. */
export type ModelScript = (req: ModelRequest) => ModelReply | Promise<ModelReply>;

export interface ModelServer {
  /** The base URL a client is given: it ends in /v1. */
  readonly url: string;
  /** Every request that reached the server, in order of arrival, refused ones included. */
  readonly requests: ModelRequest[];
  /** Ends open connections and resolves once the port is free. */
  close(): Promise<void>;
}

/** A tool result turn, with the name of the tool whose call it answers (undefined if no call had its id). */
export interface ToolResult {
  readonly callId: string;
  readonly name: string | undefined;
  readonly text: string;
}

/** The tool results so far, in order, each matched to the call it answers. */
export function toolResults(req: Pick<ModelRequest, "turns">): ToolResult[] {
  const names = new Map(req.turns.flatMap((turn) => (turn.toolCalls ?? []).map((call) => [call.id, call.name] as const)));
  return req.turns.flatMap((turn) =>
    turn.role === "tool" && turn.toolCallId !== undefined ? [{ callId: turn.toolCallId, name: names.get(turn.toolCallId), text: turn.text }] : [],
  );
}

/** The text of the latest user turn, if there is one. */
export function lastUserText(req: Pick<ModelRequest, "turns">): string | undefined {
  return [...req.turns].reverse().find((turn) => turn.role === "user")?.text;
}

/** Listed by GET /v1/models even before any request named a model. */
export const SCRIPTED_MODEL = "berth-scripted";
/** Larger bodies are refused with 413; a real coding session's request is well under 1 MiB. */
export const MAX_BODY_BYTES = 8 * 2 ** 20;
/** How many deltas a text or an arguments string is streamed in: enough that a client must join them. */
const PIECES = 3;

export async function startModelServer(script: ModelScript, options: { port?: number } = {}): Promise<ModelServer> {
  const state: ServerState = { requests: [], replies: 0, startedAt: nowSeconds(), emitted: new Map() };
  const server = http.createServer((req, res) => {
    serve(req, res, script, state).catch((err: unknown) => abandon(res, err));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: state.requests,
    close: () => {
      // server.close() alone waits for keep-alive sockets and open streams to end by themselves.
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

interface ServerState {
  readonly requests: ModelRequest[];
  /** Replies rendered so far: the number in each reply's ids. */
  replies: number;
  readonly startedAt: number;
  /**
   * Every Responses output item sent, by id, as a client sends it back. A client that lets the
   * server store items (the AI SDK does by default) sends `{type: "item_reference", id}` for them.
   */
  readonly emitted: Map<string, OutputItem>;
}

/** A model call, normalised: what the script reads and what the reply is rendered for. */
interface Conversation {
  readonly model: string;
  readonly stream: boolean;
  /** Chat Completions only: stream_options.include_usage asks for a final usage chunk. */
  readonly includeUsage: boolean;
  readonly turns: ModelTurn[];
  readonly tools: string[];
}

type Answer =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "events"; readonly frames: string[] }
  | { readonly kind: "error"; readonly status: number; readonly message: string };
type Admission = { ok: true; conversation?: Conversation } | { ok: false; status: number; message: string };

async function serve(req: IncomingMessage, res: ServerResponse, script: ModelScript, state: ServerState): Promise<void> {
  const read = await readBounded(req, MAX_BODY_BYTES);
  const api = routeOf(req.method ?? "", req.url ?? "");
  const body = read.ok ? bodyOf(read.raw) : undefined;
  const admission = admit(req, api, read.ok, body, state);
  const conversation = admission.ok ? admission.conversation : undefined;
  const record: ModelRequest = {
    api,
    method: req.method ?? "",
    model: conversation?.model ?? "",
    stream: conversation?.stream ?? false,
    turns: conversation?.turns ?? [],
    tools: conversation?.tools ?? [],
    body: body?.value,
    headers: { ...req.headers },
    path: req.url ?? "",
  };
  // Recorded before it is answered, so a test that sees the answer also sees the request.
  state.requests.push(record);
  const answer = await answerFor(record, admission, script, state);
  if (answer.kind === "error") record.error = { status: answer.status, message: answer.message };
  send(res, answer);
}

async function answerFor(record: ModelRequest, admission: Admission, script: ModelScript, state: ServerState): Promise<Answer> {
  if (!admission.ok) return failure(admission.status, admission.message);
  if (record.api === "models") return { kind: "json", value: modelList(state) };
  // OpenAI's own answer to a path it does not serve, the wrong method on one included.
  if (admission.conversation === undefined || (record.api !== "chat" && record.api !== "responses")) {
    return failure(404, `Invalid URL (${record.method} ${record.path})`);
  }
  const where = `cannot reply to ${record.method} ${record.path}`;
  let reply: unknown;
  try {
    reply = await script(record);
  } catch (err) {
    return failure(500, `${where}: the script threw: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = ReplySchema.safeParse(reply);
  if (!parsed.success) return failure(500, `${where}: the script's reply is invalid: ${describeIssues(parsed.error.issues).join("; ")}`);
  const plan = planOf(parsed.data, ++state.replies, admission.conversation);
  return APIS[record.api].render(plan, admission.conversation, state);
}

// --- Reading and routing ---------------------------------------------------------------------

type Read = { ok: true; raw: Buffer } | { ok: false };

/**
 * The whole body, unless it is over `limit`: then the rest is read and dropped, so memory stays
 * bounded and the client, still uploading, gets the 413 rather than a reset connection.
 */
async function readBounded(req: IncomingMessage, limit: number): Promise<Read> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes <= limit) chunks.push(chunk);
  }
  return bytes > limit ? { ok: false } : { ok: true, raw: Buffer.concat(chunks) };
}

function routeOf(method: string, url: string): ModelRequest["api"] {
  const path = new URL(url, "http://127.0.0.1").pathname;
  if (method === "POST" && path === "/v1/chat/completions") return "chat";
  if (method === "POST" && path === "/v1/responses") return "responses";
  if (method === "GET" && path === "/v1/models") return "models";
  return "other";
}

/** The body as JSON, or as its text (kept for the record) with why it is not JSON. */
function bodyOf(raw: Buffer): { value: unknown; problem?: string } | undefined {
  if (raw.length === 0) return undefined;
  const text = raw.toString("utf8");
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { value: text, problem: err instanceof Error ? err.message : String(err) };
  }
}

function admit(
  req: IncomingMessage,
  api: ModelRequest["api"],
  readWhole: boolean,
  body: { value: unknown; problem?: string } | undefined,
  state: ServerState,
): Admission {
  const refuse = (status: number, message: string): Admission => ({ ok: false, status, message });
  if (!readWhole) return refuse(413, `cannot read the request body: it is over ${MAX_BODY_BYTES} bytes`);
  if (api !== "chat" && api !== "responses") return { ok: true };
  // A compressed body is refused by name, not as JSON that does not parse.
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding !== "identity") return refuse(415, `cannot read the request body: content-encoding ${encoding} is not supported`);
  if (body === undefined) return refuse(400, "cannot read the request body: it is empty");
  if (body.problem !== undefined) return refuse(400, `cannot parse the request body as JSON: ${body.problem}`);
  const normalised = APIS[api].normalise(body.value, state);
  return normalised.ok ? { ok: true, conversation: normalised.conversation } : refuse(400, `cannot read the request body: ${normalised.problems.join("; ")}`);
}

// --- Writing ---------------------------------------------------------------------------------

function send(res: ServerResponse, answer: Answer): void {
  if (answer.kind === "json") return sendJson(res, 200, answer.value);
  if (answer.kind === "error") return sendJson(res, answer.status, openAIError(answer.status, answer.message));
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const frame of answer.frames) res.write(frame);
  // Codex takes the end of the body, after response.completed, as the end of the turn.
  res.end();
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function failure(status: number, message: string): Answer {
  return { kind: "error", status, message };
}

/** OpenAI's error body: https://platform.openai.com/docs/guides/error-codes */
function openAIError(status: number, message: string): unknown {
  return { error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code: null } };
}

/** A fault of this server, not of the script: a 500 if nothing was sent yet, else a cut stream. */
function abandon(res: ServerResponse, err: unknown): void {
  if (res.headersSent || res.destroyed) return void res.destroy();
  sendJson(res, 500, openAIError(500, `cannot reply: ${err instanceof Error ? err.message : String(err)}`));
}

function modelList(state: ServerState): unknown {
  const seen = new Set([SCRIPTED_MODEL, ...state.requests.map((r) => r.model).filter((m) => m !== "")]);
  return { object: "list", data: [...seen].map((id) => ({ id, object: "model", created: state.startedAt, owned_by: "berth" })) };
}

// --- The reply, planned once for either API --------------------------------------------------

const ReplySchema = z.union([
  z.strictObject({ text: z.string() }),
  z.strictObject({
    toolCalls: z.array(z.strictObject({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()), namespace: z.string().min(1).optional() })).min(1),
    text: z.string().optional(),
  }),
]);

/** The reply with its ids assigned and its arguments serialised: what both renderers write. */
interface Plan {
  /** Reply number on this server: the n in every id of the reply. */
  readonly n: number;
  readonly created: number;
  /** undefined: no message at all (a tool-calls-only reply), as opposed to an empty one. */
  readonly text: string | undefined;
  readonly calls: readonly { readonly callId: string; readonly name: string; readonly arguments: string; readonly namespace?: string }[];
  readonly inputTokens: number;
  readonly outputTokens: number;
}

function planOf(reply: z.output<typeof ReplySchema>, n: number, conversation: Conversation): Plan {
  const text = reply.text;
  const calls = ("toolCalls" in reply ? reply.toolCalls : []).map((call, i) => ({
    callId: `call_${n}_${i}`,
    name: call.name,
    arguments: JSON.stringify(call.arguments),
    ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
  }));
  const inputText = conversation.turns.map((t) => t.text + (t.toolCalls ?? []).map((c) => c.arguments).join("")).join("");
  return { n, created: nowSeconds(), text, calls, inputTokens: tokens(inputText), outputTokens: tokens((text ?? "") + calls.map((c) => c.arguments).join("")) };
}

/** A rough count (four characters a token), enough for clients that show or budget usage. */
function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** At most PIECES pieces, cut between code points so no delta carries half a character. */
function pieces(text: string): string[] {
  const chars = Array.from(text);
  const size = Math.ceil(chars.length / PIECES);
  const out: string[] = [];
  for (let at = 0; at < chars.length; at += size) out.push(chars.slice(at, at + size).join(""));
  return out;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

interface ApiHandler {
  normalise(body: unknown, state: ServerState): { ok: true; conversation: Conversation } | { ok: false; problems: string[] };
  render(plan: Plan, conversation: Conversation, state: ServerState): Answer;
}

// --- Chat Completions: OpenCode, through the AI SDK's openai-compatible provider ------------

const Content = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]);

const ChatToolCall = z.looseObject({ id: z.string(), function: z.looseObject({ name: z.string(), arguments: z.string() }) });

const ChatMessage = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal(["system", "developer", "user"]), content: Content }),
  // An assistant message that only calls tools has a null content.
  z.looseObject({ role: z.literal("assistant"), content: Content.nullish(), tool_calls: z.array(ChatToolCall).nullish() }),
  z.looseObject({ role: z.literal("tool"), content: Content, tool_call_id: z.string() }),
]);

const ChatBody = z.looseObject({
  model: z.string(),
  messages: z.array(ChatMessage),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }).optional() })).nullish(),
});

function chatTurn(message: z.output<typeof ChatMessage>): ModelTurn {
  const text = textOf(message.content);
  switch (message.role) {
    case "assistant": {
      const calls = (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      return calls.length > 0 ? { role: "assistant", text, toolCalls: calls } : { role: "assistant", text };
    }
    case "tool":
      return { role: "tool", text, toolCallId: message.tool_call_id };
    case "developer":
      return { role: "system", text };
    default:
      return { role: message.role, text };
  }
}

/** Plain text, or the text parts joined; parts without text (images, refusals) say nothing here. */
function textOf(content: z.output<typeof Content> | null | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.flatMap((part) => (part.text === undefined ? [] : [part.text])).join("\n");
}

function finishReason(plan: Plan): "stop" | "tool_calls" {
  return plan.calls.length > 0 ? "tool_calls" : "stop";
}

function chatUsage(plan: Plan): unknown {
  return {
    prompt_tokens: plan.inputTokens,
    completion_tokens: plan.outputTokens,
    total_tokens: plan.inputTokens + plan.outputTokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

/**
 * The chunks of a streamed reply: the role, the text in pieces, each call (its id and name
 * first, then its arguments in pieces), the finish reason, and the usage chunk if asked for
 * (choices empty; every other chunk then carries `usage: null`, as OpenAI's do).
 */
function chatChunks(plan: Plan, conversation: Conversation): unknown[] {
  const usage = (value: unknown) => (conversation.includeUsage ? { usage: value } : {});
  const chunk = (choices: unknown[], usageValue: unknown = null) => ({
    id: `chatcmpl-${plan.n}`,
    object: "chat.completion.chunk",
    created: plan.created,
    model: conversation.model,
    choices,
    ...usage(usageValue),
  });
  const delta = (value: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }]);
  return [
    delta({ role: "assistant", content: plan.text === undefined ? null : "" }),
    ...pieces(plan.text ?? "").map((content) => delta({ content })),
    ...plan.calls.flatMap((call, index) => [
      delta({ tool_calls: [{ index, id: call.callId, type: "function", function: { name: call.name, arguments: "" } }] }),
      ...pieces(call.arguments).map((args) => delta({ tool_calls: [{ index, function: { arguments: args } }] })),
    ]),
    delta({}, finishReason(plan)),
    ...(conversation.includeUsage ? [chunk([], chatUsage(plan))] : []),
  ];
}

function chatCompletion(plan: Plan, conversation: Conversation): unknown {
  const toolCalls = plan.calls.map((c) => ({ id: c.callId, type: "function", function: { name: c.name, arguments: c.arguments } }));
  return {
    id: `chatcmpl-${plan.n}`,
    object: "chat.completion",
    created: plan.created,
    model: conversation.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: plan.text ?? null, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: finishReason(plan),
      },
    ],
    usage: chatUsage(plan),
  };
}

const chat: ApiHandler = {
  normalise: (value) => {
    const parsed = ChatBody.safeParse(value);
    if (!parsed.success) return { ok: false, problems: describeIssues(parsed.error.issues) };
    const body = parsed.data;
    return {
      ok: true,
      conversation: {
        model: body.model,
        stream: body.stream === true,
        includeUsage: body.stream_options?.include_usage === true,
        turns: body.messages.map(chatTurn),
        tools: (body.tools ?? []).map((t) => t.function?.name ?? t.type),
      },
    };
  },
  render: (plan, conversation) =>
    conversation.stream
      ? { kind: "events", frames: [...chatChunks(plan, conversation).map((c) => `data: ${JSON.stringify(c)}\n\n`), "data: [DONE]\n\n"] }
      : { kind: "json", value: chatCompletion(plan, conversation) },
};

// --- Responses API: Codex CLI ----------------------------------------------------------------

const ResponsesBody = z.looseObject({
  model: z.string(),
  instructions: z.string().nullish(),
  input: z.union([z.string(), z.array(z.looseObject({ type: z.string().optional() }))]).optional(),
  stream: z.boolean().nullish(),
  tools: z.array(z.looseObject({ type: z.string(), name: z.string().optional() })).nullish(),
});

/** Reads one kind of input item into the turns, or says which of its fields is wrong. */
interface InputItemReader {
  read(turns: ModelTurn[], item: unknown, at: PropertyKey[]): string[];
}

function reader<S extends z.ZodType>(schema: S, add: (turns: ModelTurn[], item: z.output<S>) => void): InputItemReader {
  return {
    read: (turns, item, at) => {
      const parsed = schema.safeParse(item);
      if (!parsed.success) return describeIssues(parsed.error.issues, at);
      add(turns, parsed.data);
      return [];
    },
  };
}

/**
 * A call joins the assistant turn just before it: the Responses API lists a reply's message and
 * its calls as separate items, where Chat Completions has one assistant message carrying both.
 */
function addCall(turns: ModelTurn[], call: { id: string; name: string; arguments: string }): void {
  const last = turns.at(-1);
  if (last?.role === "assistant") turns[turns.length - 1] = { ...last, toolCalls: [...(last.toolCalls ?? []), call] };
  else turns.push({ role: "assistant", text: "", toolCalls: [call] });
}

const CallOutput = z.looseObject({ call_id: z.string(), output: Content });
const addOutput = (turns: ModelTurn[], item: z.output<typeof CallOutput>) => turns.push({ role: "tool", text: textOf(item.output), toolCallId: item.call_id });

/**
 * The input items that are turns, by type. Others (reasoning, web_search_call, local_shell_call,
 * ...) carry nothing a script reads and are left in the recorded body.
 */
const INPUT_ITEMS = new Map<string, InputItemReader>([
  [
    "message",
    reader(z.looseObject({ role: z.enum(["system", "developer", "user", "assistant"]), content: Content }), (turns, m) =>
      turns.push({ role: m.role === "developer" ? "system" : m.role, text: textOf(m.content) }),
    ),
  ],
  [
    "function_call",
    reader(z.looseObject({ call_id: z.string(), name: z.string(), arguments: z.string() }), (turns, c) =>
      addCall(turns, { id: c.call_id, name: c.name, arguments: c.arguments }),
    ),
  ],
  ["function_call_output", reader(CallOutput, addOutput)],
  [
    "custom_tool_call",
    reader(z.looseObject({ call_id: z.string(), name: z.string(), input: z.string() }), (turns, c) =>
      addCall(turns, { id: c.call_id, name: c.name, arguments: c.input }),
    ),
  ],
  ["custom_tool_call_output", reader(CallOutput, addOutput)],
]);

const ItemReference = z.looseObject({ type: z.literal("item_reference"), id: z.string() });

function responsesTurns(body: z.output<typeof ResponsesBody>, emitted: ReadonlyMap<string, OutputItem>): { turns: ModelTurn[]; problems: string[] } {
  const turns: ModelTurn[] = body.instructions === null || body.instructions === undefined ? [] : [{ role: "system", text: body.instructions }];
  if (typeof body.input === "string") return { turns: [...turns, { role: "user", text: body.input }], problems: [] };
  const problems = (body.input ?? []).flatMap((given, i) => {
    const at = ["input", i];
    const reference = ItemReference.safeParse(given);
    if (!reference.success) return readItem(turns, given, at);
    const item = emitted.get(reference.data.id);
    return item === undefined ? [`${z.core.toDotPath(at)}.id: ${reference.data.id} is no item this server sent`] : readItem(turns, item, at);
  });
  return { turns, problems };
}

function readItem(turns: ModelTurn[], item: { type?: string | undefined }, at: PropertyKey[]): string[] {
  // An "easy input message" ({role, content}) has no type.
  return INPUT_ITEMS.get(item.type ?? "message")?.read(turns, item, at) ?? [];
}

type OutputItem =
  | { type: "message"; id: string; role: "assistant"; status: string; content: { type: "output_text"; text: string; annotations: [] }[] }
  | { type: "function_call"; id: string; call_id: string; name: string; namespace?: string; arguments: string; status: string };

/** The reply's output items as response.completed lists them: a message first, then each call. */
function outputItems(plan: Plan): OutputItem[] {
  const message: OutputItem[] =
    plan.text === undefined
      ? []
      : [
          {
            type: "message",
            id: `msg_${plan.n}`,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: plan.text, annotations: [] }],
          },
        ];
  const calls = plan.calls.map((c, i): OutputItem => ({
    type: "function_call",
    id: `fc_${plan.n}_${i}`,
    call_id: c.callId,
    name: c.name,
    ...(c.namespace === undefined ? {} : { namespace: c.namespace }),
    arguments: c.arguments,
    status: "completed",
  }));
  return [...message, ...calls];
}

function responseObject(plan: Plan, conversation: Conversation, status: "in_progress" | "completed"): unknown {
  const done = status === "completed";
  return {
    id: `resp_${plan.n}`,
    object: "response",
    created_at: plan.created,
    status,
    error: null,
    incomplete_details: null,
    model: conversation.model,
    output: done ? outputItems(plan) : [],
    usage: done
      ? {
          input_tokens: plan.inputTokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: plan.outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: plan.inputTokens + plan.outputTokens,
        }
      : null,
  };
}

/**
 * The events of one output item, from added (in progress: no content, no arguments yet) to done
 * (the whole item). openai-node's accumulator appends each delta to what `added` gave it, so the
 * item starts empty.
 */
function itemEvents(item: OutputItem, outputIndex: number): Record<string, unknown>[] {
  const at = { item_id: item.id, output_index: outputIndex };
  if (item.type === "function_call") {
    return [
      { type: "response.output_item.added", output_index: outputIndex, item: { ...item, arguments: "", status: "in_progress" } },
      ...pieces(item.arguments).map((delta) => ({ type: "response.function_call_arguments.delta", ...at, delta })),
      { type: "response.function_call_arguments.done", ...at, arguments: item.arguments },
      { type: "response.output_item.done", output_index: outputIndex, item },
    ];
  }
  const text = item.content[0]?.text ?? "";
  const part = { ...at, content_index: 0 };
  return [
    { type: "response.output_item.added", output_index: outputIndex, item: { ...item, status: "in_progress", content: [] } },
    { type: "response.content_part.added", ...part, part: { type: "output_text", text: "", annotations: [] } },
    ...pieces(text).map((delta) => ({ type: "response.output_text.delta", ...part, delta, logprobs: [] })),
    { type: "response.output_text.done", ...part, text, logprobs: [] },
    { type: "response.content_part.done", ...part, part: { type: "output_text", text, annotations: [] } },
    { type: "response.output_item.done", output_index: outputIndex, item },
  ];
}

/** Each event named twice, in `event:` and in its `type`, and numbered in order from 0. */
function responsesFrames(plan: Plan, conversation: Conversation): string[] {
  const events = [
    { type: "response.created", response: responseObject(plan, conversation, "in_progress") },
    { type: "response.in_progress", response: responseObject(plan, conversation, "in_progress") },
    ...outputItems(plan).flatMap(itemEvents),
    { type: "response.completed", response: responseObject(plan, conversation, "completed") },
  ];
  return events.map(({ type, ...rest }, sequence) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...rest })}\n\n`);
}

const responses: ApiHandler = {
  normalise: (value, state) => {
    const parsed = ResponsesBody.safeParse(value);
    if (!parsed.success) return { ok: false, problems: describeIssues(parsed.error.issues) };
    const body = parsed.data;
    const { turns, problems } = responsesTurns(body, state.emitted);
    if (problems.length > 0) return { ok: false, problems };
    return {
      ok: true,
      conversation: { model: body.model, stream: body.stream === true, includeUsage: false, turns, tools: (body.tools ?? []).map((t) => t.name ?? t.type) },
    };
  },
  render: (plan, conversation, state) => {
    for (const item of outputItems(plan)) state.emitted.set(item.id, item);
    return conversation.stream
      ? { kind: "events", frames: responsesFrames(plan, conversation) }
      : { kind: "json", value: responseObject(plan, conversation, "completed") };
  },
};

/** Which API reads and answers a model call. */
const APIS: Record<ModelApi, ApiHandler> = { chat, responses };
