/**
 * A fleet for tests: one host control plane (where the operator runs and its fleet kinds and
 * member Secrets live) and N member clusters, each a `TestEnv` of its own behind its own fault
 * proxy and link, all started in parallel. Everything is per fleet — temp dirs, ports, proxies,
 * links — and nothing touches iptables, so fleets in one process or in test files running at once
 * never share a thing.
 */
import { validateClusterName } from '../../fleet/cluster-provider.js';
import { FaultProxy } from '../chaos/fault-proxy.js';
import { TestEnv, type TestEnvOptions } from '../control-plane/test-env.js';
import { MemberLink } from './member-link.js';
import type { MemberSecretManifest, MemberSecretOptions } from './member-secret.js';
import { TestFleetError } from './test-fleet-error.js';
import { TestFleetMember } from './test-fleet-member.js';

export interface TestFleetOptions {
  /** How many members (named `member-1`…`member-N`), or their names (DNS labels, distinct). */
  readonly members: number | readonly string[];
  /** The host's control plane. @defaultValue `{}`: kube-apiserver 1.20, no controller manager */
  readonly host?: Omit<TestEnvOptions, 'signal' | 'existingCluster'>;
  /**
   * Every member's control plane. `{ server: 'modern' }` for the 1.36 CRD-only server (custom
   * resources only: no namespaces, ConfigMaps…); `{ controllerManager: true }` where the kinds need
   * core controllers. @defaultValue `{}`: kube-apiserver 1.20 without controller manager, the cheapest
   */
  readonly member?: Omit<TestEnvOptions, 'signal' | 'existingCluster'>;
  /** CRDs for the host and every member (each waits until they are served). */
  readonly crds?: readonly object[];
  /** CRDs for the members only (the host's own: `host.crds`). */
  readonly memberCrds?: readonly object[];
  /** Aborting it while `start` runs makes it stop everything once the parts in flight have started, and reject. */
  readonly signal?: AbortSignal;
}

/** How long the start took, in ms: the whole fleet and each member (control plane, CRDs, proxy, link). */
export interface TestFleetStartup {
  readonly totalMs: number;
  readonly hostMs: number;
  readonly members: Readonly<Record<string, number>>;
}

export class TestFleet {
  private readonly byName = new Map<string, TestFleetMember>();
  private stopped = false;

  private constructor(
    /** The host cluster (no proxy: the operator's own cluster). */
    readonly host: TestEnv,
    /** The members, in the order of `options.members`. */
    readonly members: readonly TestFleetMember[],
    readonly startup: TestFleetStartup,
  ) {
    for (const m of members) this.byName.set(m.name, m);
  }

  /**
   * Starts the host and every member in parallel. When any of them fails (or `signal` aborts), the
   * others are let finish their start, then everything is stopped and the first failure thrown (in
   * a `TestFleetError` naming the member). Why not abort the other starts at once: a `TestEnv.start`
   * aborted while it spawns a component can return before that component is stopped, and one
   * spawned just after the abort outlives the start (until the test process exits).
   */
  static async start(options: TestFleetOptions): Promise<TestFleet> {
    const names = memberNames(options.members);
    if (options.signal?.aborted) throw new TestFleetError('TestFleet.start aborted before it began');
    // Whatever exists so far, so a failure anywhere stops it all.
    const started: { hosts: TestEnv[]; members: TestFleetMember[]; parts: { close(): Promise<void> }[] } = {
      hosts: [],
      members: [],
      parts: [],
    };
    let firstFailure: { what: string; error: unknown } | undefined;
    const fail = (what: string, error: unknown): never => {
      firstFailure ??= { what, error };
      throw error;
    };
    const t0 = Date.now();
    const hostStart = (async () => {
      const host = await TestEnv.start({
        ...options.host,
        crds: [...(options.crds ?? []), ...(options.host?.crds ?? [])],
      });
      started.hosts.push(host);
      return { host, ms: Date.now() - t0 };
    })().catch((err: unknown) => fail('the host', err));
    const memberStarts = names.map((name) =>
      startMember(name, options, started).catch((err: unknown) => fail(`member ${name}`, err)),
    );
    const results = await Promise.allSettled([hostStart, ...memberStarts]);
    if (options.signal?.aborted) firstFailure ??= { what: 'the fleet', error: new TestFleetError('aborted') };
    if (firstFailure || results.some((r) => r.status === 'rejected')) {
      await Promise.allSettled([
        ...started.members.map((m) => m.stop()),
        ...started.parts.map((p) => p.close()),
        ...started.hosts.map((h) => h.stop()),
      ]);
      const failure = firstFailure ?? { what: 'the fleet', error: undefined };
      const aborted = options.signal?.aborted ? ' (aborted)' : '';
      throw new TestFleetError(
        `TestFleet.start failed${aborted}: ${failure.what}: ${failure.error instanceof Error ? failure.error.message : String(failure.error)}`,
        { cause: failure.error },
      );
    }
    const { host, ms: hostMs } = (results[0] as PromiseFulfilledResult<{ host: TestEnv; ms: number }>).value;
    const members = results.slice(1).map((r) => (r as PromiseFulfilledResult<TestFleetMember>).value);
    return new TestFleet(host, members, {
      totalMs: Date.now() - t0,
      hostMs,
      members: Object.fromEntries(members.map((m) => [m.name, m.startMs])),
    });
  }

  /** The member of that name; `TestFleetError` when there is none. */
  member(name: string): TestFleetMember {
    const m = this.byName.get(name);
    if (!m)
      throw new TestFleetError(`no member ${JSON.stringify(name)} (members: ${[...this.byName.keys()].join(', ')})`);
    return m;
  }

  /** Every member's Secret manifest (see `TestFleetMember.secretManifest`). */
  secretManifests(options: Omit<MemberSecretOptions, 'name'>): MemberSecretManifest[] {
    return this.members.map((m) => m.secretManifest(options));
  }

  /**
   * Creates each named member's Secret in the host (namespace must exist), so a kubeconfigSecrets
   * provider engages them. @defaultValue members: all
   */
  async registerMembers(
    options: Omit<MemberSecretOptions, 'name'> & { readonly members?: readonly string[] },
  ): Promise<void> {
    for (const name of options.members ?? this.members.map((m) => m.name)) {
      const secret = this.member(name).secretManifest(options);
      const res = await this.host.request(
        'POST',
        `/api/v1/namespaces/${encodeURIComponent(options.namespace)}/secrets`,
        secret,
      );
      // Never the body: it would echo the Secret's data.
      if (res.status !== 201)
        throw new TestFleetError(
          `creating the Secret ${options.namespace}/${secret.metadata.name} of member ${name} in the host failed: HTTP ${res.status}`,
        );
    }
  }

  /** Pids of every component process of the host and the members now running (for leak checks). */
  pids(): number[] {
    return [...this.host.pids(), ...this.members.flatMap((m) => m.env.pids())];
  }

  /** Stops every member (clients, link, proxy, control plane) and the host, in parallel. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const results = await Promise.allSettled([...this.members.map((m) => m.stop()), this.host.stop()]);
    const errors = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason);
    if (errors.length)
      throw new TestFleetError(`stopping the fleet: ${errors.length} part(s) failed to stop`, {
        cause: new AggregateError(errors),
      });
  }
}

async function startMember(
  name: string,
  options: TestFleetOptions,
  started: { members: TestFleetMember[]; parts: { close(): Promise<void> }[] },
): Promise<TestFleetMember> {
  const t0 = Date.now();
  const env = await TestEnv.start({
    ...options.member,
    crds: [...(options.crds ?? []), ...(options.memberCrds ?? []), ...(options.member?.crds ?? [])],
  });
  const envPart = { close: () => env.stop() };
  started.parts.push(envPart);
  const proxy = await FaultProxy.start({ upstream: env });
  started.parts.push(proxy);
  const link = await MemberLink.start({ host: '127.0.0.1', port: Number(new URL(proxy.url).port) });
  started.parts.push(link);
  const member = new TestFleetMember(name, env, proxy, link, Date.now() - t0);
  // The member now owns its parts; stopping it stops them.
  for (const part of [envPart, proxy, link]) started.parts.splice(started.parts.indexOf(part), 1);
  started.members.push(member);
  return member;
}

function memberNames(members: TestFleetOptions['members']): string[] {
  let names: string[];
  if (typeof members === 'number') {
    if (!(Number.isSafeInteger(members) && members >= 1))
      throw new TestFleetError(`members must be a positive integer or a list of names, got ${members}`);
    names = Array.from({ length: members }, (_, i) => `member-${i + 1}`);
  } else {
    names = [...members];
    if (names.length === 0) throw new TestFleetError('members: at least one member');
  }
  const seen = new Set<string>();
  for (const name of names) {
    try {
      validateClusterName(name);
    } catch (err) {
      throw new TestFleetError(`members: ${(err as Error).message}`, { cause: err });
    }
    if (seen.has(name)) throw new TestFleetError(`members: ${JSON.stringify(name)} is named twice`);
    seen.add(name);
  }
  return names;
}
