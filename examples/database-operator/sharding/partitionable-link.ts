/**
 * One replica's network path to kube-apiserver as a TCP relay that can be cut: `partition()` makes
 * the replica's open connections go silent and holds its new ones unanswered (packets vanish, as on
 * a partitioned node — requests hang until the client's own timeouts fire), `heal()` forwards again.
 * TLS passes through untouched, so the replica verifies the API server's own certificate.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class PartitionableLink {
  private readonly pairs = new Set<{ client: Socket; upstream: Socket | undefined }>();
  private partitioned = false;

  private constructor(
    private readonly server: Server,
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
    /** `https://127.0.0.1:<port>`: the address to give the replica instead of the API server's. */
    readonly url: string,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** Listens on a free loopback port, relaying to `upstream` (`https://host:port`). */
  static async start(upstream: string): Promise<PartitionableLink> {
    const { hostname, port } = new URL(upstream);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    const local = typeof address === 'object' && address ? address.port : 0;
    return new PartitionableLink(server, hostname, Number(port), `https://127.0.0.1:${local}`);
  }

  get isPartitioned(): boolean {
    return this.partitioned;
  }

  /** Every open connection stops carrying data; new ones are accepted and never answered. */
  partition(): void {
    this.partitioned = true;
    for (const pair of this.pairs) this.silence(pair);
  }

  /**
   * Forwards new connections again. Connections silenced by the partition are reset: after a real
   * partition longer than the client's timeouts they are dead too, and the client reconnects.
   */
  heal(): void {
    this.partitioned = false;
    for (const pair of this.pairs) {
      if (pair.upstream) continue;
      pair.client.destroy();
      this.pairs.delete(pair);
    }
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    this.pairs.clear();
    await closed;
  }

  private accept(client: Socket): void {
    const pair: { client: Socket; upstream: Socket | undefined } = { client, upstream: undefined };
    this.pairs.add(pair);
    const forget = (): void => {
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', forget);
    client.on('close', forget);
    if (this.partitioned) {
      client.pause(); // held: the replica's bytes go nowhere
      return;
    }
    const upstream = createConnection({ host: this.upstreamHost, port: this.upstreamPort });
    pair.upstream = upstream;
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Cuts the relay without closing either side: neither end hears from the other any more. */
  private silence(pair: { client: Socket; upstream: Socket | undefined }): void {
    const { client, upstream } = pair;
    if (!upstream) return;
    client.unpipe(upstream);
    upstream.unpipe(client);
    client.pause();
    upstream.removeAllListeners('close');
    upstream.removeAllListeners('error');
    upstream.on('error', () => undefined);
    upstream.destroy(); // the API server side may go; the replica must not learn of it
    pair.upstream = undefined;
  }
}
