/**
 * The TCP relay of the integration and chaos tests (the cache's, the sharding bed's link from each
 * operator replica to kube-apiserver): it forwards bytes untouched (TLS and client certificates pass
 * through, unlike `testing/chaos/fault-proxy.ts`, which terminates TLS) and can break connections the way
 * networks do: `cut()` resets every open connection at once, `freeze()` makes connections go silent
 * while staying open (a dead peer behind a NAT, a hung server, a partitioned node) until the client
 * gives up on them, `heal()` ends such a partition. `delay(ms)` makes the link slow instead of
 * broken: what the server sends reaches the client `ms` later, in order (a watch that lags).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { InvalidOptionError } from '../../core/errors.js';

export interface TcpProxyTarget {
  readonly host: string;
  readonly port: number;
}

interface Pair {
  readonly client: Socket;
  upstream: Socket | undefined;
  /** Nothing is forwarded either way, and neither side's close reaches the other. */
  frozen: boolean;
  /** Server bytes (or its clean close, `'end'`) held by `delay()`, oldest first. */
  readonly held: { readonly dueAt: number; readonly chunk: Buffer | 'end' }[];
  timer: NodeJS.Timeout | undefined;
}

export class TcpProxy {
  private readonly pairs = new Set<Pair>();
  private frozen = false;
  private accepted = 0;
  private delayMs = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: TcpProxyTarget,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Listens on 127.0.0.1 on a free port. */
  static async start(target: TcpProxyTarget): Promise<TcpProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('tcp proxy: no port');
    return new TcpProxy(server, address.port, target);
  }

  /** Connections open now (frozen ones included). */
  get connections(): number {
    return this.pairs.size;
  }

  /** Connections accepted since start. */
  get acceptedTotal(): number {
    return this.accepted;
  }

  /** Resets every open connection (frozen ones included); returns how many there were. */
  cut(): number {
    const n = this.pairs.size;
    for (const p of [...this.pairs]) this.drop(p);
    return n;
  }

  /**
   * Every open connection goes silent and so does every new one, until `thaw()`: bytes are held,
   * and a close by the server is not passed on, so the client sees an open, mute connection.
   */
  freeze(): void {
    this.frozen = true;
    for (const p of this.pairs) this.freezePair(p);
  }

  /** New connections are forwarded again; connections frozen so far stay mute until closed. */
  thaw(): void {
    this.frozen = false;
  }

  /**
   * Ends a partition: new connections are forwarded again and every frozen one is reset (after a
   * partition longer than the client's timeouts they are dead too, and the client reconnects).
   * Connections that were never frozen carry on. Returns how many were reset.
   */
  heal(): number {
    this.frozen = false;
    const frozen = [...this.pairs].filter((p) => p.frozen);
    for (const p of frozen) this.drop(p);
    return frozen.length;
  }

  /**
   * From now on, what the server sends on any connection (open or new) reaches the client `ms`
   * later, in order, its clean close included; what the client sends is not delayed. `delay(0)`
   * ends it (bytes already held still arrive when due). For a cache that lags the API server by a
   * known time: a watch event written at t is seen at t + ms.
   */
  delay(ms: number): void {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new InvalidOptionError('delay', `must be a number >= 0, got ${ms}`);
    this.delayMs = ms;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    const pair: Pair = { client, upstream: undefined, frozen: false, held: [], timer: undefined };
    this.pairs.add(pair);
    client.on('error', () => this.drop(pair));
    // A client that gives up always closes its side for good, frozen or not.
    client.on('close', () => this.drop(pair));
    if (this.frozen) {
      this.freezePair(pair);
      return;
    }
    const upstream = connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    client.on('data', (d: Buffer) => {
      if (!pair.frozen) upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (!pair.frozen) this.toClient(pair, d);
    });
    client.on('end', () => {
      if (!pair.frozen) upstream.end();
    });
    let upstreamEnded = false;
    upstream.on('end', () => {
      upstreamEnded = true;
      // A clean close is passed on as one (FIN after the data); the client's own close ends the pair.
      if (!pair.frozen) this.toClient(pair, 'end');
    });
    upstream.on('error', () => {
      if (!pair.frozen) this.drop(pair);
    });
    upstream.on('close', () => {
      if (!pair.frozen && !upstreamEnded) this.drop(pair);
    });
  }

  /** Passes server bytes on now, or when due under `delay()`, never ahead of bytes still held. */
  private toClient(p: Pair, chunk: Buffer | 'end'): void {
    if (this.delayMs === 0 && p.held.length === 0) {
      this.deliver(p, chunk);
      return;
    }
    p.held.push({ dueAt: performance.now() + this.delayMs, chunk });
    this.armRelease(p);
  }

  private armRelease(p: Pair): void {
    const head = p.held[0];
    if (p.timer !== undefined || head === undefined) return;
    p.timer = setTimeout(
      () => {
        p.timer = undefined;
        const now = performance.now();
        while (p.held.length > 0 && p.held[0]!.dueAt <= now) this.deliver(p, p.held.shift()!.chunk);
        this.armRelease(p);
      },
      Math.max(0, head.dueAt - performance.now()),
    );
  }

  private deliver(p: Pair, chunk: Buffer | 'end'): void {
    // A pair frozen (or dropped) while its bytes were held forwards nothing, as any frozen pair.
    if (p.frozen || !this.pairs.has(p)) return;
    if (chunk === 'end') p.client.end();
    else p.client.write(chunk);
  }

  private freezePair(p: Pair): void {
    p.frozen = true;
    p.client.pause();
    p.upstream?.pause();
  }

  private drop(p: Pair): void {
    if (!this.pairs.delete(p)) return;
    if (p.timer !== undefined) clearTimeout(p.timer);
    p.held.length = 0;
    // resetAndDestroy sends RST where possible: the client sees a reset, not a clean end.
    if (!p.client.destroyed) p.client.resetAndDestroy();
    if (p.upstream && !p.upstream.destroyed) p.upstream.destroy();
  }
}
