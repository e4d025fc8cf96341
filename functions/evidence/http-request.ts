// One HTTP(S) exchange on node:http and node:https, with the bounds every caller here needs: a
// time limit for the whole exchange, a cap on what is read back, and the one CA bundle to trust.
import http, { type IncomingHttpHeaders } from "node:http";
import https from "node:https";

export interface HttpRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer | string;
  /** PEM CA certificates to trust instead of Node.js's built-in roots (https only). */
  readonly ca?: Buffer | undefined;
  readonly timeoutMs: number;
  /** A longer response body fails the exchange rather than filling memory. */
  readonly maxResponseBytes: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Raised when the exchange took longer than asked; `code` reads as a network error's. */
export class RequestTimeout extends Error {
  readonly code = "ETIMEDOUT";
}

export function httpRequest(req: HttpRequest): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    const headers: Record<string, string> = { ...req.headers };
    if (body !== undefined) headers["content-length"] = String(body.length);
    const options = { method: req.method, headers, ...(req.url.protocol === "https:" && req.ca ? { ca: req.ca } : {}) };
    const send = req.url.protocol === "https:" ? https.request : http.request;
    const request = send(req.url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > req.maxResponseBytes) {
          fail(new Error(`${req.method} ${req.url.origin}${req.url.pathname}: response larger than ${req.maxResponseBytes} bytes`));
          request.destroy();
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on("error", fail);
    });
    const timer = setTimeout(() => {
      fail(new RequestTimeout(`${req.method} ${req.url.origin}${req.url.pathname}: no answer within ${req.timeoutMs} ms`));
      request.destroy();
    }, req.timeoutMs);
    function fail(err: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
    }
    request.on("error", fail);
    request.end(body);
  });
}
