// A fault-injecting TCP proxy on loopback, between Crossplane and the function. Crossplane dials
// the proxy (the function is registered at its port) and TLS passes through it untouched, so
// what Crossplane meets is what it would meet on a real network:
//   pass       bytes flow both ways;
//   delay ms   every chunk, both ways, arrives ms later (in order): a slow function or link;
//   blackhole  a partition: connections are accepted and nothing comes back; when it ends the
//              connections held meanwhile are reset, as after a peer restarted, and clients dial anew.
import { connect, createServer, type Server, type Socket } from "node:net";

export type ProxyMode = { type: "pass" } | { type: "delay"; ms: number } | { type: "blackhole" };

/** A mode as the suite's messages name it. */
export const describeMode = (m: ProxyMode): string => (m.type === "delay" ? `delay ${m.ms} ms` : m.type);

interface Link {
  client: Socket;
  upstream?: Socket;
}

export class FaultProxy {
  private mode: ProxyMode = { type: "pass" };
  private readonly links = new Set<Link>();
  private server?: Server;
  port = 0;
  /** Connections accepted so far: shows Crossplane dialled again after a fault. */
  connections = 0;
  /** Bytes forwarded so far, each way: what a fault made cross the link. */
  readonly bytes = { toFunction: 0, toCrossplane: 0 };

  constructor(private readonly upstreamPort: number) {}

  async start(): Promise<number> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (this.server.address() as { port: number }).port;
    return this.port;
  }

  /** The mode in force. */
  get current(): ProxyMode {
    return this.mode;
  }

  /** Switches mode. Entering a blackhole cuts every live connection off from the function. */
  set(mode: ProxyMode): void {
    const was = this.mode;
    this.mode = mode;
    if (mode.type === "blackhole") {
      for (const l of this.links) l.upstream?.destroy();
    } else if (was.type === "blackhole") {
      for (const l of this.links) if (!l.upstream) l.client.resetAndDestroy();
    }
  }

  private accept(client: Socket): void {
    this.connections++;
    const link: Link = { client };
    this.links.add(link);
    client.on("close", () => {
      link.upstream?.destroy();
      this.links.delete(link);
    });
    client.on("error", () => {});
    if (this.mode.type === "blackhole") {
      client.on("data", () => {}); // read and drop: the other side never answers
      return;
    }
    const upstream = connect({ port: this.upstreamPort, host: "127.0.0.1" });
    link.upstream = upstream;
    upstream.on("error", () => client.destroy());
    upstream.on("close", () => {
      // Cut off by a blackhole: the client is left hanging, as in a partition.
      if (this.mode.type !== "blackhole") client.destroy();
      else link.upstream = undefined;
    });
    this.pipe(client, upstream, "toFunction");
    this.pipe(upstream, client, "toCrossplane");
  }

  /** Forwards chunks in order, each after the delay in force when it arrived. */
  private pipe(from: Socket, to: Socket, direction: keyof FaultProxy["bytes"]): void {
    let queue = Promise.resolve();
    from.on("data", (chunk: Buffer) => {
      const mode = this.mode;
      if (mode.type === "blackhole") return;
      const due = Date.now() + (mode.type === "delay" ? mode.ms : 0);
      queue = queue.then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (to.destroyed || this.mode.type === "blackhole") return;
        this.bytes[direction] += chunk.length;
        to.write(chunk);
      });
    });
    from.on("end", () => void queue.then(() => to.end()));
  }

  async stop(): Promise<void> {
    for (const l of this.links) {
      l.upstream?.destroy();
      l.client.destroy();
    }
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
