/**
 * The DatabaseFleet custom resource (databasefleets.example.com/v1), in the host cluster: keeps the
 * Databases of the member clusters it selects on one version, rolling a change out one cluster at a
 * time (database-fleet-reconciler.ts; the decisions are fleet-rollout.ts). Types derive from
 * database-fleet-schema.ts, so the TypeScript type and the CRD cannot drift apart.
 */
import { defineCustomKind, type Static } from 'operator-runtime/crd';
import type { ObjectOf } from 'operator-runtime';
import {
  DatabaseFleetSpecSchema,
  DatabaseFleetStatusSchema,
  type ClusterStateSchema,
  type FleetClusterStatusSchema,
  type FleetPhaseSchema,
} from './database-fleet-schema.js';

/** Namespaced (in the operator's namespace, typically): the operator's namespaced Role covers it. */
export const DATABASE_FLEET = defineCustomKind({
  group: 'example.com',
  names: { kind: 'DatabaseFleet', plural: 'databasefleets', singular: 'databasefleet', shortNames: ['dbfleet'] },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { spec: DatabaseFleetSpecSchema, status: DatabaseFleetStatusSchema },
      subresources: { status: {} },
      printerColumns: [
        { name: 'Version', type: 'string', jsonPath: '.spec.version' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'Cluster', type: 'string', jsonPath: '.status.currentCluster' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  ],
});

export type DatabaseFleet = ObjectOf<typeof DATABASE_FLEET>;
export type DatabaseFleetSpec = DatabaseFleet['spec'];
export type DatabaseFleetStatus = NonNullable<DatabaseFleet['status']>;
export type FleetPhase = Static<typeof FleetPhaseSchema>;
export type ClusterState = Static<typeof ClusterStateSchema>;
export type FleetClusterStatus = Static<typeof FleetClusterStatusSchema>;
