// The MCP gate's policy file: what the function renders (functions/berth/render/mcp-gate.ts) and
// what the gate reads (functions/mcp-gate/policy.ts), one schema for both ends.
import { z } from "zod";
import { type Parsed, parseDocument } from "./parse-document.js";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const GatedServerSchema = z.strictObject({
  /** Served at /mcp/<name>, so it must be a single URL path segment that needs no escaping. */
  name: z.string().regex(DNS_LABEL, "must be a DNS label (lower-case letters, digits and '-', at most 63)"),
  upstream: z.url({ protocol: /^https?$/, error: "must be an http or https URL" }),
  /** Exact names. Empty is allowed and means the server is reachable but offers nothing. */
  tools: z.array(z.string().min(1, "must not be empty")).refine((tools) => new Set(tools).size === tools.length, "must not repeat a tool"),
  /** The env var holding the upstream's bearer token; the runtime never sees its value. */
  credentialEnv: z.string().regex(ENV_NAME, "must be an environment variable name").optional(),
});

export const PolicySchema = z.strictObject({
  servers: z.array(GatedServerSchema).superRefine((servers, ctx) => {
    const seen = new Set<string>();
    servers.forEach((server, index) => {
      if (seen.has(server.name)) ctx.addIssue({ code: "custom", path: [index, "name"], message: `"${server.name}" is already used by another server` });
      seen.add(server.name);
    });
  }),
});

export type Policy = z.infer<typeof PolicySchema>;
export type GatedServer = Policy["servers"][number];

/** The policy file's content (already JSON-parsed), or one field-named problem per line. */
export function parsePolicy(json: unknown): Parsed<Policy> {
  return parseDocument(PolicySchema, json);
}
