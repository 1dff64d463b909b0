/**
 * Shared by the helpers' integration tests: a namespace factory, request counting from the real
 * client's `rest_client_requests_total`, and polling for what the control plane does on its own.
 */
import type { Registry } from 'prom-client';
import type { Client } from '../../client/client.js';
import { isNoKindMatch } from '../../client/discovery.js';
export { GIZMO, GIZMO_CRD, gizmo, type Gizmo } from './gizmo.js';

let nsCounter = 0;

export async function createNamespace(client: Client, prefix: string): Promise<string> {
  const name = `${prefix}-${++nsCounter}`;
  try {
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  } catch (err) {
    // The CRD-only 1.36 server has no Namespace kind: there a namespace is just a name.
    if (!isNoKindMatch(err)) throw err;
  }
  return name;
}

/** The servers the helpers' custom-resource-only tests run against (TestEnvOptions.server). */
export const SERVERS = ['kube-apiserver', 'modern'] as const;

export function serverLabel(server: (typeof SERVERS)[number]): string {
  return server === 'modern' ? 'the Kubernetes 1.36 CRD-only API server' : 'Kubernetes 1.20';
}

/** Requests counted by the real client's metrics, by method (every attempt, retries included). */
export async function requestCounts(registry: Registry): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('rest_client_requests_total');
  const out: Record<string, number> = {};
  if (!metric) return out;
  for (const v of (await metric.get()).values) {
    const method = String(v.labels.method);
    out[method] = (out[method] ?? 0) + v.value;
  }
  return out;
}

export async function writeCount(registry: Registry): Promise<number> {
  const c = await requestCounts(registry);
  return (c.POST ?? 0) + (c.PUT ?? 0) + (c.PATCH ?? 0) + (c.DELETE ?? 0);
}

export async function eventually<T>(what: string, fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`timed out: ${what}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** 409 answers seen by the real client: proof that a "concurrent" test really raced. */
export async function conflictCount(registry: Registry): Promise<number> {
  const metric = registry.getSingleMetric('rest_client_requests_total');
  if (!metric) return 0;
  return (await metric.get()).values.filter((v) => v.labels.code === '409').reduce((n, v) => n + v.value, 0);
}
