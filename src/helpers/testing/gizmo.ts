/**
 * The Gizmo custom resource of the helpers' tests (unit tests on the fake client and integration
 * tests on TestEnv): its status carries metav1.Condition exactly as the API server validates it,
 * so a malformed condition from our helpers fails the write.
 */
import type { Condition } from '../conditions.js';
import type { MetadataLike } from '../meta-object.js';

export const GIZMO = { apiVersion: 'helpers.operator-runtime.dev/v1', kind: 'Gizmo' } as const;

export interface Gizmo {
  apiVersion: string;
  kind: string;
  metadata: MetadataLike;
  spec: { size: number; color?: string };
  status?: { observedGeneration?: number; message?: string; conditions?: Condition[] };
}

export function gizmo(namespace: string, name: string, spec: Gizmo['spec'] = { size: 1 }): Gizmo {
  return { ...GIZMO, metadata: { name, namespace }, spec };
}

const conditionSchema = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: {
      type: 'string',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' },
    message: { type: 'string', maxLength: 32768 },
  },
};

export const GIZMO_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gizmos.helpers.operator-runtime.dev' },
  spec: {
    group: 'helpers.operator-runtime.dev',
    scope: 'Namespaced',
    names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
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
              spec: {
                type: 'object',
                required: ['size'],
                properties: { size: { type: 'integer', minimum: 1 }, color: { type: 'string' } },
              },
              status: {
                type: 'object',
                properties: {
                  observedGeneration: { type: 'integer' },
                  message: { type: 'string' },
                  conditions: {
                    type: 'array',
                    items: conditionSchema,
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['type'],
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};
