/**
 * The Database custom resource's schema, written once: database.ts derives the TypeScript types
 * from it and config/crd.yaml is generated from it (`npm run generate:example`; the drift check is
 * scripts/generate-example-crd.test.ts).
 */
import { Type, k8s } from 'operator-runtime/crd';

export const EngineSchema = Type.Union([Type.Literal('postgres'), Type.Literal('mysql')], {
  description: 'Database engine.',
});

export const PhaseSchema = Type.Union([
  Type.Literal('Provisioning'),
  Type.Literal('Ready'),
  Type.Literal('Degraded'),
  Type.Literal('Deleting'),
]);

export const DatabaseSpecSchema = Type.Object({
  engine: EngineSchema,
  version: Type.String({
    pattern: '^[0-9]+(\\.[0-9]+){0,2}$',
    maxLength: 32,
    description: 'Engine version, e.g. "16" or "8.0.36".',
  }),
  replicas: Type.Integer({ minimum: 1, maximum: 9 }),
  storage: Type.String({
    pattern: '^[0-9]+(Mi|Gi|Ti)$',
    maxLength: 32,
    description: 'Volume size per replica, e.g. "10Gi".',
  }),
  backup: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean({ default: true })),
      endpoint: Type.Optional(
        Type.String({ maxLength: 2048, description: "Backup service URL; the operator's default when empty." }),
      ),
    }),
  ),
});

export const DatabaseStatusSchema = Type.Object({
  phase: Type.Optional(PhaseSchema),
  readyReplicas: Type.Optional(Type.Integer()),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  endpoint: Type.Optional(Type.String({ maxLength: 512 })),
  conditions: Type.Optional(k8s.conditions({ maxItems: 16 })),
});
