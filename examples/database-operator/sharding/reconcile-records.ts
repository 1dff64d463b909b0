/**
 * The replicas' reconcile records (one JSON line per reconcile start and end, written by main.ts
 * with RECONCILE_LOG, timestamps from the one machine clock all replicas share) turned into the
 * figures the sharding evidence needs: overlapping reconciles of one key, who reconciled what, when
 * each key was first picked up after an instant, and reconcile rates.
 */
import { readFile } from 'node:fs/promises';

export interface ReconcileRecord {
  readonly t: number;
  readonly replica: string;
  readonly phase: 'start' | 'end' | 'status-write';
  readonly key: string;
  readonly read?: string;
  readonly written?: string;
}

/** One reconcile of `key` by `replica`; `open` when it never ended (the replica was killed, or the log stopped). */
export interface ReconcileInterval {
  readonly replica: string;
  readonly key: string;
  readonly start: number;
  readonly end: number;
  readonly open: boolean;
}

/** Two reconciles of one key that ran at the same time. */
export interface Overlap {
  readonly key: string;
  readonly first: ReconcileInterval;
  readonly second: ReconcileInterval;
}

/** Reads and merges the records of every file (a missing file has none), sorted by time. */
export async function readRecords(files: readonly string[]): Promise<ReconcileRecord[]> {
  const all: ReconcileRecord[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => ''); // a replica that never started wrote nothing
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        all.push(JSON.parse(line) as ReconcileRecord);
      } catch {
        // a line torn by kill -9 mid-write: the reconcile it began is still counted from its start
      }
    }
  }
  return all.sort((a, b) => a.t - b.t);
}

/**
 * Pairs each start with the next end of the same replica and key. A kill of a replica ends every
 * reconcile it had open at the kill instant (a replica restarted under the same name must not have
 * its new ends paired with the dead process's starts). A start still open at the end of the log
 * counts as running until `openUntil` (default: the last record).
 */
export function reconcileIntervals(records: readonly ReconcileRecord[], options: { readonly killedAt?: ReadonlyMap<string, readonly number[]>; readonly openUntil?: number } = {}): ReconcileInterval[] {
  const open = new Map<string, number[]>();
  const out: ReconcileInterval[] = [];
  const kills = [...(options.killedAt ?? new Map<string, readonly number[]>())].flatMap(([replica, times]) => times.map((t) => ({ replica, t }))).sort((a, b) => a.t - b.t);
  let nextKill = 0;
  const killUpTo = (t: number): void => {
    // A kill at the same millisecond as a record comes first only if the record is later: ties go to the record.
    while (nextKill < kills.length && kills[nextKill]!.t < t) {
      const kill = kills[nextKill++]!;
      for (const [id, starts] of open) {
        const [replica, key] = id.split('\u0000') as [string, string];
        if (replica !== kill.replica) continue;
        for (const start of starts) out.push({ replica, key, start, end: kill.t, open: true });
        open.delete(id);
      }
    }
  };
  for (const r of records) {
    if (r.phase === 'status-write') continue;
    killUpTo(r.t);
    const id = `${r.replica}\u0000${r.key}`;
    const starts = open.get(id) ?? [];
    if (r.phase === 'start') {
      starts.push(r.t);
      open.set(id, starts);
    } else {
      const start = starts.shift();
      if (start !== undefined) out.push({ replica: r.replica, key: r.key, start, end: r.t, open: false });
    }
  }
  killUpTo(Infinity);
  const lastT = records.at(-1)?.t ?? 0;
  for (const [id, starts] of open) {
    const [replica, key] = id.split('\u0000') as [string, string];
    for (const start of starts) out.push({ replica, key, start, end: options.openUntil ?? lastT, open: true });
  }
  return out.sort((a, b) => a.start - b.start);
}

/** Every pair of reconciles of one key whose intervals intersect (any replicas, the same one included). */
export function findOverlaps(intervals: readonly ReconcileInterval[]): Overlap[] {
  const byKey = new Map<string, ReconcileInterval[]>();
  for (const i of intervals) {
    const list = byKey.get(i.key) ?? [];
    list.push(i);
    byKey.set(i.key, list);
  }
  const overlaps: Overlap[] = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.start - b.start);
    // Sweep: compare each interval with every earlier one still running at its start.
    const running: ReconcileInterval[] = [];
    for (const i of list) {
      for (let j = running.length - 1; j >= 0; j--) if (running[j]!.end <= i.start) running.splice(j, 1);
      for (const r of running) overlaps.push({ key, first: r, second: i });
      running.push(i);
    }
  }
  return overlaps;
}

/** Reconciles started per replica. */
export function startsByReplica(records: readonly ReconcileRecord[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) if (r.phase === 'start') counts.set(r.replica, (counts.get(r.replica) ?? 0) + 1);
  return counts;
}

/** The replica that last started a reconcile of each key at or before `at`. */
export function lastReconcilerByKey(records: readonly ReconcileRecord[], at = Infinity): Map<string, string> {
  const owners = new Map<string, string>();
  for (const r of records) if (r.phase === 'start' && r.t <= at) owners.set(r.key, r.replica);
  return owners;
}

/**
 * For each of `keys`: the first reconcile start after `since` by a replica other than `excluded`,
 * or undefined when there was none.
 */
export function firstPickUp(records: readonly ReconcileRecord[], keys: Iterable<string>, since: number, excluded: string): Map<string, ReconcileRecord | undefined> {
  const wanted = new Set(keys);
  const found = new Map<string, ReconcileRecord | undefined>([...wanted].map((k) => [k, undefined]));
  for (const r of records) {
    if (r.phase !== 'start' || r.t < since || r.replica === excluded || !wanted.has(r.key) || found.get(r.key)) continue;
    found.set(r.key, r);
  }
  return found;
}

/** A one-line description of an overlap for assertion messages. */
export function describeOverlap(o: Overlap): string {
  const side = (i: ReconcileInterval): string => `${i.replica} [${i.start}, ${i.end}${i.open ? ' open' : ''}]`;
  return `${o.key}: ${side(o.first)} and ${side(o.second)}`;
}
