/**
 * What each operator replica of the bed records (testing/recorded-main.ts appends one JSON line per
 * record to its replica's file; timestamps from the one machine clock all replicas share): every
 * finished reconcile, as the controller's observer gives it, and every Database status write, as
 * the recording client sees it. Turned here into the figures the chaos and sharding evidence
 * needs: overlapping reconciles of one key, who reconciled what, when each key was first picked up
 * after an instant, and reconcile rates.
 *
 * A reconcile is recorded when it ends (the observer is told then): one that a kill -9 cut short
 * leaves no record. It could only have overlapped reconciles that began before the kill, by
 * replicas running beside it, whose own finished records show such an overlap too.
 */
import { readFile } from 'node:fs/promises';
import type { ReconcileRecord } from 'operator-runtime/controller';
import { overlappingPairs } from '../../../src/core/testing/overlaps.js';

/** A finished reconcile by one replica: the controller's observer record (less the error itself) and who ran it. */
export interface ReplicaReconcile extends Omit<ReconcileRecord, 'error'> {
  readonly type: 'reconcile';
  readonly replica: string;
}

/** A status write that landed: the resourceVersion it was conditioned on and the one it produced (the etcd audit's input). */
export interface ReplicaStatusWrite {
  readonly type: 'status-write';
  /** When the write was answered (ms since the epoch). */
  readonly t: number;
  readonly replica: string;
  /** `namespace/name` of the Database. */
  readonly key: string;
  readonly read: string;
  readonly written: string;
}

export type ReplicaRecord = ReplicaReconcile | ReplicaStatusWrite;

/** One reconcile of `key` by `replica`, in ms since the epoch. */
export interface ReconcileInterval {
  readonly replica: string;
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

/** Two reconciles of one key that ran at the same time. */
export interface Overlap {
  readonly key: string;
  readonly first: ReconcileInterval;
  readonly second: ReconcileInterval;
}

/** Reads and merges the records of every file (a missing file has none), sorted by time. */
export async function readRecords(files: readonly string[]): Promise<ReplicaRecord[]> {
  const all: ReplicaRecord[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => ''); // a replica that never started wrote nothing
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        all.push(JSON.parse(line) as ReplicaRecord);
      } catch {
        // a line torn by kill -9 mid-write: that reconcile is lost with the process
      }
    }
  }
  return all.sort((a, b) => timeOf(a) - timeOf(b));
}

/** When a record's event began: a reconcile's start, a status write's answer. */
export function timeOf(record: ReplicaRecord): number {
  return record.type === 'reconcile' ? record.startedAtMs : record.t;
}

/** The reconciles among `records`. */
export function reconciles(records: readonly ReplicaRecord[]): ReplicaReconcile[] {
  return records.filter((r): r is ReplicaReconcile => r.type === 'reconcile');
}

/** The status writes among `records`. */
export function statusWrites(records: readonly ReplicaRecord[]): ReplicaStatusWrite[] {
  return records.filter((r): r is ReplicaStatusWrite => r.type === 'status-write');
}

/**
 * Each reconcile as the interval it ran, to the ms, sorted by start. `startedAtMs` is the wall clock
 * in whole ms (the reconcile began up to 1 ms after it) and `durationMs` is exact, so the end is
 * rounded down: the next reconcile of a key, which starts after this one ended, never seems to overlap it.
 */
export function reconcileIntervals(records: readonly ReplicaRecord[]): ReconcileInterval[] {
  return reconciles(records)
    .map((r) => ({
      replica: r.replica,
      key: r.key,
      start: r.startedAtMs,
      end: r.startedAtMs + Math.floor(r.durationMs),
    }))
    .sort((a, b) => a.start - b.start);
}

/** Every pair of reconciles of one key whose intervals intersect (any replicas, the same one included). */
export function findOverlaps(intervals: readonly ReconcileInterval[]): Overlap[] {
  return overlappingPairs(intervals, (i) => i.key).map(([first, second]) => ({ key: first.key, first, second }));
}

/** Every pair of reconciles by two different replicas that intersect, whatever their keys: two leaders at work. */
export function crossReplicaOverlaps(
  intervals: readonly ReconcileInterval[],
): [ReconcileInterval, ReconcileInterval][] {
  return overlappingPairs(intervals).filter(([a, b]) => a.replica !== b.replica);
}

/** Reconciles started per replica. */
export function startsByReplica(records: readonly ReplicaRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of reconciles(records)) counts.set(r.replica, (counts.get(r.replica) ?? 0) + 1);
  return counts;
}

/** The replica that last started a reconcile of each key at or before `at`. */
export function lastReconcilerByKey(records: readonly ReplicaRecord[], at = Infinity): Map<string, string> {
  const owners = new Map<string, string>();
  for (const r of reconciles(records)) if (r.startedAtMs <= at) owners.set(r.key, r.replica);
  return owners;
}

/**
 * For each of `keys`: the first reconcile started after `since` by a replica other than `excluded`,
 * or undefined when there was none.
 */
export function firstPickUp(
  records: readonly ReplicaRecord[],
  keys: Iterable<string>,
  since: number,
  excluded: string,
): Map<string, ReplicaReconcile | undefined> {
  const wanted = new Set(keys);
  const found = new Map<string, ReplicaReconcile | undefined>([...wanted].map((k) => [k, undefined]));
  for (const r of reconciles(records)) {
    if (r.startedAtMs < since || r.replica === excluded || !wanted.has(r.key) || found.get(r.key)) continue;
    found.set(r.key, r);
  }
  return found;
}

/** A one-line description of an overlap for assertion messages. */
export function describeOverlap(o: Overlap): string {
  const side = (i: ReconcileInterval): string => `${i.replica} [${i.start}, ${i.end}]`;
  return `${o.key}: ${side(o.first)} and ${side(o.second)}`;
}
