/**
 * The network between a test's clients and one fleet member: a loopback TCP relay in front of the
 * member's fault proxy, which a test cuts like a partition and heals. TLS passes through untouched
 * (the proxy's certificate names 127.0.0.1), so a kubeconfig through the link only changes the port.
 *
 * Why not the fault proxy's `drop` rule alone: a rule acts on each new request, while the
 * connections already open (watches above all) go on streaming. A partition silences those too,
 * and a real one answers nothing at all rather than resetting.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { OperatorRuntimeError } from '../../core/errors.js';

/**
 * `'blackhole'`: a partition — open connections fall silent (nothing is read or delivered either
 * way), new ones are accepted and then never answered, so clients hit their own timeouts; on heal
 * the survivors carry on, as packets do once a route is back. `'reset'`: a refused route — open
 * connections are reset and new ones reset at once, so clients fail fast.
 */
export type CutOffMode = 'blackhole' | 'reset';

/** @defaultValue `'blackhole'`: what a partitioned cluster looks like to its clients. */
export const DEFAULT_CUT_OFF_MODE: CutOffMode = 'blackhole';

export class MemberLinkError extends OperatorRuntimeError {
  declare readonly code: 'ERR_MEMBER_LINK';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_MEMBER_LINK', message, options);
  }
}

/** One client connection and, once relayed, its upstream connection. */
interface Pair {
  readonly client: Socket;
  upstream: Socket | undefined;
}

export class MemberLink {
  /** The loopback port clients connect to. */
  readonly port: number;
  private mode: CutOffMode | undefined;
  private readonly pairs = new Set<Pair>();
  private closed = false;

  private constructor(
    private readonly server: Server,
    private readonly target: { readonly host: string; readonly port: number },
    port: number,
  ) {
    this.port = port;
  }

  /** Listens on a free loopback port and relays every connection to `target`. */
  static async start(target: { readonly host: string; readonly port: number }): Promise<MemberLink> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    const link = new MemberLink(server, target, typeof address === 'object' && address ? address.port : 0);
    server.on('connection', (socket: Socket) => link.accept(socket));
    return link;
  }

  /** The mode of the cut now in force, or undefined while the link is up. */
  get cut(): CutOffMode | undefined {
    return this.mode;
  }

  /** Connections open now (relayed or held). */
  get connections(): number {
    return this.pairs.size;
  }

  /** Cuts the link (see {@link CutOffMode}); cutting again switches the mode. */
  cutOff(mode: CutOffMode = DEFAULT_CUT_OFF_MODE): void {
    if (this.closed) throw new MemberLinkError('the link is closed');
    this.mode = mode;
    for (const pair of [...this.pairs]) {
      if (mode === 'reset') this.reset(pair);
      else this.freeze(pair);
    }
  }

  /** Restores the link: silenced connections flow again, held ones are relayed now. */
  heal(): void {
    if (this.closed) return;
    this.mode = undefined;
    for (const pair of this.pairs) {
      if (pair.upstream) {
        pair.client.resume();
        pair.upstream.resume();
      } else this.relay(pair);
    }
  }

  /** Stops listening and destroys every connection. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const pair of this.pairs) this.destroy(pair);
    this.pairs.clear();
    await closed;
  }

  private accept(client: Socket): void {
    if (this.closed) {
      client.destroy();
      return;
    }
    const pair: Pair = { client, upstream: undefined };
    this.pairs.add(pair);
    client.on('error', () => {});
    client.once('close', () => {
      this.pairs.delete(pair);
      pair.upstream?.destroy();
    });
    if (this.mode === 'reset') this.reset(pair);
    // Held: accepted (paused on connect) and never read, as behind a route that drops packets.
    else if (this.mode === undefined) this.relay(pair);
  }

  private relay(pair: Pair): void {
    const { client } = pair;
    const upstream = createConnection({ host: this.target.host, port: this.target.port });
    pair.upstream = upstream;
    upstream.on('error', () => {});
    upstream.once('close', () => client.destroy());
    // By hand rather than pipe(): pipe() resumes a source on drain, which would undo a freeze.
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk: Buffer) => {
        if (!to.write(chunk)) from.pause();
      });
      to.on('drain', () => {
        if (this.mode === undefined) from.resume();
      });
      from.once('end', () => to.end());
    };
    forward(client, upstream);
    forward(upstream, client);
    client.resume();
  }

  private freeze(pair: Pair): void {
    pair.client.pause();
    pair.upstream?.pause();
  }

  private reset(pair: Pair): void {
    this.pairs.delete(pair);
    this.destroy(pair);
  }

  private destroy(pair: Pair): void {
    pair.upstream?.destroy();
    // An RST, as a refused route answers; destroy() alone would be an orderly FIN.
    if (!pair.client.destroyed) pair.client.resetAndDestroy();
    else pair.client.destroy();
  }
}
