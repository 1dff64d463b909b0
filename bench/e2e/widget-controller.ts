/**
 * The controller both end-to-end benches measure: every Widget reconciled once per round, each
 * reconcile a cache read and a status merge-patch. One copy, so the CPU bench (stand-in server)
 * and the real-server bench time the same work.
 */
import type { KubeClient } from '../../src/client/kube-client.js';
import { createLogger } from '../../src/logging/create-logger.js';
import { Manager } from '../../src/manager/manager.js';

export const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' };

export interface WidgetRound {
  readonly client: KubeClient;
  readonly objects: number;
  readonly workers: number;
  readonly round: number;
  /** Called at each reconcile's start with how many have started this round (1 for the first). */
  readonly onReconcile?: (started: number) => void;
  /** The controller's `tracing` option (bench/tracing-overhead.bench.ts). @defaultValue the controller's default */
  readonly tracing?: boolean;
  /** The operator console: none, its views without the per-object history, or with it (bench/tracing-overhead.bench.ts). @defaultValue 'none' */
  readonly console?: 'none' | 'views' | 'history';
}

/**
 * Starts a manager with the controller and stops it once every Widget was reconciled; resolves with
 * `performance.now()` at that moment, so a caller's timing leaves the manager's stop out.
 */
export async function runWidgetRound({
  client,
  objects,
  workers,
  round,
  onReconcile,
  tracing,
  console = 'none',
}: WidgetRound): Promise<number> {
  const manager = new Manager({
    client,
    metricsPort: 0,
    healthPort: 0,
    logger: createLogger({ level: 'silent' }),
    ...(console !== 'none' && { console: { port: 0, ...(console === 'views' && { history: false as const }) } }),
  });
  let started = 0;
  let reconciled = 0;
  let allDone!: () => void;
  const finished = new Promise<void>((r) => (allDone = r));
  manager
    .controller('bench')
    .for(WIDGET)
    .withOptions({ maxConcurrentReconciles: workers, ...(tracing !== undefined && { tracing }) })
    .complete(async (req, { signal }) => {
      onReconcile?.(++started);
      const w = await manager.cache.get<{ metadata: { generation: number } }>(WIDGET, req, { signal });
      // Through the manager's client: where a reconciler writes, and what the history observes.
      await manager.apiClient.patchStatus(
        WIDGET,
        req.name,
        { status: { message: `reconciled ${round}`, observedGeneration: w.metadata.generation } },
        { namespace: req.namespace, type: 'merge', signal },
      );
      if (++reconciled === objects) allDone();
    });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  await finished;
  const doneAt = performance.now();
  stop.abort();
  await running;
  return doneAt;
}
