// A very small Kubernetes REST client on node:https, authenticated by a client
// certificate. Enough for the control-plane harness (namespaces, secrets,
// FunctionRevisions, server-side apply of arbitrary objects) without kubectl or
// @kubernetes/client-node.
import { request as httpsRequest } from "node:https";

export interface KubeCredentials {
  server: string; // https://127.0.0.1:PORT
  ca: string | Buffer; // PEM
  cert: string | Buffer; // PEM client certificate
  key: string | Buffer; // PEM client key
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

export interface KubeResponse<T = unknown> {
  status: number;
  body: T;
  text: string;
}

export class KubeError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly text: string,
  ) {
    super(`${method} ${path}: HTTP ${status}: ${text.slice(0, 2000)}`);
    this.name = "KubeError";
  }
}

interface ResourceInfo {
  plural: string;
  namespaced: boolean;
}

export class Kube {
  private readonly discovery = new Map<string, Map<string, ResourceInfo>>();

  constructor(readonly creds: KubeCredentials, readonly fieldManager = "berth-conformance") {}

  /** One HTTP request; never throws for HTTP status codes, only for transport errors. */
  raw(method: string, path: string, body?: unknown, contentType = "application/json", timeoutMs = 30_000): Promise<KubeResponse> {
    const url = new URL(path, this.creds.server);
    const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        url,
        {
          method,
          ca: this.creds.ca,
          cert: this.creds.cert,
          key: this.creds.key,
          headers: {
            Accept: "application/json",
            ...(payload === undefined ? {} : { "Content-Type": contentType, "Content-Length": Buffer.byteLength(payload) }),
          },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = text;
            try {
              parsed = text.length > 0 ? JSON.parse(text) : undefined;
            } catch {
              /* not JSON (e.g. /readyz) */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, text });
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out after ${timeoutMs} ms`)));
      req.on("error", reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** Like raw() but throws KubeError unless the status is 2xx (or listed in `ok`). */
  async call<T = any>(method: string, path: string, body?: unknown, contentType?: string, ok: number[] = []): Promise<KubeResponse<T>> {
    const res = await this.raw(method, path, body, contentType);
    if ((res.status < 200 || res.status > 299) && !ok.includes(res.status)) {
      throw new KubeError(method, path, res.status, res.text);
    }
    return res as KubeResponse<T>;
  }

  private async resources(apiVersion: string, refresh = false): Promise<Map<string, ResourceInfo>> {
    let m = this.discovery.get(apiVersion);
    if (m && !refresh) return m;
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const res = await this.call<{ resources: { name: string; kind: string; namespaced: boolean }[] }>("GET", base, undefined, undefined, [404]);
    m = new Map();
    if (res.status === 200) {
      for (const r of res.body.resources) {
        if (!r.name.includes("/")) m.set(r.kind, { plural: r.name, namespaced: r.namespaced });
      }
    }
    this.discovery.set(apiVersion, m);
    return m;
  }

  /** The REST path of a kind (collection if name is omitted). Re-discovers once on a miss (new CRDs). */
  async path(apiVersion: string, kind: string, name?: string, namespace?: string): Promise<string> {
    let info = (await this.resources(apiVersion)).get(kind);
    if (!info) info = (await this.resources(apiVersion, true)).get(kind);
    if (!info) throw new Error(`kind ${kind} is not served at ${apiVersion}`);
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = info.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? "default")}` : "";
    return `${base}${ns}/${info.plural}${name ? `/${encodeURIComponent(name)}` : ""}`;
  }

  /** Server-side apply (force). JSON is valid YAML, so no YAML library is needed. */
  async apply<T extends KubeObject>(obj: T): Promise<T> {
    const name = obj.metadata.name;
    if (!name) throw new Error(`apply needs metadata.name (${obj.kind})`);
    const p = await this.path(obj.apiVersion, obj.kind, name, obj.metadata.namespace);
    const res = await this.call<T>("PATCH", `${p}?fieldManager=${encodeURIComponent(this.fieldManager)}&force=true`, obj, "application/apply-patch+yaml");
    return res.body;
  }

  async create<T extends KubeObject>(obj: T): Promise<T> {
    const p = await this.path(obj.apiVersion, obj.kind, undefined, obj.metadata.namespace);
    return (await this.call<T>("POST", p, obj)).body;
  }

  /** The object, or undefined when it does not exist. */
  async get<T = any>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | undefined> {
    const res = await this.call<T>("GET", await this.path(apiVersion, kind, name, namespace), undefined, undefined, [404]);
    return res.status === 404 ? undefined : res.body;
  }

  async list<T = any>(apiVersion: string, kind: string, namespace?: string, labelSelector?: string): Promise<T[]> {
    const q = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
    const res = await this.call<{ items: T[] }>("GET", (await this.path(apiVersion, kind, undefined, namespace)) + q);
    return res.body.items;
  }

  /** Every object of a kind across all namespaces (list() of a namespaced kind reads one namespace, default if none is given). */
  async listAllNamespaces<T = any>(apiVersion: string, kind: string): Promise<T[]> {
    const res = await this.call<{ items: T[] }>("GET", (await this.path(apiVersion, kind)).replace(/\/namespaces\/[^/]+\//, "/"));
    return res.body.items;
  }

  /** Deletes; true if it existed. */
  async delete(apiVersion: string, kind: string, name: string, namespace?: string, propagationPolicy = "Background"): Promise<boolean> {
    const res = await this.call("DELETE", await this.path(apiVersion, kind, name, namespace), { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy }, undefined, [404]);
    return res.status !== 404;
  }

  /** JSON merge patch, optionally of a subresource such as "status". */
  async mergePatch<T = any>(apiVersion: string, kind: string, name: string, patch: unknown, namespace?: string, subresource?: string): Promise<T> {
    const p = (await this.path(apiVersion, kind, name, namespace)) + (subresource ? `/${subresource}` : "");
    return (await this.call<T>("PATCH", p, patch, "application/merge-patch+json")).body;
  }

  /** Polls fn until it returns a value other than undefined/false, or throws after timeoutMs. */
  async waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000, intervalMs = 250): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: unknown;
    for (;;) {
      try {
        const v = await fn();
        if (v !== undefined && v !== false) return v;
      } catch (e) {
        last = e;
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

/** status.conditions[type] of an object, if any. */
export function condition(obj: any, type: string): { type: string; status: string; reason?: string; message?: string } | undefined {
  const conds: any[] = obj?.status?.conditions ?? [];
  return conds.find((c) => c?.type === type);
}
