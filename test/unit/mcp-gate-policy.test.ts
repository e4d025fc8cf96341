// The gate's decisions as plain functions: the policy file's validation, exact tool matching, the
// tools offered, and the strict reading of a POST body (the duplicate-key scanner above all).
import { describe, expect, it } from "vitest";
import { findDuplicateKey, MAX_DEPTH } from "../../functions/mcp-gate/duplicate-keys.js";
import { type GatedServer, parsePolicy } from "../../functions/contracts/mcp-gate-policy.js";
import { checkIncomingBody, GATED_METHODS, isToolAllowed, offeredTools } from "../../functions/mcp-gate/policy.js";

const docs: GatedServer = { name: "docs", upstream: "http://docs-mcp.mcp.svc:8080/mcp", tools: ["search", "fetch"], credentialEnv: "BERTH_MCP_DOCS" };

describe("parsePolicy", () => {
  it("accepts the documented example as is", () => {
    expect(parsePolicy({ servers: [docs] })).toEqual({ ok: true, value: { servers: [docs] } });
  });

  it("accepts an empty tool list (the server is reachable and offers nothing)", () => {
    const server = { name: "quiet", upstream: "https://quiet.example/mcp", tools: [] };
    expect(parsePolicy({ servers: [server] })).toEqual({ ok: true, value: { servers: [server] } });
  });

  const refusals: { name: string; policy: unknown; problems: string[] }[] = [
    { name: "not an object", policy: [], problems: ["(document): Invalid input: expected object, received array"] },
    { name: "servers missing", policy: {}, problems: ["servers: Invalid input: expected array, received undefined"] },
    { name: "a field nobody reads", policy: { servers: [], server: [] }, problems: ['(document): Unrecognized key: "server"'] },
    {
      name: "upstream not http(s)",
      policy: { servers: [docs, { ...docs, name: "files", upstream: "file:///etc/passwd" }] },
      problems: ["servers[1].upstream: must be an http or https URL"],
    },
    { name: "upstream not a URL", policy: { servers: [{ ...docs, upstream: "docs-mcp:8080" }] }, problems: ["servers[0].upstream: must be an http or https URL"] },
    {
      name: "name not a DNS label",
      policy: { servers: [{ ...docs, name: "Docs/../admin" }] },
      problems: ["servers[0].name: must be a DNS label (lower-case letters, digits and '-', at most 63)"],
    },
    { name: "name used twice", policy: { servers: [docs, docs] }, problems: ['servers[1].name: "docs" is already used by another server'] },
    { name: "tools not an array", policy: { servers: [{ ...docs, tools: "search" }] }, problems: ["servers[0].tools: Invalid input: expected array, received string"] },
    { name: "empty tool name", policy: { servers: [{ ...docs, tools: ["search", ""] }] }, problems: ["servers[0].tools[1]: must not be empty"] },
    { name: "tool repeated", policy: { servers: [{ ...docs, tools: ["search", "search"] }] }, problems: ["servers[0].tools: must not repeat a tool"] },
    {
      name: "credentialEnv not a variable name",
      policy: { servers: [{ ...docs, credentialEnv: "BERTH-MCP DOCS" }] },
      problems: ["servers[0].credentialEnv: must be an environment variable name"],
    },
    { name: "misspelt credentialEnv", policy: { servers: [{ ...docs, credentialenv: "X" }] }, problems: ['servers[0]: Unrecognized key: "credentialenv"'] },
  ];
  it.each(refusals)("refuses $name, naming the field", ({ policy, problems }) => {
    expect(parsePolicy(policy)).toEqual({ ok: false, problems });
  });
});

describe("isToolAllowed", () => {
  const cases: { name: string; tool: string; allowed: boolean }[] = [
    { name: "declared", tool: "search", allowed: true },
    { name: "declared, second", tool: "fetch", allowed: true },
    { name: "undeclared", tool: "delete-all", allowed: false },
    { name: "case variant", tool: "Search", allowed: false },
    { name: "upper case", tool: "SEARCH", allowed: false },
    { name: "Cyrillic е look-alike", tool: "s\u0435arch", allowed: false },
    { name: "fullwidth letters", tool: "\uff53\uff45\uff41\uff52\uff43\uff48", allowed: false },
    { name: "trailing space", tool: "search ", allowed: false },
    { name: "leading space", tool: " search", allowed: false },
    { name: "trailing NUL", tool: "search\u0000", allowed: false },
    { name: "zero-width joiner inside", tool: "sea\u200drch", allowed: false },
    { name: "prefix", tool: "sear", allowed: false },
    { name: "empty", tool: "", allowed: false },
  ];
  it.each(cases)("$name ($tool) → $allowed", ({ tool, allowed }) => {
    expect(isToolAllowed(docs, tool)).toBe(allowed);
  });

  it("allows nothing when the list is empty", () => {
    expect(isToolAllowed({ ...docs, tools: [] }, "search")).toBe(false);
  });
});

describe("offeredTools", () => {
  it("keeps the declared tools present upstream, in the upstream's order, with their fields", () => {
    const upstream = [{ name: "fetch", description: "f" }, { name: "delete-all" }, { name: "Search" }, { name: "search", description: "s" }];
    expect(offeredTools(docs, upstream)).toEqual([{ name: "fetch", description: "f" }, { name: "search", description: "s" }]);
  });

  it("offers nothing declared that the upstream lacks", () => {
    expect(offeredTools(docs, [{ name: "delete-all" }])).toEqual([]);
  });
});

describe("checkIncomingBody", () => {
  const call = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "search", arguments: {} } };

  it("passes a single request through, parsed", () => {
    expect(checkIncomingBody(JSON.stringify(call))).toEqual({ ok: true, message: call });
  });

  it("passes a notification through", () => {
    expect(checkIncomingBody('{"jsonrpc":"2.0","method":"notifications/initialized"}')).toEqual({ ok: true, message: { jsonrpc: "2.0", method: "notifications/initialized" } });
  });

  const refusals: { name: string; body: string; id: string | number | null; code: number; message: string }[] = [
    { name: "a batch", body: `[${JSON.stringify(call)}]`, id: null, code: -32600, message: "batches are not accepted" },
    { name: "an empty batch", body: "[]", id: null, code: -32600, message: "batches are not accepted" },
    { name: "a string", body: '"tools/call"', id: null, code: -32600, message: "a message must be a JSON object" },
    { name: "null", body: "null", id: null, code: -32600, message: "a message must be a JSON object" },
    { name: "a response (the gate asked nothing)", body: '{"jsonrpc":"2.0","id":3,"result":{}}', id: 3, code: -32600, message: "the gate sends no requests, so it accepts only requests and notifications" },
    { name: "resources/read", body: '{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///"}}', id: "r", code: -32601, message: 'method "resources/read" is not offered through the gate' },
    { name: "prompts/get", body: '{"jsonrpc":"2.0","id":1,"method":"prompts/get"}', id: 1, code: -32601, message: 'method "prompts/get" is not offered through the gate' },
    { name: "a method in another case", body: '{"jsonrpc":"2.0","id":1,"method":"Tools/Call"}', id: 1, code: -32601, message: 'method "Tools/Call" is not offered through the gate' },
    {
      name: "duplicate name in params",
      body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","name":"delete-all","arguments":{}}}',
      id: 7,
      code: -32600,
      message: 'duplicate key "name" in params',
    },
    {
      name: "duplicate method at the top",
      body: '{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"resources/read"}',
      id: 7,
      code: -32600,
      message: 'duplicate key "method" in (top level)',
    },
    {
      name: "an escaped duplicate",
      body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","n\\u0061me":"delete-all"}}',
      id: 7,
      code: -32600,
      message: 'duplicate key "name" in params',
    },
    {
      name: "a duplicate deep inside the arguments",
      body: '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":[{"a":1},{"b":1,"b":2}]}}}',
      id: 7,
      code: -32600,
      message: 'duplicate key "b" in params.arguments.q[1]',
    },
  ];
  it.each(refusals)("refuses $name", ({ body, id, code, message }) => {
    expect(checkIncomingBody(body)).toEqual({ ok: false, error: { jsonrpc: "2.0", id, error: { code, message } } });
  });

  const unparseable = ["", "{", '{"jsonrpc":"2.0",}', "{'a':1}", '{"a":1} {"b":2}', "NaN"];
  it.each(unparseable)("answers a parse error to %j", (body) => {
    const checked = checkIncomingBody(body);
    expect(checked.ok ? "passed" : [checked.error.id, checked.error.error.code]).toEqual([null, -32700]);
  });

  it("refuses nesting past the scanner's depth rather than overflowing", () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"x":${"[".repeat(MAX_DEPTH + 10)}${"]".repeat(MAX_DEPTH + 10)}}}}`;
    expect(checkIncomingBody(deep)).toEqual({ ok: false, error: { jsonrpc: "2.0", id: 1, error: { code: -32600, message: `nested deeper than ${MAX_DEPTH} levels` } } });
  });

  it("handles only the methods of tools and the session", () => {
    expect([...GATED_METHODS].sort()).toEqual(["initialize", "notifications/cancelled", "notifications/initialized", "notifications/roots/list_changed", "ping", "tools/call", "tools/list"]);
  });
});

describe("findDuplicateKey", () => {
  const cases: { name: string; json: string; found: { key: string; path: string } | undefined }[] = [
    { name: "no objects", json: '[1, "a", true, null, -2.5e3]', found: undefined },
    { name: "empty containers", json: '{"a":{},"b":[],"c":[{}]}', found: undefined },
    { name: "same key in sibling objects", json: '[{"a":1},{"a":2}]', found: undefined },
    { name: "same key at different depths", json: '{"a":{"a":{"a":1}}}', found: undefined },
    { name: "keys differing in case", json: '{"name":1,"Name":2}', found: undefined },
    { name: "a Cyrillic look-alike key", json: '{"name":1,"n\u0430me":2}', found: undefined },
    { name: "keys differing by trailing space", json: '{"name":1,"name ":2}', found: undefined },
    { name: "a key that is a prefix", json: '{"nam":1,"name":2}', found: undefined },
    { name: "quotes and braces inside strings", json: '{"a":"}\\"{,","b":"\\\\","c":"[{\\"a\\":1}]"}', found: undefined },
    { name: "whitespace everywhere", json: ' { "a" : [ { "x" : 1 } , { "x" : 2 } ] , "b" : 1 } ', found: undefined },
    { name: "top level", json: '{"a":1,"a":2}', found: { key: "a", path: "(top level)" } },
    { name: "with whitespace", json: '{ "a" : 1 ,\n "a" : 2 }', found: { key: "a", path: "(top level)" } },
    { name: "nested", json: '{"p":{"q":{"x":1,"y":2,"x":3}}}', found: { key: "x", path: "p.q" } },
    { name: "in an array of objects", json: '{"list":[{"a":1},{"a":1,"a":1}]}', found: { key: "a", path: "list[1]" } },
    { name: "in nested arrays", json: "[[1],[[{\"k\":1,\"k\":2}]]]", found: { key: "k", path: "[1][0][0]" } },
    { name: "escaped \\u0061 equals a", json: '{"name":1,"n\\u0061me":2}', found: { key: "name", path: "(top level)" } },
    { name: "both escaped differently", json: '{"\\u006e\\u0061me":1,"n\\u0061\\u006De":2}', found: { key: "name", path: "(top level)" } },
    { name: "escaped solidus", json: '{"a/b":1,"a\\/b":2}', found: { key: "a/b", path: "(top level)" } },
    { name: "escaped quote in key", json: '{"a\\"b":1,"a\\u0022b":2}', found: { key: 'a"b', path: "(top level)" } },
    { name: "the empty key", json: '{"":1,"":2}', found: { key: "", path: "(top level)" } },
    { name: "after a value holding the key as a string", json: '{"a":"a","b":{"a":"a"},"a":0}', found: { key: "a", path: "(top level)" } },
  ];
  it.each(cases)("$name", ({ json, found }) => {
    // The case must be valid JSON: the scanner is only ever given what JSON.parse accepted.
    expect(() => JSON.parse(json)).not.toThrow();
    expect(findDuplicateKey(json)).toEqual(found);
  });
});
