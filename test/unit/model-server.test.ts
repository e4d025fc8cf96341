// The scripted model server, read the way its clients read it: SSE frames split on blank lines,
// Chat Completions deltas joined by tool-call index (as the AI SDK does for OpenCode), Responses
// events joined by item and checked against the items that response.completed lists (as Codex
// and openai-node do). Exact replies are compared whole; `created` is read from the reply itself.
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  lastUserText,
  MAX_BODY_BYTES,
  type ModelReply,
  type ModelRequest,
  type ModelScript,
  type ModelServer,
  type ModelTurn,
  startModelServer,
  toolResults,
} from "../support/model-server.js";

/** Runs `body` against a fresh server and closes it whatever happens. */
async function withServer<T>(script: ModelScript, body: (server: ModelServer) => Promise<T>): Promise<T> {
  const server = await startModelServer(script);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface SseFrame {
  event: string | undefined;
  data: string;
}

/** A small SSE reader: events end at a blank line; `event:` names one, `data:` lines are joined. */
async function readSse(res: Response): Promise<SseFrame[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const field = (name: string) => lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ""));
      return { event: field("event")[0], data: field("data").join("\n") };
    });
}

const ChatChunk = z.object({
  id: z.string(),
  object: z.literal("chat.completion.chunk"),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      delta: z.object({
        role: z.literal("assistant").optional(),
        content: z.string().nullish(),
        tool_calls: z
          .array(
            z.object({
              index: z.number(),
              id: z.string().optional(),
              type: z.literal("function").optional(),
              function: z.object({ name: z.string().optional(), arguments: z.string().optional() }),
            }),
          )
          .optional(),
      }),
      finish_reason: z.enum(["stop", "tool_calls"]).nullable(),
    }),
  ),
  usage: z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() }).nullish(),
});

interface AssembledChat {
  text: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  ids: string[];
}

/** Joins the deltas as a client does: content appended, each call by its index, id and name from its first delta. */
function assembleChat(frames: SseFrame[]): AssembledChat {
  expect(frames.at(-1)).toEqual({ event: undefined, data: "[DONE]" });
  const out: AssembledChat = { text: "", toolCalls: [], finishReason: null, usage: null, ids: [] };
  for (const frame of frames.slice(0, -1)) {
    const chunk = ChatChunk.parse(JSON.parse(frame.data));
    out.ids.push(chunk.id);
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      out.text += choice.delta.content ?? "";
      for (const call of choice.delta.tool_calls ?? []) {
        const slot = (out.toolCalls[call.index] ??= { id: "", name: "", arguments: "" });
        slot.id = call.id ?? slot.id;
        slot.name = call.function.name ?? slot.name;
        slot.arguments += call.function.arguments ?? "";
      }
      out.finishReason = choice.finish_reason ?? out.finishReason;
    }
  }
  return out;
}

const ResponsesEvent = z.looseObject({
  type: z.string(),
  sequence_number: z.number(),
  item_id: z.string().optional(),
  delta: z.string().optional(),
  item: z.looseObject({ type: z.string(), id: z.string() }).optional(),
  response: z.looseObject({ id: z.string(), created_at: z.number(), output: z.array(z.unknown()) }).optional(),
});
type ResponsesEvent = z.output<typeof ResponsesEvent>;

/** The events, checked to be named in `event:` as in `type` and numbered in order from 0. */
function responsesEvents(frames: SseFrame[]): ResponsesEvent[] {
  const events = frames.map((f) => ResponsesEvent.parse(JSON.parse(f.data)));
  expect(frames.map((f) => f.event)).toEqual(events.map((e) => e.type));
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  return events;
}

/** What the deltas add up to, by item id: a message's text, a call's arguments. */
function deltasByItem(events: ResponsesEvent[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of events) {
    if ((e.type === "response.output_text.delta" || e.type === "response.function_call_arguments.delta") && e.item_id !== undefined) {
      out[e.item_id] = (out[e.item_id] ?? "") + (e.delta ?? "");
    }
  }
  return out;
}

const CHAT = (server: ModelServer) => `${server.url}/chat/completions`;
const RESPONSES = (server: ModelServer) => `${server.url}/responses`;

const say =
  (text: string): ModelScript =>
  () => ({ text });

describe("Chat Completions, streamed", () => {
  it("writes a text reply as OpenAI's chunks: role, the text in pieces, finish, usage, [DONE]", async () => {
    await withServer(say("Hello from the script"), async (server) => {
      const res = await post(CHAT(server), {
        model: "gpt-test",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "Say hello" }],
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      const frames = await readSse(res);
      const created = z.object({ created: z.number() }).parse(JSON.parse(frames[0]?.data ?? "")).created;
      const chunk = (choices: unknown[], usage: unknown = null) => ({
        id: "chatcmpl-1",
        object: "chat.completion.chunk",
        created,
        model: "gpt-test",
        choices,
        usage,
      });
      const delta = (value: unknown, finish: string | null = null) => chunk([{ index: 0, delta: value, logprobs: null, finish_reason: finish }]);
      expect(frames.slice(0, -1).map((f) => JSON.parse(f.data) as unknown)).toEqual([
        delta({ role: "assistant", content: "" }),
        delta({ content: "Hello f" }),
        delta({ content: "rom the" }),
        delta({ content: " script" }),
        delta({}, "stop"),
        // Four characters a token: "Say hello" is 3, the reply 6.
        chunk([], {
          prompt_tokens: 3,
          completion_tokens: 6,
          total_tokens: 9,
          prompt_tokens_details: { cached_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0 },
        }),
      ]);
      expect(frames.at(-1)).toEqual({ event: undefined, data: "[DONE]" });
    });
  });

  const cases: { name: string; reply: ModelReply; includeUsage: boolean; want: Omit<AssembledChat, "usage" | "ids"> }[] = [
    {
      name: "text",
      reply: { text: "All done." },
      includeUsage: true,
      want: { text: "All done.", toolCalls: [], finishReason: "stop" },
    },
    {
      name: "text cut between code points, not inside one",
      reply: { text: "🚀🚀🚀🚀" },
      includeUsage: false,
      want: { text: "🚀🚀🚀🚀", toolCalls: [], finishReason: "stop" },
    },
    {
      name: "two tool calls",
      reply: {
        toolCalls: [
          { name: "read", arguments: { path: "README.md" } },
          { name: "bash", arguments: { command: "ls -la", timeout: 5 } },
        ],
      },
      includeUsage: true,
      want: {
        text: "",
        toolCalls: [
          { id: "call_1_0", name: "read", arguments: '{"path":"README.md"}' },
          { id: "call_1_1", name: "bash", arguments: '{"command":"ls -la","timeout":5}' },
        ],
        finishReason: "tool_calls",
      },
    },
    {
      name: "text, then a tool call with no arguments",
      reply: { text: "Looking.", toolCalls: [{ name: "list", arguments: {} }] },
      includeUsage: false,
      want: { text: "Looking.", toolCalls: [{ id: "call_1_0", name: "list", arguments: "{}" }], finishReason: "tool_calls" },
    },
  ];

  it.each(cases)("reassembles to the scripted reply: $name", async ({ reply, includeUsage, want }) => {
    await withServer(
      () => reply,
      async (server) => {
        const res = await post(CHAT(server), {
          model: "gpt-test",
          stream: true,
          ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
          messages: [{ role: "user", content: "go" }],
        });
        const frames = await readSse(res);
        // More deltas than parts of the reply: the text and each call's arguments came in pieces.
        expect(frames.length).toBeGreaterThan(3 + (includeUsage ? 1 : 0));
        const got = assembleChat(frames);
        expect({ text: got.text, toolCalls: got.toolCalls, finishReason: got.finishReason }).toEqual(want);
        expect(new Set(got.ids)).toEqual(new Set(["chatcmpl-1"]));
        expect(got.usage === null).toBe(!includeUsage);
      },
    );
  });
});

describe("Chat Completions, whole", () => {
  it.each([
    {
      name: "text",
      reply: { text: "Hi." } as ModelReply,
      message: { role: "assistant", content: "Hi.", refusal: null },
      finish: "stop",
      completion: 1,
    },
    {
      name: "a tool call",
      reply: { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] } as ModelReply,
      message: {
        role: "assistant",
        content: null,
        refusal: null,
        tool_calls: [{ id: "call_1_0", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' } }],
      },
      finish: "tool_calls",
      completion: 4,
    },
  ])("answers a chat.completion: $name", async ({ reply, message, finish, completion }) => {
    await withServer(
      () => reply,
      async (server) => {
        const res = await post(CHAT(server), { model: "gpt-test", messages: [{ role: "user", content: "Say hello" }] });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe("application/json");
        const body = z.looseObject({ created: z.number() }).parse(await res.json());
        expect(body).toEqual({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: body.created,
          model: "gpt-test",
          choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
          usage: {
            prompt_tokens: 3,
            completion_tokens: completion,
            total_tokens: 3 + completion,
            prompt_tokens_details: { cached_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: 0 },
          },
        });
      },
    );
  });
});

describe("Responses API", () => {
  const codexRequest = {
    model: "gpt-codex-test",
    stream: true,
    instructions: "You are Codex.",
    input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "Fix it" }] }],
  };

  it("streams text then a function call as Codex reads them, ending in response.completed", async () => {
    await withServer(
      () => ({ text: "Running the tests.", toolCalls: [{ name: "shell", arguments: { command: ["npm", "test"] } }] }),
      async (server) => {
        const res = await post(RESPONSES(server), codexRequest);
        expect(res.headers.get("content-type")).toBe("text/event-stream");
        const events = responsesEvents(await readSse(res));
        expect(events.map((e) => e.type)).toEqual([
          "response.created",
          "response.in_progress",
          "response.output_item.added",
          "response.content_part.added",
          "response.output_text.delta",
          "response.output_text.delta",
          "response.output_text.delta",
          "response.output_text.done",
          "response.content_part.done",
          "response.output_item.done",
          "response.output_item.added",
          "response.function_call_arguments.delta",
          "response.function_call_arguments.delta",
          "response.function_call_arguments.delta",
          "response.function_call_arguments.done",
          "response.output_item.done",
          "response.completed",
        ]);

        const message = {
          type: "message",
          id: "msg_1",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: "Running the tests.", annotations: [] }],
        };
        const call = { type: "function_call", id: "fc_1_0", call_id: "call_1_0", name: "shell", arguments: '{"command":["npm","test"]}', status: "completed" };
        expect(deltasByItem(events)).toEqual({ msg_1: message.content[0]?.text, fc_1_0: call.arguments });
        // Items start empty, for a client that appends the deltas to what `added` gave it.
        expect(events.filter((e) => e.type === "response.output_item.added").map((e) => e.item)).toEqual([
          { ...message, status: "in_progress", content: [] },
          { ...call, arguments: "", status: "in_progress" },
        ]);
        expect(events.filter((e) => e.type === "response.output_item.done").map((e) => e.item)).toEqual([message, call]);

        const createdAt = events[0]?.response?.created_at;
        const response = (status: string, output: unknown[], usage: unknown) => ({
          id: "resp_1",
          object: "response",
          created_at: createdAt,
          status,
          error: null,
          incomplete_details: null,
          model: "gpt-codex-test",
          output,
          usage,
        });
        expect(events[0]?.response).toEqual(response("in_progress", [], null));
        // "You are Codex.Fix it" is 5 tokens at four characters each; the text and arguments 11.
        const usage = {
          input_tokens: 5,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 11,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 16,
        };
        expect(events.at(-1)?.response).toEqual(response("completed", [message, call], usage));
      },
    );
  });

  it("gives each event of a text reply the fields of OpenAI's reference", async () => {
    await withServer(say("Done."), async (server) => {
      const events = responsesEvents(await readSse(await post(RESPONSES(server), codexRequest)));
      const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
      const part = (text: string) => ({ type: "output_text", text, annotations: [] });
      expect(events.slice(3, -2).map(({ sequence_number: _, ...rest }) => rest)).toEqual([
        { type: "response.content_part.added", ...at, part: part("") },
        { type: "response.output_text.delta", ...at, delta: "Do", logprobs: [] },
        { type: "response.output_text.delta", ...at, delta: "ne", logprobs: [] },
        { type: "response.output_text.delta", ...at, delta: ".", logprobs: [] },
        { type: "response.output_text.done", ...at, text: "Done.", logprobs: [] },
        { type: "response.content_part.done", ...at, part: part("Done.") },
      ]);
    });
  });

  it("names a call's namespace, as Codex needs for an MCP server's tools", async () => {
    await withServer(
      () => ({ toolCalls: [{ namespace: "mcp__docs", name: "echo", arguments: { message: "hi" } }] }),
      async (server) => {
        const res = await post(RESPONSES(server), { ...codexRequest, stream: false });
        const body = z.looseObject({ output: z.array(z.unknown()) }).parse(await res.json());
        expect(body.output).toEqual([{ type: "function_call", id: "fc_1_0", call_id: "call_1_0", name: "echo", namespace: "mcp__docs", arguments: '{"message":"hi"}', status: "completed" }]);
      },
    );
  });

  it("answers a whole response object when not streaming", async () => {
    await withServer(
      () => ({ toolCalls: [{ name: "shell", arguments: { command: ["ls"] } }] }),
      async (server) => {
        const res = await post(RESPONSES(server), { ...codexRequest, stream: false });
        const body = z.looseObject({ created_at: z.number() }).parse(await res.json());
        expect(body).toEqual({
          id: "resp_1",
          object: "response",
          created_at: body.created_at,
          status: "completed",
          error: null,
          incomplete_details: null,
          model: "gpt-codex-test",
          output: [{ type: "function_call", id: "fc_1_0", call_id: "call_1_0", name: "shell", arguments: '{"command":["ls"]}', status: "completed" }],
          usage: {
            input_tokens: 5,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 5,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 10,
          },
        });
      },
    );
  });
});

describe("normalising a conversation", () => {
  const cases: {
    name: string;
    path: string;
    body: unknown;
    turns: ModelTurn[];
    tools: string[];
    results: ReturnType<typeof toolResults>;
    lastUser: string | undefined;
  }[] = [
    {
      name: "Chat Completions: parts, parallel calls answered out of order, a developer message",
      path: "/chat/completions",
      body: {
        model: "gpt-test",
        messages: [
          { role: "system", content: "You are terse." },
          {
            role: "user",
            content: [
              { type: "text", text: "List the files" },
              { type: "image_url", image_url: { url: "data:," } },
              { type: "text", text: "then read one." },
            ],
          },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "list", arguments: '{"path":"."}' } },
              { id: "call_b", type: "function", function: { name: "read", arguments: '{"path":"README.md"}' } },
            ],
          },
          { role: "tool", tool_call_id: "call_b", content: "# Berth" },
          { role: "tool", tool_call_id: "call_a", content: [{ type: "text", text: "README.md" }] },
          { role: "assistant", content: "Read it." },
          { role: "developer", content: "Be brief." },
          { role: "user", content: "Thanks" },
        ],
        tools: [
          { type: "function", function: { name: "list", parameters: {} } },
          { type: "function", function: { name: "read", parameters: {} } },
        ],
      },
      turns: [
        { role: "system", text: "You are terse." },
        { role: "user", text: "List the files\nthen read one." },
        {
          role: "assistant",
          text: "",
          toolCalls: [
            { id: "call_a", name: "list", arguments: '{"path":"."}' },
            { id: "call_b", name: "read", arguments: '{"path":"README.md"}' },
          ],
        },
        { role: "tool", text: "# Berth", toolCallId: "call_b" },
        { role: "tool", text: "README.md", toolCallId: "call_a" },
        { role: "assistant", text: "Read it." },
        { role: "system", text: "Be brief." },
        { role: "user", text: "Thanks" },
      ],
      tools: ["list", "read"],
      results: [
        { callId: "call_b", name: "read", text: "# Berth" },
        { callId: "call_a", name: "list", text: "README.md" },
      ],
      lastUser: "Thanks",
    },
    {
      name: "Responses: instructions, a reply's message and calls joined into one turn, custom tools, reasoning skipped",
      path: "/responses",
      body: {
        model: "gpt-codex-test",
        instructions: "You are Codex.",
        input: [
          { type: "message", role: "developer", content: [{ type: "input_text", text: "sandbox: workspace-write" }] },
          { type: "message", role: "user", content: [{ type: "input_text", text: "Fix the test" }] },
          { type: "reasoning", id: "rs_1", summary: [], encrypted_content: null },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "Running it." }] },
          { type: "function_call", call_id: "call_x", name: "shell", arguments: '{"command":["npm","test"]}' },
          { type: "custom_tool_call", call_id: "call_y", name: "apply_patch", input: "*** Begin Patch" },
          { type: "function_call_output", call_id: "call_x", output: "1 failed" },
          { type: "custom_tool_call_output", call_id: "call_y", output: [{ type: "input_text", text: "Done!" }] },
          { type: "function_call_output", call_id: "call_unknown", output: "orphan" },
          { role: "user", content: "and now?" },
        ],
        tools: [
          { type: "function", name: "shell", parameters: {} },
          { type: "custom", name: "apply_patch", format: { type: "grammar" } },
          { type: "web_search" },
        ],
      },
      turns: [
        { role: "system", text: "You are Codex." },
        { role: "system", text: "sandbox: workspace-write" },
        { role: "user", text: "Fix the test" },
        {
          role: "assistant",
          text: "Running it.",
          toolCalls: [
            { id: "call_x", name: "shell", arguments: '{"command":["npm","test"]}' },
            { id: "call_y", name: "apply_patch", arguments: "*** Begin Patch" },
          ],
        },
        { role: "tool", text: "1 failed", toolCallId: "call_x" },
        { role: "tool", text: "Done!", toolCallId: "call_y" },
        { role: "tool", text: "orphan", toolCallId: "call_unknown" },
        { role: "user", text: "and now?" },
      ],
      tools: ["shell", "apply_patch", "web_search"],
      results: [
        { callId: "call_x", name: "shell", text: "1 failed" },
        { callId: "call_y", name: "apply_patch", text: "Done!" },
        { callId: "call_unknown", name: undefined, text: "orphan" },
      ],
      lastUser: "and now?",
    },
    {
      name: "Responses: a plain string input is one user turn",
      path: "/responses",
      body: { model: "gpt-codex-test", input: "hello" },
      turns: [{ role: "user", text: "hello" }],
      tools: [],
      results: [],
      lastUser: "hello",
    },
  ];

  it.each(cases)("$name", async ({ path, body, turns, tools, results, lastUser }) => {
    const seen: ModelRequest[] = [];
    await withServer(
      (req) => {
        seen.push(req);
        return { text: "ok" };
      },
      async (server) => {
        expect((await post(`${server.url}${path}`, body)).status).toBe(200);
      },
    );
    expect(seen).toHaveLength(1);
    const [req] = seen as [ModelRequest];
    expect({ turns: req.turns, tools: req.tools, results: toolResults(req), lastUser: lastUserText(req) }).toEqual({ turns, tools, results, lastUser });
  });
});

describe("item references", () => {
  it("reads an item_reference as the item this server sent under that id", async () => {
    const seen: ModelRequest[] = [];
    const script: ModelScript = (req) => {
      seen.push(req);
      return { text: "Reading.", toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] };
    };
    await withServer(script, async (server) => {
      await (await post(RESPONSES(server), { model: "m", stream: true, input: "read a.txt" })).text();
      const next = {
        model: "m",
        input: [
          { role: "user", content: [{ type: "input_text", text: "read a.txt" }] },
          { type: "item_reference", id: "msg_1" },
          { type: "item_reference", id: "fc_1_0" },
          { type: "function_call_output", call_id: "call_1_0", output: "A" },
        ],
      };
      expect((await post(RESPONSES(server), next)).status).toBe(200);
    });
    expect(seen[1]?.turns).toEqual([
      { role: "user", text: "read a.txt" },
      { role: "assistant", text: "Reading.", toolCalls: [{ id: "call_1_0", name: "read", arguments: '{"path":"a.txt"}' }] },
      { role: "tool", text: "A", toolCallId: "call_1_0" },
    ]);
  });
});

describe("recording", () => {
  it("records every request, refused ones too, and hands the script the recorded object", async () => {
    const seen: ModelRequest[] = [];
    await withServer(
      (req) => {
        seen.push(req);
        return { text: "ok" };
      },
      async (server) => {
        const chatBody = { model: "gpt-test", stream: true, messages: [{ role: "user", content: "one" }] };
        await (await post(CHAT(server), chatBody, { authorization: "Bearer test-key" })).text();
        const responsesBody = { model: "gpt-codex-test", stream: false, input: "two" };
        await (await post(`${RESPONSES(server)}?trace=1`, responsesBody)).text();
        await (await fetch(`${server.url}/embeddings`, { method: "POST", body: "{}" })).text();
        await (await fetch(`${server.url}/models`)).text();

        expect(server.requests.map(({ api, method, model, stream, body, path, error }) => ({ api, method, model, stream, body, path, error }))).toEqual([
          { api: "chat", method: "POST", model: "gpt-test", stream: true, body: chatBody, path: "/v1/chat/completions", error: undefined },
          { api: "responses", method: "POST", model: "gpt-codex-test", stream: false, body: responsesBody, path: "/v1/responses?trace=1", error: undefined },
          {
            api: "other",
            method: "POST",
            model: "",
            stream: false,
            body: {},
            path: "/v1/embeddings",
            error: { status: 404, message: "Invalid URL (POST /v1/embeddings)" },
          },
          { api: "models", method: "GET", model: "", stream: false, body: undefined, path: "/v1/models", error: undefined },
        ]);
        expect(server.requests[0]?.headers.authorization).toBe("Bearer test-key");
        expect(seen).toHaveLength(2);
        expect(seen[0]).toBe(server.requests[0]);
        expect(seen[1]).toBe(server.requests[1]);
      },
    );
  });

  it("lists the scripted model and every model asked for", async () => {
    await withServer(say("ok"), async (server) => {
      await (await post(CHAT(server), { model: "gpt-test", messages: [] })).text();
      await (await post(CHAT(server), { model: "gpt-test", messages: [] })).text();
      const body = z.looseObject({ data: z.array(z.looseObject({ created: z.number() })) }).parse(await (await fetch(`${server.url}/models`)).json());
      const created = body.data[0]?.created;
      expect(body).toEqual({
        object: "list",
        data: [
          { id: "berth-scripted", object: "model", created, owned_by: "berth" },
          { id: "gpt-test", object: "model", created, owned_by: "berth" },
        ],
      });
    });
  });
});

describe("refusals and failures", () => {
  const error = (message: string, type = "invalid_request_error") => ({ error: { message, type, param: null, code: null } });
  const notJson = (() => {
    try {
      JSON.parse("{not json");
    } catch (err) {
      return (err as Error).message;
    }
    return "";
  })();

  it.each([
    { name: "an unknown path", method: "GET", path: "/nope", body: undefined, status: 404, want: error("Invalid URL (GET /nope)") },
    {
      name: "a known path, the wrong method",
      method: "GET",
      path: "/v1/chat/completions",
      body: undefined,
      status: 404,
      want: error("Invalid URL (GET /v1/chat/completions)"),
    },
    {
      name: "a body that is not JSON",
      method: "POST",
      path: "/v1/chat/completions",
      body: "{not json",
      status: 400,
      want: error(`cannot parse the request body as JSON: ${notJson}`),
    },
    {
      name: "a chat message of no known role",
      method: "POST",
      path: "/v1/chat/completions",
      body: JSON.stringify({
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "narrator", content: "x" },
        ],
      }),
      status: 400,
      want: error(
        "cannot read the request body: messages[1].role: Invalid discriminator value. Expected 'system' | 'developer' | 'user' | 'assistant' | 'tool'",
      ),
    },
    {
      name: "a function_call item without its name",
      method: "POST",
      path: "/v1/responses",
      body: JSON.stringify({
        model: "m",
        input: [
          { role: "user", content: "hi" },
          { type: "function_call", call_id: "c", arguments: "{}" },
        ],
      }),
      status: 400,
      want: error("cannot read the request body: input[1].name: Invalid input: expected string, received undefined"),
    },
    {
      name: "an item_reference to an item this server never sent",
      method: "POST",
      path: "/v1/responses",
      body: JSON.stringify({ model: "m", input: [{ type: "item_reference", id: "msg_9" }] }),
      status: 400,
      want: error("cannot read the request body: input[0].id: msg_9 is no item this server sent"),
    },
  ])("answers $status in OpenAI's error shape for $name, and records it", async ({ method, path, body, status, want }) => {
    await withServer(say("never"), async (server) => {
      const res = await fetch(`${server.url.replace(/\/v1$/, "")}${path}`, { method, body });
      expect({ status: res.status, body: await res.json() }).toEqual({ status, body: want });
      expect(server.requests.map((r) => r.error)).toEqual([{ status, message: want.error.message }]);
    });
  });

  it(`refuses a body over ${MAX_BODY_BYTES} bytes with 413 and takes one of exactly that size`, async () => {
    await withServer(say("ok"), async (server) => {
      const atLimit = JSON.stringify({ model: "m", messages: [], pad: "" });
      const padded = atLimit.replace('"pad":""', `"pad":"${"x".repeat(MAX_BODY_BYTES - atLimit.length)}"`);
      expect(Buffer.byteLength(padded)).toBe(MAX_BODY_BYTES);
      const over = await post(CHAT(server), `${padded} `);
      expect({ status: over.status, body: await over.json() }).toEqual({
        status: 413,
        body: error(`cannot read the request body: it is over ${MAX_BODY_BYTES} bytes`),
      });
      expect((await post(CHAT(server), padded)).status).toBe(200);
      expect(server.requests.map((r) => ({ body: r.body === undefined, error: r.error }))).toEqual([
        { body: true, error: { status: 413, message: `cannot read the request body: it is over ${MAX_BODY_BYTES} bytes` } },
        { body: false, error: undefined },
      ]);
    });
  });

  it.each([
    {
      name: "a script that throws",
      script: (req: ModelRequest): ModelReply => {
        if (lastUserText(req) === "explode") throw new Error("boom");
        return { text: "still here" };
      },
      message: "cannot reply to POST /v1/chat/completions: the script threw: boom",
    },
    {
      name: "a script whose reply has no tool calls in its list",
      script: (req: ModelRequest): ModelReply => (lastUserText(req) === "explode" ? { toolCalls: [] } : { text: "still here" }),
      message: "cannot reply to POST /v1/chat/completions: the script's reply is invalid: toolCalls: Too small: expected array to have >=1 items",
    },
  ])("answers 500 for $name, records it, and goes on serving", async ({ script, message }) => {
    await withServer(script, async (server) => {
      const failed = await post(CHAT(server), { model: "m", messages: [{ role: "user", content: "explode" }] });
      expect({ status: failed.status, body: await failed.json() }).toEqual({ status: 500, body: error(message, "server_error") });
      const next = await post(CHAT(server), { model: "m", stream: true, messages: [{ role: "user", content: "again" }] });
      expect(assembleChat(await readSse(next)).text).toBe("still here");
      expect(server.requests.map((r) => r.error)).toEqual([{ status: 500, message }, undefined]);
    });
  });
});

describe("the listener", () => {
  /** Whether something else can listen on `port` now. */
  async function portIsFree(port: number): Promise<boolean> {
    const probe = createServer();
    return new Promise((resolve) => {
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
  }

  it("listens on 127.0.0.1, on the port asked for, and close() ends an open request and frees the port", async () => {
    const probe = createServer();
    const port = await new Promise<number>((resolve) => probe.listen(0, "127.0.0.1", () => resolve((probe.address() as { port: number }).port)));
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    // A script that never answers keeps its request, and so its connection, open.
    const server = await startModelServer(() => new Promise<ModelReply>(() => undefined), { port });
    expect(server.url).toBe(`http://127.0.0.1:${port}/v1`);
    expect(await portIsFree(port)).toBe(false);
    const pending = post(CHAT(server), { model: "m", messages: [] });
    await expect.poll(() => server.requests.length).toBe(1);

    await server.close();
    await expect(pending).rejects.toThrow();
    expect(await portIsFree(port)).toBe(true);
    await server.close();
  });
});
