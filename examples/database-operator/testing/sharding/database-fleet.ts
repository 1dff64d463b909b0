/**
 * Many Databases at once for the sharding runs: created and patched with bounded concurrency, and
 * polled until every one is reconciled — its status reflects its current spec
 * (`status.observedGeneration == metadata.generation`) in the phase the bed allows: Ready with
 * kube-controller-manager running, otherwise Provisioning with the owned objects created (the
 * StatefulSet then never reports ready replicas).
 */
import type { KubeClient } from 'operator-runtime';
import { DATABASE, type Database } from '../../src/database.js';

export type Expectation = 'ready' | 'provisioned';

export function databaseNames(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
}

/** Runs `task` over `items`, at most `concurrency` at a time. */
export async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

export async function createDatabases(
  admin: KubeClient,
  namespace: string,
  names: readonly string[],
  concurrency = 16,
): Promise<void> {
  await forEachConcurrently(names, concurrency, async (name) => {
    await admin.create({
      apiVersion: 'example.com/v1',
      kind: 'Database',
      metadata: { name, namespace },
      spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
    });
  });
}

/** A spec change (a new generation) for each named Database. */
export async function setReplicas(
  admin: KubeClient,
  namespace: string,
  names: readonly string[],
  replicas: number,
  concurrency = 16,
): Promise<void> {
  await forEachConcurrently(names, concurrency, async (name) => {
    await admin.patch(DATABASE, name, { spec: { replicas } }, { namespace, type: 'merge' });
  });
}

export function isReconciled(db: Database, expect: Expectation): boolean {
  const s = db.status;
  if (!s || s.observedGeneration !== db.metadata.generation || db.metadata.deletionTimestamp) return false;
  if (expect === 'ready') return s.phase === 'Ready' && s.readyReplicas === db.spec.replicas;
  return (
    (s.phase === 'Provisioning' || s.phase === 'Ready') &&
    (s.conditions ?? []).some((c) => c.type === 'Provisioned' && c.status === 'True')
  );
}

export interface ReconciledWait {
  /** When every Database was first seen reconciled (`Date.now()`), or undefined on timeout. */
  readonly doneAt: number | undefined;
  /** The names not reconciled at the last poll. */
  readonly pending: readonly string[];
}

/** Polls the namespace's Databases until all `count` are reconciled or `timeoutMs` passes. */
export async function waitAllReconciled(
  admin: KubeClient,
  namespace: string,
  count: number,
  options: { readonly expect: Expectation; readonly timeoutMs: number; readonly pollMs?: number },
): Promise<ReconciledWait> {
  const deadline = Date.now() + options.timeoutMs;
  let pending: string[] = [];
  for (;;) {
    try {
      const list = await admin.list(DATABASE, { namespace });
      pending = list.items.filter((d) => !isReconciled(d, options.expect)).map((d) => d.metadata.name);
      if (list.items.length >= count && pending.length === 0) return { doneAt: Date.now(), pending: [] };
    } catch {
      // a failed poll (a partition in the chaos bed reaches no further than the replica): try again
    }
    if (Date.now() > deadline) return { doneAt: undefined, pending };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 1_000));
  }
}
