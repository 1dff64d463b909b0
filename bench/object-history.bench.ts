/**
 * Heap per remembered reconcile of the console's per-object history: 20,000 reconciles over 1,000
 * objects (20 each), without writes and with one ConfigMap patch each (a typical diff), measured
 * as heapUsed after a full GC, beside the history's own estimate (what `maxBytes` bounds).
 *
 *   node --expose-gc --import tsx bench/object-history.bench.ts
 */
import { randomUUID } from 'node:crypto';
import { ObjectHistory, type HistoryReconcile } from '../src/console/object-history.js';
import type { ObjectWrite } from '../src/console/reconcile-writes.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const OBJECTS = 1_000;
const PER_OBJECT = 20;
const TRIGGER = Object.freeze({
  type: 'event',
  source: 'for',
  kind: 'Database',
  listed: false,
}) as HistoryReconcile['trigger'];

function measure(label: string, writes: () => ObjectWrite[]): void {
  gc!();
  const before = process.memoryUsage().heapUsed;
  const history = new ObjectHistory({ reconcilesPerObject: PER_OBJECT, maxObjects: OBJECTS, maxBytes: 1 << 30 });
  for (let i = 0; i < OBJECTS * PER_OBJECT; i++)
    history.record('database', `default/db-${i % OBJECTS}`, {
      reconcileID: randomUUID(),
      trigger: TRIGGER,
      startedAtMs: Date.now(),
      durationMs: Math.random() * 20,
      result: 'success',
      writes: writes(),
      omittedWrites: 0,
    });
  gc!();
  const measured = (process.memoryUsage().heapUsed - before) / (OBJECTS * PER_OBJECT);
  const stats = history.stats();
  console.log(
    JSON.stringify({
      case: label,
      reconciles: stats.reconciles,
      measuredBytesPerReconcile: Math.round(measured),
      estimatedBytesPerReconcile: Math.round(stats.estimatedBytes / stats.reconciles),
    }),
  );
}

measure('no writes', () => []);
measure('one ConfigMap patch', () => [
  {
    verb: 'patch',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'default',
    name: `db-config`,
    dryRun: false,
    diff: {
      data: {
        'postgresql.conf': `listen_addresses = '*'\nmax_connections = ${Math.round(Math.random() * 100)}\nshared_buffers = 128MB\n`,
      },
    },
  },
]);
