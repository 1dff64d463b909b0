/**
 * The API server's write ceiling on this machine, measured the way the operator writes most: status
 * updates of Databases, from one client with many requests in flight, with no operator running. The
 * rate no number of replicas can exceed, so a sharded operator's speed-up is read against it.
 */
import type { KubeClient } from 'operator-runtime';
import { DATABASE } from '../../src/database.js';
import { createDatabases, databaseNames, forEachConcurrently } from './database-fleet.js';

export interface WriteCeilingOptions {
  readonly namespace: string;
  /** Databases written round-robin (each write is conditioned on nothing, so no conflicts). @defaultValue 64 */
  readonly objects?: number;
  /** Requests in flight. @defaultValue 32 */
  readonly concurrency?: number;
  /** @defaultValue 10_000 */
  readonly durationMs?: number;
}

export interface WriteCeiling {
  readonly writesPerSecond: number;
  readonly writes: number;
  readonly failed: number;
  readonly durationMs: number;
  readonly concurrency: number;
}

/** Creates the Databases, writes their status as fast as the server takes it, then deletes them. */
export async function measureStatusWriteCeiling(
  admin: KubeClient,
  options: WriteCeilingOptions,
): Promise<WriteCeiling> {
  const { namespace } = options;
  const concurrency = options.concurrency ?? 32;
  const durationMs = options.durationMs ?? 10_000;
  const names = databaseNames('ceiling', options.objects ?? 64);
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }).catch(() => undefined);
  await createDatabases(admin, namespace, names);
  let writes = 0;
  let failed = 0;
  let next = 0;
  const start = Date.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const name = names[next++ % names.length]!;
        try {
          await admin.patchStatus(
            DATABASE,
            name,
            { status: { endpoint: `ceiling-${next}` } },
            { namespace, type: 'merge' },
          );
          writes++;
        } catch {
          failed++;
        }
      }
    }),
  );
  const elapsed = Date.now() - start;
  await forEachConcurrently(names, 16, async (name) => {
    await admin.delete(DATABASE, name, { namespace }).catch(() => undefined);
  });
  return { writesPerSecond: (writes * 1000) / elapsed, writes, failed, durationMs: elapsed, concurrency };
}

/**
 * The same measurement with ConfigMap patches, for a bed whose operators are running: they do not
 * watch these ConfigMaps (no managed-by label), so the loop measures the API server alone.
 */
export async function measureConfigMapWriteCeiling(
  admin: KubeClient,
  options: WriteCeilingOptions,
): Promise<WriteCeiling> {
  const { namespace } = options;
  const concurrency = options.concurrency ?? 32;
  const durationMs = options.durationMs ?? 10_000;
  const names = databaseNames('ceiling', options.objects ?? 64);
  const type = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }).catch(() => undefined);
  await forEachConcurrently(names, 16, async (name) => {
    await admin
      .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { n: '0' } })
      .catch(() => undefined);
  });
  let writes = 0;
  let failed = 0;
  let next = 0;
  const start = Date.now();
  const end = start + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const name = names[next++ % names.length]!;
        try {
          await admin.patch(type, name, { data: { n: String(next) } }, { namespace, type: 'merge' });
          writes++;
        } catch {
          failed++;
        }
      }
    }),
  );
  const elapsed = Date.now() - start;
  return { writesPerSecond: (writes * 1000) / elapsed, writes, failed, durationMs: elapsed, concurrency };
}
