/**
 * A simulation of the sharding protocol under fire, on the fake clock, replayed exactly from its
 * seed (run by protocol-simulation.test.ts, which is in the default run).
 *
 * Members join, are partitioned from the API server (their renewals fail, so they must fence
 * themselves) and heal or stay gone, while a sharder — sometimes two at once, as in a split brain
 * of leader election — moves keys and a writer keeps changing every object. Every reconcile is an
 * interval on the one fake timeline; no two of one key may overlap, and every key must be reconciled
 * by a live member at the end.
 *
 * Every random choice comes from the seed: the schedule, the API latency, the members' ids and
 * elector jitter, and the informers' watch timeouts and backoff. Every API call takes 1–5 ms of
 * fake time: with none, two sharders whose views of the ring differ for a moment (one started later,
 * so it counts a member's lease from later) can hand a key back and forth at one fake instant for
 * ever — each write wakes the other through promise callbacks alone, so the clock never gets a turn
 * to end their disagreement (that was the "crawl" of about a third of the runs).
 */
import { clientListerWatcher } from '../../cache/client-lister-watcher.js';
import { SharedInformer } from '../../cache/informer.js';
import { ApiError } from '../../client/api-error.js';
import type { Client } from '../../client/contracts.js';
import { sleep } from '../../core/abort.js';
import { OperatorRuntimeError } from '../../core/errors.js';
import { FakeClock, flushMicrotasks } from '../../core/fake-clock.js';
import { silentLogger } from '../../core/logger.js';
import { keyOf, type KubeObject } from '../../core/object-key.js';
import { seededRandom } from '../../core/seeded-random.js';
import { Controller } from '../../controller/controller.js';
import { createMetricsRegistry } from '../../metrics/create-metrics-registry.js';
import { FakeClient } from '../../testing/fake-client/fake-client.js';
import { Sharder } from '../sharder.js';
import { Sharding } from '../sharding.js';
import { registerShardingMetrics } from '../sharding-metrics.js';
import { resolveShardingOptions, shardLabel } from '../sharding-options.js';
import type { ReconcileInterval } from './reconcile-intervals.js';

const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };
const RING = 'db';
export const SIMULATION_TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
export const SIMULATION_KEYS = 16;
const SIMULATED_MS = 30_000;
/** API latency of every call, uniform in [MIN, MAX] ms of fake time. */
const MIN_LATENCY_MS = 1;
const MAX_LATENCY_MS = 5;

export interface SimulationResult {
  readonly intervals: ReconcileInterval[];
  readonly partitions: number;
  readonly joins: number;
  /** Keys reconciled after the final change, once the ring settled. */
  readonly reconciledAtEnd: number;
  /** Every member and sharder stopped within 120 s of fake time after being told to. */
  readonly stopped: boolean;
  /**
   * Everything that happened, in order, with its fake time: faults, every API call of every member
   * and sharder with its outcome, reconcile starts and ends, and the final state of every object.
   * Equal for two runs of one seed.
   */
  readonly trace: string[];
}

/** `api` as one actor sees it: every call takes a little fake time; while partitioned, every new request fails. */
function network(
  api: FakeClient,
  who: string,
  clock: FakeClock,
  random: () => number,
  trace: string[],
): { client: Client; setPartitioned(on: boolean): void } {
  let partitioned = false;
  const cut = (): ApiError => new ApiError({ status: 503, message: 'partitioned' });
  const note = (line: string): void => {
    trace.push(`${clock.monotonicNow()} ${who} ${line}`);
  };
  const client = new Proxy(api, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      const kind = (args: unknown[]): string => {
        const type = args[0] as { kind?: string; metadata?: { name?: string } } | undefined;
        const name = typeof args[1] === 'string' ? args[1] : (type?.metadata?.name ?? '');
        return `${type?.kind ?? '?'}/${name}`;
      };
      if (prop === 'watch') {
        // A partitioned watch hangs (no answer, no error) until its caller gives up.
        return (...args: unknown[]) => {
          note(`watch ${kind(args)}${partitioned ? ' (partitioned)' : ''}`);
          if (!partitioned) return method.apply(target, args);
          const signal = (args[1] as { signal?: AbortSignal } | undefined)?.signal;
          return {
            [Symbol.asyncIterator]: () => ({
              next: () =>
                new Promise<IteratorResult<never>>((_resolve, reject) => {
                  if (signal?.aborted) reject(cut());
                  else signal?.addEventListener('abort', () => reject(cut()), { once: true });
                }),
              return: () => Promise.resolve({ done: true as const, value: undefined }),
            }),
          };
        };
      }
      if (prop === 'listPages') {
        // An async generator: its pages are not delayed, and a partition fails the first one.
        return (...args: unknown[]) => {
          note(`listPages ${kind(args)}${partitioned ? ' (partitioned)' : ''}`);
          if (!partitioned) return method.apply(target, args);
          return (async function* () {
            yield* [];
            throw cut();
          })();
        };
      }
      return async (...args: unknown[]) => {
        const what = `${String(prop)} ${kind(args)}`;
        if (partitioned) {
          note(`${what} -> partitioned`);
          throw cut();
        }
        const options = args.find(
          (a): a is { signal?: AbortSignal } => typeof a === 'object' && a !== null && 'signal' in a,
        );
        // Half the latency on the way there, half on the way back.
        const latencyMs = MIN_LATENCY_MS + Math.floor(random() * (MAX_LATENCY_MS - MIN_LATENCY_MS + 1));
        try {
          await sleep(clock, Math.floor(latencyMs / 2), options?.signal);
          const result = await method.apply(target, args);
          await sleep(clock, Math.ceil(latencyMs / 2), options?.signal);
          const rv = (result as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion;
          note(`${what} -> ok${rv ? ` rv=${rv}` : ''}`);
          return result;
        } catch (err) {
          note(
            `${what} -> ${err instanceof ApiError ? err.status : err instanceof OperatorRuntimeError ? err.code : 'error'}`,
          );
          throw err;
        }
      };
    },
  });
  return { client, setPartitioned: (on) => (partitioned = on) };
}

interface Member {
  readonly name: string;
  readonly net: ReturnType<typeof network>;
  readonly stop: AbortController;
  readonly done: Promise<void>;
  /** Its ring membership ended (fenced, or stopped). */
  ended: boolean;
}

/** One run of the simulation; the same seed gives the same run (and trace). */
export async function simulateShardingProtocol(seed: number): Promise<SimulationResult> {
  const rnd = seededRandom(seed);
  // Each actor draws from its own stream, so one actor's extra draws do not shift every other's.
  const stream = (): (() => number) => seededRandom(Math.floor(rnd() * 2 ** 32));
  const clock = new FakeClock();
  const api = new FakeClient({
    clock,
    objects: Array.from({ length: SIMULATION_KEYS }, (_, i) => ({
      ...CONFIGMAP,
      metadata: { name: `k${i}`, namespace: 'default' },
      data: { v: '0' },
    })),
  });
  const trace: string[] = [];
  const event = (line: string): void => {
    trace.push(`${clock.monotonicNow()} ${line}`);
  };
  const intervals: ReconcileInterval[] = [];
  const members: Member[] = [];
  let next = 0;
  let partitions = 0;

  const join = (): void => {
    const name = `m${next++}`;
    const net = network(api, name, clock, stream(), trace);
    const sharding = new Sharding(
      { ring: RING, namespace: 'ops', identity: name, mode: 'label', ...SIMULATION_TIMINGS },
      { client: net.client, clock, logger: silentLogger, registry: createMetricsRegistry(), random: stream() },
    );
    event(`join ${name} as ${sharding.memberId}`);
    const gate = sharding.gateFor(CONFIGMAP);
    const stop = new AbortController();
    const informerRandom = stream();
    const reconcileRandom = stream();
    const done = sharding
      .runMember(stop.signal, async (memberSignal) => {
        const informer = new SharedInformer<KubeObject>(
          clientListerWatcher(net.client, { ...CONFIGMAP, labelSelector: `${shardLabel(RING)}=${sharding.memberId}` }),
          { clock, random: informerRandom },
        );
        const controller = new Controller({
          name,
          clock,
          maxConcurrentReconciles: 2,
          reconciler: gate.wrap({
            reconcile: async (req, ctx) => {
              const interval: ReconcileInterval = {
                key: `${req.namespace}/${req.name}`,
                replica: name,
                startMs: clock.monotonicNow(),
                endMs: Infinity,
              };
              intervals.push(interval);
              event(`${name} reconcile ${interval.key} starts`);
              try {
                await sleep(clock, Math.floor(reconcileRandom() * 400), ctx.signal);
              } catch {
                // Aborted (fenced or stopping): the reconcile returns now.
              } finally {
                interval.endMs = clock.monotonicNow();
                event(`${name} reconcile ${interval.key} ends`);
              }
            },
          }),
        });
        const enqueue = (obj: KubeObject): void => controller.queue.add(keyOf(obj));
        informer.addEventHandler({ add: enqueue, update: (_o, obj) => enqueue(obj), delete: enqueue });
        const running = informer.start(memberSignal);
        const detach = gate.attach([informer], memberSignal, (key) => controller.queue.add(key));
        try {
          await controller.start(memberSignal);
        } finally {
          detach();
          await running;
        }
      })
      .catch((err: unknown) => {
        // A partitioned member loses its ring membership: that is the point.
        event(`${name} ended: ${err instanceof OperatorRuntimeError ? err.code : String(err)}`);
      })
      .then(() => {
        member.ended = true;
        event(`${name} stopped`);
      });
    const member: Member = { name, net, stop, done, ended: false };
    members.push(member);
  };

  // Two sharders part of the time: the protocol must not need a single writer to be safe.
  let sharderCount = 0;
  const startSharder = (): { stop: AbortController; done: Promise<void> } => {
    const name = `sharder${sharderCount++}`;
    event(`start ${name}`);
    const random = stream();
    const registry = createMetricsRegistry();
    const sharding = resolveShardingOptions(
      { ring: RING, namespace: 'ops', identity: name, mode: 'label', ...SIMULATION_TIMINGS },
      random,
    );
    const { metrics } = registerShardingMetrics(registry, {
      ring: RING,
      mode: () => 'label',
      ownedByKind: () => new Map(),
    });
    const { client } = network(api, name, clock, stream(), trace);
    const stop = new AbortController();
    const sharder = new Sharder({
      client,
      leaseClient: client,
      sharding,
      kinds: () => [CONFIGMAP],
      clock,
      logger: silentLogger,
      registry,
      metrics,
      mode: async () => 'label',
      random,
    });
    return { stop, done: sharder.start(stop.signal) };
  };
  const sharders = [startSharder()];

  for (let i = 0; i < 3; i++) join();
  let joins = 3;
  for (let t = 0; t < SIMULATED_MS; t += 250) {
    // Writes keep every key busy.
    const k = Math.floor(rnd() * SIMULATION_KEYS);
    event(`write k${k}`);
    await api.patch(CONFIGMAP, `k${k}`, { data: { v: String(t) } }, { type: 'merge', namespace: 'default' });
    const x = rnd();
    const alive = members.filter((m) => !m.ended && !m.stop.signal.aborted);
    if (x < 0.02 && alive.length > 1) {
      // A partition: renewals fail from now on; healed later or never (then it is gone for good).
      const victim = alive[Math.floor(rnd() * alive.length)]!;
      victim.net.setPartitioned(true);
      partitions++;
      const healAfter = 1_000 + Math.floor(rnd() * 6_000);
      event(`partition ${victim.name} for ${healAfter} ms`);
      clock.setTimer(healAfter, () => {
        victim.net.setPartitioned(false);
        event(`heal ${victim.name}`);
      });
    } else if (x < 0.03 && alive.length < 5) {
      join();
      joins++;
    } else if (x < 0.035 && alive.length > 2) {
      // A clean stop: work stops, then the Lease is released.
      const victim = alive[Math.floor(rnd() * alive.length)]!;
      event(`stop ${victim.name}`);
      victim.stop.abort();
    } else if (x < 0.04) {
      if (sharders.length === 1) sharders.push(startSharder());
      else {
        event('stop the second sharder');
        sharders.pop()!.stop.abort();
      }
    }
    // A member that fenced itself has stopped for good (its manager would exit): a new one replaces it.
    if (members.filter((m) => !m.ended && !m.stop.signal.aborted).length < 2) {
      join();
      joins++;
    }
    if (process.env.SAFETY_TRACE)
      process.stderr.write(
        `t=${t} alive=${members.filter((m) => !m.ended && !m.stop.signal.aborted).length} intervals=${intervals.length}\n`,
      );
    await clock.advance(250);
  }
  // Quiet period: heal everything, let the ring settle, then change every key once.
  event('heal all');
  for (const m of members) m.net.setPartitioned(false);
  await clock.advance(4 * SIMULATION_TIMINGS.leaseDurationMs);
  const settleFrom = clock.monotonicNow();
  event('final writes');
  for (let k = 0; k < SIMULATION_KEYS; k++)
    await api.patch(CONFIGMAP, `k${k}`, { data: { v: 'final' } }, { type: 'merge', namespace: 'default' });
  await clock.advance(2 * SIMULATION_TIMINGS.leaseDurationMs);
  const reconciledAtEnd = new Set(intervals.filter((i) => i.startMs >= settleFrom).map((i) => i.key)).size;

  event('stop all');
  for (const m of members) m.stop.abort();
  for (const s of sharders) s.stop.abort();
  let stopped = false;
  void Promise.all([...members.map((m) => m.done), ...sharders.map((s) => s.done)]).then(() => (stopped = true));
  // Stopping takes fake time too (graceful shutdown, bounded waits): advance until all stopped.
  for (let i = 0; i < 120 && !stopped; i++) await clock.advance(1_000);
  await flushMicrotasks();
  for (const type of [CONFIGMAP, LEASE])
    for (const obj of (await api.list(type)).items)
      event(
        `final ${type.kind}/${obj.metadata?.name} rv=${obj.metadata?.resourceVersion} ${JSON.stringify(obj.metadata?.labels ?? {})}`,
      );
  return { intervals, partitions, joins, reconciledAtEnd, stopped, trace };
}
