/**
 * A fleet member that is a path to a control plane the test already runs: its own fault proxy and
 * link in front of a shared `TestEnv`. Several members over one API server cost one control plane
 * instead of one each (a 1.20 member is ~350–400 MiB and seconds of a loaded CPU to start), for
 * tests where what differs between members is the network and the answers, not the data: each
 * member's faults, cuts and flaps reach only the clients that go through it.
 *
 * The members share the data: every member's cache (cluster-wide) holds every member's objects, so
 * a test gives each member its own namespace and its reconciler skips the others'.
 *
 * `TestFleet` starts a control plane per member; this is the same proxy-and-link pair without one.
 */
import { FaultProxy, type FaultProxyUpstream } from '../chaos/fault-proxy.js';
import type { KubeconfigObject } from '../control-plane/test-env.js';
import { DEFAULT_CUT_OFF_MODE, type CutOffMode, MemberLink } from './member-link.js';

/** How a member flaps: down (connections reset, new ones refused) for `downMs`, up for `upMs`, again. */
export interface FlapOptions {
  readonly downMs: number;
  readonly upMs: number;
}

/** A running flap; `stop()` leaves the link up. */
export interface Flapping {
  /** How many times the link went down so far. */
  readonly cuts: number;
  stop(): void;
}

export class ProxiedMember {
  /** A token kubeconfig through the link and the proxy, with the member's name on its cluster, user and context. */
  readonly kubeconfig: KubeconfigObject;
  private closed = false;

  private constructor(
    /** The member's cluster name (a DNS label). */
    readonly name: string,
    /** This member's HTTP-level faults (statuses, delays, watch cuts, rewritten answers). */
    readonly proxy: FaultProxy,
    private readonly link: MemberLink,
  ) {
    this.kubeconfig = memberKubeconfig(name, proxy.kubeconfig, `https://127.0.0.1:${link.port}`);
  }

  /** Starts a proxy and a link of its own in front of `upstream` (both on free loopback ports). */
  static async start(name: string, upstream: FaultProxyUpstream): Promise<ProxiedMember> {
    const proxy = await FaultProxy.start({ upstream });
    try {
      const link = await MemberLink.start({ host: '127.0.0.1', port: Number(new URL(proxy.url).port) });
      return new ProxiedMember(name, proxy, link);
    } catch (err) {
      await proxy.close();
      throw err;
    }
  }

  /** The cut now in force, or undefined while the member is reachable. */
  get cut(): CutOffMode | undefined {
    return this.link.cut;
  }

  /** Cuts the member off from every client through it (see `CutOffMode`); the proxy's rules stay. */
  cutOff(options: { readonly mode?: CutOffMode } = {}): void {
    this.link.cutOff(options.mode ?? DEFAULT_CUT_OFF_MODE);
  }

  /** Reconnects the member and removes every fault-proxy rule. */
  heal(): void {
    this.proxy.clear();
    this.link.heal();
  }

  /**
   * A member going down and up until `stop()`: each time down, its open connections (watches
   * included) are reset and new ones refused, as a load balancer whose backend restarts.
   */
  flap(options: FlapOptions): Flapping {
    let cuts = 0;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const down = (): void => {
      if (stopped || this.closed) return;
      this.link.cutOff('reset');
      cuts++;
      timer = setTimeout(up, options.downMs);
    };
    const up = (): void => {
      if (stopped || this.closed) return;
      this.link.heal();
      timer = setTimeout(down, options.upMs);
    };
    down();
    return {
      get cuts() {
        return cuts;
      },
      stop: () => {
        stopped = true;
        clearTimeout(timer);
        if (!this.closed) this.link.heal();
      },
    };
  }

  /** Closes the link and the proxy (never the shared control plane). Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.link.close();
    await this.proxy.close();
  }
}

/** The proxy's kubeconfig pointed at the link, with the member's name on its cluster, user and context. */
function memberKubeconfig(name: string, through: KubeconfigObject, server: string): KubeconfigObject {
  const cluster = { ...through.clusters[0]!.cluster, server };
  const user = `${name}-admin`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: user, user: { ...through.users[0]!.user } }],
    contexts: [{ name, context: { cluster: name, user, namespace: 'default' } }],
    'current-context': name,
  };
}
