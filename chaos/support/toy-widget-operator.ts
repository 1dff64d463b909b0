/**
 * A stand-in workload for the smoke scenario until the reference Database operator is wired in:
 * a "user" that keeps changing Widget specs, and a one-worker status reconciler that sets
 * `status.observedGeneration` with the resourceVersion it read (a 409 means: re-read next round).
 * Both record what they wrote, for the consistency audit and the results table.
 */
import { KubeClient, isConflict, type Kubeconfig } from 'operator-runtime';
import type { KubeconfigObject } from 'operator-runtime/testing';
import { registryKey, type RecordedWrite } from 'operator-runtime/testing/chaos';

export const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
export const WIDGET_PREFIX = '/registry/example.com/widgets/';

export interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string; generation: number };
  spec: { size: number };
  status?: { observedGeneration?: number; message?: string };
}

export interface ToyWidgetOperatorOptions {
  readonly kubeconfig: KubeconfigObject;
  readonly namespace?: string;
  /** Pause between reconcile rounds. @defaultValue 100 */
  readonly periodMs?: number;
}

/** Client settings for both loops: short per-request timeouts so a stalled etcd shows as errors. */
async function chaosClient(kubeconfig: KubeconfigObject): Promise<KubeClient> {
  return KubeClient.fromKubeconfig({
    kubeconfig: kubeconfig as unknown as Kubeconfig,
    requestTimeoutMs: 5000,
    backoff: { maxAttempts: 3, initialMs: 50, maxMs: 500 },
  });
}

export class ToyStatusReconciler {
  readonly writes: RecordedWrite[] = [];
  apiWrites = 0;
  conflicts = 0;
  errors = 0;

  constructor(private readonly options: ToyWidgetOperatorOptions) {}

  async start(signal: AbortSignal): Promise<void> {
    const client = await chaosClient(this.options.kubeconfig);
    const namespace = this.options.namespace ?? 'default';
    try {
      while (!signal.aborted) {
        try {
          const { items } = await client.list<Widget>(WIDGET, { namespace, signal });
          for (const w of items) {
            if (signal.aborted) break;
            if (w.status?.observedGeneration === w.metadata.generation) continue;
            const next = {
              ...w,
              status: { observedGeneration: w.metadata.generation, message: `size ${w.spec.size}` },
            };
            this.apiWrites++;
            try {
              const written = await client.update(next, { subresource: 'status', signal });
              this.writes.push({
                key: registryKey(WIDGET_PREFIX, namespace, w.metadata.name),
                readRevision: w.metadata.resourceVersion,
                writtenRevision: written.metadata.resourceVersion,
                writer: 'toy-reconciler',
              });
            } catch (err) {
              if (isConflict(err)) this.conflicts++;
              else throw err;
            }
          }
        } catch {
          if (signal.aborted) break;
          this.errors++;
        }
        await sleep(this.options.periodMs ?? 100, signal);
      }
    } finally {
      await client.close();
    }
  }
}

/** A user changing specs: every `periodMs`, one widget's size changes (round robin). */
export class SpecChurn {
  apiWrites = 0;
  okWrites = 0;
  failedWrites = 0;
  /** Longest time between two successful writes while running (the write stall seen). */
  longestGapMs = 0;

  constructor(private readonly options: ToyWidgetOperatorOptions & { readonly names: readonly string[] }) {}

  async start(signal: AbortSignal): Promise<void> {
    const client = await chaosClient(this.options.kubeconfig);
    const namespace = this.options.namespace ?? 'default';
    let lastOk = Date.now();
    try {
      for (let i = 0; !signal.aborted; i++) {
        const name = this.options.names[i % this.options.names.length]!;
        this.apiWrites++;
        try {
          await client.patch(
            WIDGET,
            name,
            { spec: { size: (Math.floor(i / this.options.names.length) % 10) + 1 } },
            { type: 'merge', namespace, signal },
          );
          this.okWrites++;
          const now = Date.now();
          this.longestGapMs = Math.max(this.longestGapMs, now - lastOk);
          lastOk = now;
        } catch {
          if (signal.aborted) break;
          this.failedWrites++;
        }
        await sleep(this.options.periodMs ?? 100, signal);
      }
    } finally {
      await client.close();
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
