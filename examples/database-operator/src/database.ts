/**
 * The Database custom resource (databases.example.com/v1): its kind and types, derived from the
 * schema in database-schema.ts, so the TypeScript type and the CRD cannot drift apart.
 */
import { defineCustomKind, type Static } from 'operator-runtime/crd';
import type { ObjectOf } from 'operator-runtime';
import { DatabaseSpecSchema, DatabaseStatusSchema, type EngineSchema, type PhaseSchema } from './database-schema.js';
import { DatabaseV1alpha1SpecSchema } from './database-v1alpha1-schema.js';

/** The Database kind: `client.get(DATABASE, …)` is a `Database`, `.for(DATABASE)` types the reconciler's `ctx.get()`. */
export const DATABASE = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Database', plural: 'databases', singular: 'database', shortNames: ['db'] },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { spec: DatabaseSpecSchema, status: DatabaseStatusSchema },
      subresources: { status: {} },
      printerColumns: [
        { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
    {
      // Still served, converted to and from v1 by the operator's conversion webhook (webhooks.ts).
      name: 'v1alpha1',
      served: true,
      storage: false,
      deprecated: true,
      deprecationWarning: 'example.com/v1alpha1 Database is deprecated; use example.com/v1',
      schema: { spec: DatabaseV1alpha1SpecSchema, status: DatabaseStatusSchema },
      subresources: { status: {} },
    },
  ],
});

export type Database = ObjectOf<typeof DATABASE>;
export type DatabaseSpec = Database['spec'];
export type DatabaseStatus = NonNullable<Database['status']>;
export type Engine = Static<typeof EngineSchema>;
export type Phase = Static<typeof PhaseSchema>;

export const FINALIZER = 'example.com/backup-before-delete';
export const FIELD_MANAGER = 'database-operator';

/** Versions the operator knows how to run; the schema only checks the shape. */
export const SUPPORTED_VERSIONS: Record<Engine, readonly string[]> = {
  postgres: ['14', '15', '16'],
  mysql: ['8.0', '8.4'],
};

export const IMAGES: Record<Engine, (version: string) => string> = {
  postgres: (v) => `postgres:${v}`,
  mysql: (v) => `mysql:${v}`,
};

export const PORTS: Record<Engine, number> = { postgres: 5432, mysql: 3306 };
