// What the gate lets through, decided without I/O: which tools a
// workspace may see and call, and the strict reading of an incoming HTTP body. gate.ts wires these
// decisions to the network; keeping them here lets every rule be tested as a plain function.
import type { GatedServer } from "../contracts/mcp-gate-policy.js";
import { findDuplicateKey, TooDeep } from "./duplicate-keys.js";

/**
 * Exact string equality and nothing else. Folding case, trimming or Unicode normalisation would
 * make `Search`, `search ` or a Cyrillic `sеarch` reach an upstream that may treat them as another
 * tool, or as this one: either way the workspace document did not name them.
 */
export function isToolAllowed(server: GatedServer, name: string): boolean {
  return server.tools.includes(name);
}

/** The tools the workspace sees: declared and present upstream, in the upstream's order. */
export function offeredTools<T extends { readonly name: string }>(server: GatedServer, upstreamTools: readonly T[]): T[] {
  return upstreamTools.filter((tool) => isToolAllowed(server, tool.name));
}

/**
 * The methods a workspace may send. Everything else is refused before it reaches the SDK, and the
 * SDK would refuse it again (no handler registered): resources, prompts, completion and logging
 * are other ways to reach the upstream that the workspace document does not describe.
 */
export const GATED_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "notifications/initialized",
  "ping",
  "tools/list",
  "tools/call",
  "notifications/cancelled",
  // Sent by clients that declare roots; the gate's upstream client declares none, so it stops here.
  "notifications/roots/list_changed",
]);

/** JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object). */
export const RPC_ERROR = { parse: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, internal: -32603 } as const;

export interface JsonRpcErrorResponse {
  readonly jsonrpc: "2.0";
  readonly id: string | number | null;
  readonly error: { readonly code: number; readonly message: string };
}

/** One JSON-RPC request or notification, as the SDK's transport will validate it further. */
export interface IncomingMessage {
  readonly method: string;
  readonly [field: string]: unknown;
}

export type IncomingBody = { readonly ok: true; readonly message: IncomingMessage } | { readonly ok: false; readonly error: JsonRpcErrorResponse };

export function rpcError(id: unknown, code: number, message: string): JsonRpcErrorResponse {
  return { jsonrpc: "2.0", id: typeof id === "string" || typeof id === "number" ? id : null, error: { code, message } };
}

/**
 * The strict reading of a POST body, before the SDK sees it. Batches are refused because the
 * SDK's transport accepts them (up to 100 messages) and a batch is one body carrying several
 * decisions; duplicate keys because two parsers may disagree on which one counts.
 */
export function checkIncomingBody(raw: string): IncomingBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    return refuse(null, RPC_ERROR.parse, `parse error: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (Array.isArray(parsed)) return refuse(null, RPC_ERROR.invalidRequest, "batches are not accepted");
  if (typeof parsed !== "object" || parsed === null) return refuse(null, RPC_ERROR.invalidRequest, "a message must be a JSON object");
  const message: Record<string, unknown> = { ...parsed };
  try {
    const duplicate = findDuplicateKey(raw);
    if (duplicate) return refuse(message.id, RPC_ERROR.invalidRequest, `duplicate key "${duplicate.key}" in ${duplicate.path}`);
  } catch (err) {
    if (err instanceof TooDeep) return refuse(message.id, RPC_ERROR.invalidRequest, err.message);
    throw err;
  }
  const method = message.method;
  if (typeof method !== "string") return refuse(message.id, RPC_ERROR.invalidRequest, "the gate sends no requests, so it accepts only requests and notifications");
  if (!GATED_METHODS.has(method)) return refuse(message.id, RPC_ERROR.methodNotFound, `method "${method}" is not offered through the gate`);
  return { ok: true, message: { ...message, method } };
}

function refuse(id: unknown, code: number, message: string): IncomingBody {
  return { ok: false, error: rpcError(id, code, message) };
}
