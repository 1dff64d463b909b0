/**
 * Small helpers shared by the cache's integration tests and benchmark: poll a condition (instead of
 * sleeping), point a kubeconfig at a proxy, and compare a cache with what the server holds.
 */
import type { KubeObject } from '../../core/object-key.js';
import type { KubeconfigObject } from '../../testing/control-plane/test-env.js';
import { keyOf } from '../../core/object-key.js';

/** Polls `cond` every `everyMs` until it holds; rejects with `what` after `timeoutMs`. */
export async function until(
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 25,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The same kubeconfig with every cluster's server moved to `127.0.0.1:<port>` (TLS still verified). */
export function viaPort(kubeconfig: KubeconfigObject, port: number): KubeconfigObject {
  return {
    ...kubeconfig,
    clusters: kubeconfig.clusters.map((c) => ({
      ...c,
      cluster: { ...c.cluster, server: `https://127.0.0.1:${port}` },
    })),
  };
}

/** key → resourceVersion, sorted by key: what "object for object" compares first. */
export function versions(objects: Iterable<KubeObject>): Record<string, string | undefined> {
  const out: [string, string | undefined][] = [];
  for (const o of objects) out.push([keyOf(o), o.metadata?.resourceVersion]);
  out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return Object.fromEntries(out);
}

/** The object as the cache keeps it by default: `managedFields` dropped. */
export function withoutManagedFields<T extends KubeObject>(o: T): T {
  if (!o.metadata || !('managedFields' in o.metadata)) return o;
  const { managedFields: _dropped, ...metadata } = o.metadata;
  return { ...o, metadata };
}
