// The negative control: with enforcement off the gate is a plain reverse proxy, so a test can send
// each refused probe through the same port and see it reach the upstream. Without it, a probe that
// failed for an unrelated reason (a wrong path, a malformed request) would pass as "refused".
import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import https from "node:https";

/** RFC 9110 §7.6.1: connection-specific headers a proxy must not forward. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host"]);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}

/** Sends the request, byte for byte, to `upstream` and streams the answer back. */
export function passThrough(req: IncomingMessage, res: ServerResponse, upstream: URL): void {
  const client = upstream.protocol === "https:" ? https : http;
  const outgoing = client.request(upstream, { method: req.method, headers: forwardable(req.headers) }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
    // Flush now: an SSE stream may not send its first event for a while.
    res.flushHeaders();
    answer.pipe(res);
  });
  outgoing.on("error", (err) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end(`cannot reach upstream: ${err.message}`);
  });
  res.on("close", () => outgoing.destroy());
  req.pipe(outgoing);
}
