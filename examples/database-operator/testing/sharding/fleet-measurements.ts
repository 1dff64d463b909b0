/**
 * The measurements the sharding runs share: waiting for the ring to form, a fleet of Databases
 * created and timed to all-reconciled, each replica's cached share, the overlap count from the
 * records, the etcd-history audit, and the machine's load at the moment of measuring.
 */
import { readFile } from 'node:fs/promises';
import { auditConsistency, registryKey, type AuditReport, type RecordedWrite } from 'operator-runtime/testing/chaos';
import { createDatabases, databaseNames, setReplicas, waitAllReconciled, type Expectation } from './database-fleet.js';
import {
  describeOverlap,
  findOverlaps,
  reconcileIntervals,
  startsByReplica,
  statusWrites,
  timeOf,
  type ReplicaRecord,
} from '../replica-records.js';
import { DATABASE_PREFIX, OPERATOR_NAMESPACE, RING, metricValue, type OperatorBed } from '../operator-bed.js';

const RING_LABEL = 'operator-runtime.io/ring';
const MEMBER_LABEL = 'operator-runtime.io/member';

interface MembershipLease {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}

/** `uptime`'s load averages, for the report next to every figure. */
export async function loadAverage(): Promise<string> {
  const text = await readFile('/proc/loadavg', 'utf8').catch(() => '');
  return text.split(' ').slice(0, 3).join(' ');
}

/** The ring's live members as their Leases say: identity → member id (the shard label's value). */
export async function ringMembers(bed: OperatorBed): Promise<Map<string, string>> {
  const leases = await bed.admin.list<MembershipLease>(
    { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' },
    { namespace: OPERATOR_NAMESPACE, labelSelector: `${RING_LABEL}=${RING}` },
  );
  const members = new Map<string, string>();
  for (const l of leases.items) {
    const holder = l.spec?.holderIdentity;
    const renewed = l.spec?.renewTime ? Date.parse(l.spec.renewTime) : 0;
    if (holder && Date.now() - renewed < bed.leaseDurationMs)
      members.set(holder, l.metadata.labels?.[MEMBER_LABEL] ?? '');
  }
  return members;
}

/**
 * Waits until exactly the running replicas hold fresh membership Leases, then two retry periods
 * more so every member has seen the others.
 */
export async function waitForRing(bed: OperatorBed, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const want = bed.running().sort();
    const have = [...(await ringMembers(bed)).keys()].sort();
    if (JSON.stringify(want) === JSON.stringify(have)) break;
    if (Date.now() > deadline)
      throw new Error(`ring did not form: running ${want.join(',')}, fresh Leases ${have.join(',')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  await new Promise((r) => setTimeout(r, 2 * bed.retryPeriodMs));
}

export interface FleetFigures {
  readonly databases: number;
  readonly replicas: readonly string[];
  /** From the first write (create or spec change) to the last one answered. */
  readonly createMs: number;
  /** From the first write until every Database was seen reconciled; null on timeout. */
  readonly allReconciledMs: number | null;
  /** Databases reconciled per second over `allReconciledMs`. */
  readonly databasesPerSecond: number | null;
  /** Reconciles started per second (all replicas) over the same window. */
  readonly reconcilesPerSecond: number | null;
  readonly reconcilesByReplica: Readonly<Record<string, number>>;
  /** Write requests (non-GET) the replicas made per second over the window, from their rest_client metrics. */
  readonly operatorWritesPerSecond: number | null;
  /** Requests answered 409 Conflict per running replica so far (a write raced another writer). */
  readonly conflictsByReplica: Readonly<Record<string, number>>;
  readonly pending: readonly string[];
  readonly load: string;
}

/**
 * Creates `count` Databases in `namespace` while the bed's replicas run, and times them to
 * all-reconciled. The rate is what the replicas sustain with objects arriving as fast as one
 * client creates them.
 */
export async function measureFleet(
  bed: OperatorBed,
  options: {
    readonly namespace: string;
    readonly count: number;
    readonly expect: Expectation;
    readonly timeoutMs: number;
  },
): Promise<FleetFigures> {
  await bed.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: options.namespace } });
  return measureWave(bed, {
    ...options,
    write: () => createDatabases(bed.admin, options.namespace, databaseNames('db', options.count), 16),
  });
}

/**
 * A spec change to every one of the `count` Databases already reconciled in `namespace` (a new
 * generation each), timed to all-reconciled: the replicas' rate on objects already assigned, with no
 * assignment in the way.
 */
export async function measureSpecWave(
  bed: OperatorBed,
  options: {
    readonly namespace: string;
    readonly count: number;
    readonly replicas: number;
    readonly expect: Expectation;
    readonly timeoutMs: number;
  },
): Promise<FleetFigures> {
  return measureWave(bed, {
    ...options,
    write: () => setReplicas(bed.admin, options.namespace, databaseNames('db', options.count), options.replicas, 16),
  });
}

async function measureWave(
  bed: OperatorBed,
  options: {
    readonly namespace: string;
    readonly count: number;
    readonly expect: Expectation;
    readonly timeoutMs: number;
    readonly write: () => Promise<void>;
  },
): Promise<FleetFigures> {
  const { namespace, count } = options;
  const load = await loadAverage();
  const writesBefore = await replicaWrites(bed);
  const t0 = Date.now();
  await options.write();
  const createMs = Date.now() - t0;
  const wait = await waitAllReconciled(bed.admin, namespace, count, {
    expect: options.expect,
    timeoutMs: options.timeoutMs,
    pollMs: 500,
  });
  const window = wait.doneAt === undefined ? null : wait.doneAt - t0;
  const writes = (await replicaWrites(bed)) - writesBefore;
  const records = (await bed.records()).filter(
    (r) => timeOf(r) >= t0 && timeOf(r) <= (wait.doneAt ?? Infinity) && r.key.startsWith(`${namespace}/`),
  );
  const byReplica = startsByReplica(records);
  const starts = [...byReplica.values()].reduce((a, b) => a + b, 0);
  return {
    databases: count,
    replicas: bed.running(),
    createMs,
    allReconciledMs: window,
    databasesPerSecond: window === null ? null : round((count * 1000) / window),
    reconcilesPerSecond: window === null ? null : round((starts * 1000) / window),
    reconcilesByReplica: Object.fromEntries(byReplica),
    operatorWritesPerSecond: window === null ? null : round((writes * 1000) / window),
    conflictsByReplica: await replicaConflicts(bed),
    pending: wait.pending.slice(0, 20),
    load,
  };
}

/** Write requests the running replicas made so far (a replica's own counter; one killed meanwhile is not counted). */
async function replicaWrites(bed: OperatorBed): Promise<number> {
  let sum = 0;
  for (const name of bed.running()) {
    const text = await bed.metrics(name).catch(() => '');
    sum += metricValue(text, 'rest_client_requests_total', (labels) => !/method="GET"/.test(labels)) ?? 0;
  }
  return sum;
}

async function replicaConflicts(bed: OperatorBed): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of bed.running()) {
    const text = await bed.metrics(name).catch(() => '');
    out[name] = metricValue(text, 'rest_client_requests_total', (labels) => /code="409"/.test(labels)) ?? 0;
  }
  return out;
}

export interface CacheSplit {
  /** Databases in each running replica's caches, all its Database informers together. */
  readonly cached: Readonly<Record<string, number>>;
  /** Of those, the ones in its shard informer (label selector on the shard label). */
  readonly inShard: Readonly<Record<string, number>>;
  /** Of those, the ones in any other Database informer (an unfiltered one holds every Database). */
  readonly outsideShard: Readonly<Record<string, number>>;
  /** Largest relative deviation of `cached` from expected/N, e.g. 0.04 for 4%. */
  readonly maxDeviation: number;
  /** The same for `inShard`. */
  readonly maxShardDeviation: number;
  /** Sum of `inShard` over the replicas: `expected` when each Database is in exactly one shard. */
  readonly shardTotal: number;
  /** Every informer's object count per replica (the owned kinds' informers are not divided). */
  readonly informers: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/**
 * Each running replica's cached Database counts, once the shard informers add up to `expected`
 * (every object in exactly one replica's shard) or `timeoutMs` passed.
 */
export async function cacheSplit(bed: OperatorBed, expected: number, timeoutMs = 60_000): Promise<CacheSplit> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const names = bed.running();
    const cached: Record<string, number> = {};
    const inShard: Record<string, number> = {};
    const outsideShard: Record<string, number> = {};
    for (const n of names) {
      const c = await bed.cachedDatabases(n).catch(() => ({ shard: 0, other: 0 }));
      cached[n] = c.shard + c.other;
      inShard[n] = c.shard;
      outsideShard[n] = c.other;
    }
    const share = expected / names.length;
    const deviation = (values: number[]): number =>
      round(Math.max(...values.map((v) => Math.abs(v - share) / share)), 3);
    const shardTotal = Object.values(inShard).reduce((a, b) => a + b, 0);
    if (shardTotal === expected || Date.now() > deadline) {
      const informers: Record<string, Record<string, number>> = {};
      for (const n of names) informers[n] = informerSizes(await bed.metrics(n).catch(() => ''));
      return {
        cached,
        inShard,
        outsideShard,
        maxDeviation: deviation(Object.values(cached)),
        maxShardDeviation: deviation(Object.values(inShard)),
        shardTotal,
        informers,
      };
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** `cache_objects` per informer name. */
function informerSizes(metricsText: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metricsText.matchAll(/^cache_objects\{informer="([^"]*)"\}\s+(\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

export interface OverlapFigures {
  readonly reconciles: number;
  readonly overlaps: number;
  readonly examples: readonly string[];
}

export function overlapFigures(records: readonly ReplicaRecord[]): OverlapFigures {
  const intervals = reconcileIntervals(records);
  const overlaps = findOverlaps(intervals);
  return {
    reconciles: intervals.length,
    overlaps: overlaps.length,
    examples: overlaps.slice(0, 5).map(describeOverlap),
  };
}

/** The etcd-history audit of every Database write since `startRevision`, with the replicas' recorded status writes. */
export async function auditDatabases(
  bed: OperatorBed,
  startRevision: number,
  records: readonly ReplicaRecord[],
): Promise<AuditReport> {
  const writes: RecordedWrite[] = statusWrites(records).map((r) => {
    const [ns, name] = r.key.split('/') as [string, string];
    return {
      key: registryKey(DATABASE_PREFIX, ns, name),
      readRevision: r.read,
      writtenRevision: r.written,
      writer: r.replica,
    };
  });
  return auditConsistency({ etcd: bed.env, prefix: DATABASE_PREFIX, startRevision, writes, timeoutMs: 600_000 });
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
