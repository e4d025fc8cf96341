// Pushes an artifact with the OCI distribution API (distribution-spec v1.1), on node:https:
// each blob unless the registry has it (HEAD, then POST an upload and PUT its content in one
// request), then the manifest under the tag. Basic credentials are sent from the first request;
// a registry that answers 401 with a Bearer challenge gets them at its token service instead,
// and the token on the request again.
import type { IncomingHttpHeaders } from "node:http";
import { httpRequest, type HttpResponse } from "./http-request.js";
import { basicAuthorization, bearerChallenge, type BearerChallenge, redact, type RegistryCredential } from "./registry-auth.js";
import type { FailureReason } from "./result.js";
import { type Blob, type EvidenceArtifact, MANIFEST_MEDIA_TYPE } from "./oci-artifact.js";

/** A repository as BERTH_EVIDENCE_REPOSITORY names it: host[:port]/path. */
export interface Repository {
  /** host[:port]: the registry. */
  readonly host: string;
  /** The path: the repository's name on that registry. */
  readonly name: string;
}

// distribution-spec's grammar for a name's path components, and for a tag.
const NAME = /^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$/;
export const TAG = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

export function parseRepository(value: string): Repository {
  const slash = value.indexOf("/");
  const host = value.slice(0, slash);
  const name = value.slice(slash + 1);
  if (slash <= 0 || !/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/.test(host) || !NAME.test(name)) {
    throw new Error(`"${value}" is not an OCI repository: expected host[:port]/path, without scheme or tag`);
  }
  return { host, name };
}

/** A failed push, with the reason the result ConfigMap gives. */
export class PushFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
  ) {
    super(message);
  }
}

export interface PushOptions {
  readonly repository: Repository;
  readonly tag: string;
  readonly artifact: EvidenceArtifact;
  readonly credential?: RegistryCredential | undefined;
  /** The only CA to trust (SSL_CERT_FILE); Node.js's roots when undefined. */
  readonly ca?: Buffer | undefined;
  /** How long one request may take. */
  readonly timeoutMs?: number;
}

/** Pushes the artifact; resolves with the manifest's digest, or rejects with a PushFailure. */
export async function pushArtifact(options: PushOptions): Promise<string> {
  const client = new RegistryClient(options);
  const { artifact, repository } = options;
  for (const blob of artifact.blobs) await client.pushBlob(blob);
  const res = await client.send("PUT", `/v2/${repository.name}/manifests/${options.tag}`, { "content-type": MANIFEST_MEDIA_TYPE }, artifact.manifest);
  client.expect(res, [201], `PUT the manifest ${options.tag}`);
  const told = header(res.headers, "docker-content-digest");
  if (told !== undefined && told !== artifact.digest) {
    throw new PushFailure("RegistryError", `the registry stored the manifest as ${told}, not ${artifact.digest} (the sha256 of the bytes sent)`);
  }
  return artifact.digest;
}

/** Classifies a request's error: a certificate the CA does not vouch for, or no answer at all. */
export function networkFailure(err: unknown, what: string, secrets: readonly string[]): PushFailure {
  const code = String((err as NodeJS.ErrnoException)?.code ?? "");
  const message = redact(`${what}: ${err instanceof Error ? err.message : String(err)}${code && !(err instanceof Error && err.message.includes(code)) ? ` (${code})` : ""}`, secrets);
  const tls = /CERT|SELF_SIGNED|UNABLE_TO_|ERR_TLS|ERR_SSL|EPROTO/.test(code) || /certificate|SSL routines|wrong version number/i.test(message);
  return new PushFailure(tls ? "TLSError" : "Unreachable", message);
}

class RegistryClient {
  private authorization: string | undefined;
  private readonly base: URL;
  private readonly secrets: string[];

  constructor(private readonly options: PushOptions) {
    this.base = new URL(`https://${options.repository.host}`);
    this.authorization = options.credential ? basicAuthorization(options.credential) : undefined;
    this.secrets = options.credential ? [options.credential.password, this.authorization!.slice("Basic ".length)] : [];
  }

  async pushBlob(blob: Blob): Promise<void> {
    const { name } = this.options.repository;
    const head = await this.send("HEAD", `/v2/${name}/blobs/${blob.digest}`);
    if (head.status === 200) return;
    // 404 is the answer for a blob it lacks; refusals and errors are failures here already.
    if (head.status !== 404) this.expect(head, [200], `HEAD blob ${blob.digest}`);
    const started = await this.send("POST", `/v2/${name}/blobs/uploads/`, { "content-length": "0" });
    this.expect(started, [202], "POST a blob upload");
    const location = header(started.headers, "location");
    if (!location) throw new PushFailure("RegistryError", "POST a blob upload: 202 without a Location");
    // The Location may be relative or absolute, and may already carry a query (a session state).
    const upload = new URL(location, this.base);
    upload.searchParams.append("digest", blob.digest);
    const put = await this.send("PUT", upload, { "content-type": "application/octet-stream" }, blob.content);
    this.expect(put, [201], `PUT blob ${blob.digest}`);
  }

  /** One request, with the credential where it belongs and once more after a Bearer challenge. */
  async send(method: string, target: string | URL, headers: Record<string, string> = {}, body?: Buffer): Promise<HttpResponse> {
    const url = typeof target === "string" ? new URL(target, this.base) : target;
    const res = await this.exchange(method, url, headers, body);
    if (res.status !== 401 || url.origin !== this.base.origin) return res;
    const challenge = bearerChallenge(header(res.headers, "www-authenticate"));
    if (!challenge) return res;
    this.authorization = `Bearer ${await this.token(challenge)}`;
    return this.exchange(method, url, headers, body);
  }

  /** Fails unless the answer is one of `ok`: 401 and 403 are a refusal, anything else a registry error. */
  expect(res: HttpResponse, ok: number[], what: string): void {
    if (ok.includes(res.status)) return;
    const detail = registryErrors(res.body);
    const message = redact(`${what}: the registry answered ${res.status}${detail ? ` ${detail}` : ""}`, this.secrets);
    throw new PushFailure(res.status === 401 || res.status === 403 ? "Refused" : "RegistryError", message);
  }

  private async exchange(method: string, url: URL, headers: Record<string, string>, body?: Buffer): Promise<HttpResponse> {
    // The credential goes to the registry's own origin only, never to where an upload was sent.
    const auth: Record<string, string> = this.authorization && url.origin === this.base.origin ? { authorization: this.authorization } : {};
    try {
      return await httpRequest({
        method,
        url,
        headers: { ...headers, ...auth },
        ...(body === undefined ? {} : { body }),
        ca: this.options.ca,
        timeoutMs: this.options.timeoutMs ?? 60_000,
        maxResponseBytes: 1024 * 1024,
      });
    } catch (err) {
      throw networkFailure(err, `${method} ${url.origin}${url.pathname}`, this.secrets);
    }
  }

  /** A token from the challenge's realm, for pulling and pushing this repository. */
  private async token(challenge: BearerChallenge): Promise<string> {
    let realm: URL;
    try {
      realm = new URL(challenge.realm);
    } catch {
      throw new PushFailure("RegistryError", `the registry's token realm "${challenge.realm}" is not a URL`);
    }
    // The credential goes to the token service: never in clear text.
    if (realm.protocol !== "https:") throw new PushFailure("Refused", `the registry's token realm ${realm.origin} is not https; the credential is not sent there`);
    if (challenge.service) realm.searchParams.append("service", challenge.service);
    const push = `repository:${this.options.repository.name}:pull,push`;
    realm.searchParams.append("scope", push);
    if (challenge.scope && challenge.scope !== push) realm.searchParams.append("scope", challenge.scope);
    const headers: Record<string, string> = this.options.credential ? { authorization: basicAuthorization(this.options.credential) } : {};
    let res: HttpResponse;
    try {
      res = await httpRequest({ method: "GET", url: realm, headers, ca: this.options.ca, timeoutMs: this.options.timeoutMs ?? 60_000, maxResponseBytes: 1024 * 1024 });
    } catch (err) {
      throw networkFailure(err, `GET token ${realm.origin}${realm.pathname}`, this.secrets);
    }
    this.expect(res, [200], `GET token ${realm.origin}${realm.pathname}`);
    let token: unknown;
    try {
      const json = JSON.parse(res.body.toString("utf8")) as { token?: unknown; access_token?: unknown };
      token = json.token ?? json.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== "string" || token === "") throw new PushFailure("RegistryError", `GET token ${realm.origin}${realm.pathname}: no token in the answer`);
    this.secrets.push(token);
    return token;
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The registry's own words for an error: `CODE: message` from distribution-spec's error body. */
function registryErrors(body: Buffer): string | undefined {
  try {
    const { errors } = JSON.parse(body.toString("utf8")) as { errors?: { code?: unknown; message?: unknown }[] };
    const first = errors?.[0];
    if (!first) return undefined;
    return [first.code, first.message].filter((p) => typeof p === "string" && p !== "").join(": ").slice(0, 200) || undefined;
  } catch {
    return undefined;
  }
}
