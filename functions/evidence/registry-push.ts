// Pushes an artifact with the OCI distribution API (distribution-spec v1.1), on node:https:
// each blob unless the registry has it (HEAD, then POST an upload and PUT its content in one
// request), then the manifest under the tag. Basic credentials are sent from the first request;
// a registry that answers 401 with a Bearer challenge gets them at its token service instead,
// and the token on the request again. Where it sends things is as strict as oras-go (the
// reference client) or stricter: redirects are followed as Go's http client follows them, the
// credential only ever to the registry's own origin; nothing goes anywhere but over https; and
// the credential goes to a token service only on the registry's host or one the profile reviews.
import type { IncomingHttpHeaders } from "node:http";
import { BlockList, isIP } from "node:net";
import { httpRequest, type HttpResponse } from "./http-request.js";
import { basicAuthorization, bearerChallenge, type BearerChallenge, redact, type RegistryCredential } from "./registry-auth.js";
import type { FailureReason } from "../contracts/evidence-result.js";
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
  /**
   * Host names, besides the registry's own, whose token service may be sent the credential: the
   * profile's hosts for the evidence destination (BERTH_TOKEN_REALM_HOSTS).
   */
  readonly tokenRealmHosts?: readonly string[];
}

/** As many redirects as Go's http client follows before it gives up. */
const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

// oras-go refuses a token service on a loopback or link-local address (a registry could point
// the client at a metadata service, or at whatever listens beside it); IPv4-mapped IPv6
// addresses are checked as the IPv4 address they hold.
const LOCAL = new BlockList();
LOCAL.addSubnet("127.0.0.0", 8, "ipv4");
LOCAL.addSubnet("169.254.0.0", 16, "ipv4");
LOCAL.addAddress("::1", "ipv6");
LOCAL.addSubnet("fe80::", 10, "ipv6");

/**
 * Why the credential must not go to a token service on `realmHost` (a URL's hostname), or
 * undefined when it may: the registry's own host (`registryHost`, a hostname too), else a host
 * `allowed` names that is not a loopback or link-local address. Hosts compare as hostnames,
 * without the port, as oras-go compares them: a token service on another port of the
 * registry's machine is the registry's own.
 */
export function realmRefusal(realmHost: string, registryHost: string, allowed: readonly string[]): string | undefined {
  const host = realmHost.toLowerCase();
  if (host === registryHost.toLowerCase()) return undefined;
  const address = host.replace(/^\[(.*)\]$/, "$1");
  const family = isIP(address);
  if (family !== 0 && LOCAL.check(address, family === 6 ? "ipv6" : "ipv4")) {
    return `the registry's token service is on ${host}, a loopback or link-local address that is not the registry's host; the credential is not sent there`;
  }
  if (allowed.some((a) => a.toLowerCase() === host)) return undefined;
  return `the registry's token service is on host ${host}, neither the registry's (${registryHost}) nor one the profile reviews for the evidence destination; the credential is not sent there (list it in the evidence destination's hosts in the WorkspaceProfile's spec.destinations to allow it)`;
}

/**
 * Nothing goes but over https: the registry is reached over https, so a Location (an upload's, or
 * a redirect's) to http:// is a downgrade that would carry the evidence, and on the registry's own
 * host the credential, in clear text. Refused rather than a RegistryError, as an http token realm
 * is: the export declines to send, and another attempt would only decline again.
 */
function httpsOnly(location: URL, what: string, whose: string): void {
  if (location.protocol !== "https:") {
    throw new PushFailure("Refused", `${what}: the registry's ${whose} ${location.origin} is not https; the evidence and the credential are not sent there`);
  }
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
    httpsOnly(upload, "POST a blob upload", "upload Location");
    upload.searchParams.append("digest", blob.digest);
    const put = await this.send("PUT", upload, { "content-type": "application/octet-stream" }, blob.content);
    this.expect(put, [201], `PUT blob ${blob.digest}`);
  }

  /** One request, with the credential where it belongs and once more after a Bearer challenge. */
  async send(method: string, target: string | URL, headers: Record<string, string> = {}, body?: Buffer): Promise<HttpResponse> {
    const url = typeof target === "string" ? new URL(target, this.base) : target;
    const res = await this.follow(method, url, headers, body);
    if (res.status !== 401 || res.url.origin !== this.base.origin) return res;
    const challenge = bearerChallenge(header(res.headers, "www-authenticate"));
    if (!challenge) return res;
    this.authorization = `Bearer ${await this.token(challenge)}`;
    return this.follow(method, url, headers, body);
  }

  /**
   * The request and its redirects (distribution's redirect storage middleware, S3-backed
   * registries), with the answer and where it came from. HEAD and GET follow any redirect; a
   * request with a body follows 307 and 308 alone, sending the body again, since Go's client
   * would turn it into a GET on 301, 302 and 303 and that is no upload: those are answered as
   * they came, and fail as the registry's error.
   */
  private async follow(method: string, url: URL, headers: Record<string, string>, body?: Buffer): Promise<HttpResponse & { url: URL }> {
    for (let current = url, redirects = 0; ; redirects++) {
      const what = `${method} ${current.origin}${current.pathname}`;
      const res = await this.exchange(method, current, headers, body);
      const location = header(res.headers, "location");
      const follows = REDIRECTS.has(res.status) && location !== undefined && (method === "HEAD" || method === "GET" || res.status === 307 || res.status === 308);
      if (!follows) return { ...res, url: current };
      if (redirects === MAX_REDIRECTS) throw new PushFailure("RegistryError", `${what}: stopped after ${MAX_REDIRECTS} redirects`);
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new PushFailure("RegistryError", redact(`${what}: the registry redirected to "${location}", which is not a URL`, this.secrets));
      }
      httpsOnly(next, what, "redirect to");
      current = next;
    }
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
    // Nor to a token service the registry alone chose: a registry (or whoever answers for it)
    // could name any host as its realm and be handed the credential there.
    const refusal = realmRefusal(realm.hostname, this.base.hostname, this.options.tokenRealmHosts ?? []);
    if (refusal !== undefined) throw new PushFailure("Refused", refusal);
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
