/**
 * Shared by the helpers' integration tests: a Gadget custom resource whose status carries
 * metav1.Condition exactly as the API server validates it (so a malformed condition from our
 * helpers fails the write), a namespace factory, and request counting from the real client's
 * `rest_client_requests_total`.
 */
import type { Registry } from 'prom-client';
import type { Client } from '../client/client.js';
import type { Condition } from './conditions.js';
import type { MetadataLike } from './object-like.js';

export const GADGET = { apiVersion: 'helpers.operator-runtime.dev/v1', kind: 'Gadget' } as const;

export interface Gadget {
  apiVersion: string;
  kind: string;
  metadata: MetadataLike;
  spec: { size: number; color?: string };
  status?: { observedGeneration?: number; message?: string; conditions?: Condition[] };
}

export function gadget(namespace: string, name: string, spec: Gadget['spec'] = { size: 1 }): Gadget {
  return { ...GADGET, metadata: { name, namespace }, spec };
}

const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', maxLength: 316, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
    message: { type: 'string', maxLength: 32768 },
  },
};

export const GADGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.helpers.operator-runtime.dev' },
  spec: {
    group: 'helpers.operator-runtime.dev',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', required: ['size'], properties: { size: { type: 'integer', minimum: 1 }, color: { type: 'string' } } },
              status: {
                type: 'object',
                properties: {
                  observedGeneration: { type: 'integer' },
                  message: { type: 'string' },
                  conditions: { type: 'array', items: conditionSchema, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] },
                },
              },
            },
          },
        },
      },
    ],
  },
};

let nsCounter = 0;

export async function createNamespace(client: Client, prefix: string): Promise<string> {
  const name = `${prefix}-${++nsCounter}`;
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
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
