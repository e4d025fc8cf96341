import { readFileSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { join } from "node:path";

/**
 * The flow-control windows a caller is offered on a fresh connection: the initial window of each
 * call (the server's SETTINGS) and of the whole connection (its WINDOW_UPDATE on stream 0), read
 * once a ping has made its round trip, so every frame the server sent first has arrived. Plain
 * HTTP/2 (as --insecure serves) unless `tlsDir` holds the client's certificates.
 */
export async function offeredWindows(address: string, tlsDir?: string): Promise<{ call: number | undefined; connection: number | undefined }> {
  const session = tlsDir
    ? http2Connect(`https://${address.replace("127.0.0.1", "localhost")}`, {
        ca: readFileSync(join(tlsDir, "ca.crt")),
        key: readFileSync(join(tlsDir, "tls.key")),
        cert: readFileSync(join(tlsDir, "tls.crt")),
      })
    : http2Connect(`http://${address}`);
  try {
    await new Promise<void>((resolve, reject) => {
      session.once("error", reject);
      session.once("remoteSettings", () => session.ping((e) => (e ? reject(e) : resolve())));
    });
    return { call: session.remoteSettings.initialWindowSize, connection: session.state.remoteWindowSize };
  } finally {
    session.destroy();
  }
}
