// The push credential and the registry's challenges. The credential arrives as a Docker config
// JSON (the Secret type kubernetes.io/dockerconfigjson holds), whose entry for the registry's
// host is used; a registry that delegates to a token service answers 401 with a Bearer
// challenge, and the credential buys a token there. Nothing here logs or returns the secret in
// a message.
import { z } from "zod";

export interface RegistryCredential {
  readonly username: string;
  readonly password: string;
}

const entrySchema = z.object({
  auth: z.string().optional(),
  username: z.string().optional(),
  password: z.string().optional(),
});
const dockerConfigSchema = z.object({ auths: z.record(z.string(), entrySchema) });

/**
 * The credential for `host` (host[:port]) in a Docker config JSON: the entry keyed by the host,
 * or by https://host (as `docker login` writes some). Undefined when there is none.
 * Throws, without quoting the content, when the JSON is not a Docker config.
 */
export function credentialFor(dockerConfigJson: string, host: string): RegistryCredential | undefined {
  let parsed;
  try {
    parsed = dockerConfigSchema.parse(JSON.parse(dockerConfigJson));
  } catch {
    throw new Error('BERTH_REGISTRY_AUTH is not a Docker config JSON ({"auths": {"<host>": {"auth": "..."}}})');
  }
  const key = Object.keys(parsed.auths).find((k) => k === host || k.replace(/^https:\/\//, "").replace(/\/+$/, "") === host);
  const entry = key === undefined ? undefined : parsed.auths[key]!;
  if (!entry) return undefined;
  if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password };
  if (entry.auth !== undefined) {
    const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  throw new Error(`BERTH_REGISTRY_AUTH's entry for ${host} has neither username and password nor an auth of base64(user:password)`);
}

export function basicAuthorization(credential: RegistryCredential): string {
  return `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString("base64")}`;
}

export interface BearerChallenge {
  readonly realm: string;
  readonly service?: string;
  readonly scope?: string;
}

/** The Bearer challenge of a WWW-Authenticate header, if it is one. */
export function bearerChallenge(header: string | undefined): BearerChallenge | undefined {
  const match = /^\s*Bearer\s+(.*)$/i.exec(header ?? "");
  if (!match) return undefined;
  const params: Record<string, string> = {};
  // key="quoted value" or key=token, separated by commas; a quoted value may hold commas.
  for (const m of match[1]!.matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params[m[1]!.toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!;
  }
  if (!params.realm) return undefined;
  return { realm: params.realm, ...(params.service ? { service: params.service } : {}), ...(params.scope ? { scope: params.scope } : {}) };
}

/** Every secret string a message must not carry: the password, the Basic value, any token. */
export function redact(message: string, secrets: readonly string[]): string {
  let out = message;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("***");
  return out;
}
