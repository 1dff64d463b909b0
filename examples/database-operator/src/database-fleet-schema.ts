/**
 * The DatabaseFleet custom resource's schema (databasefleets.example.com/v1): a version and a
 * cluster selector in the host cluster, the rollout's state per member cluster in its status.
 * database-fleet.ts derives the TypeScript types from it; config/crd.yaml is generated from it
 * (`npm run generate:example`; the drift check is scripts/generate-example-crd.test.ts).
 */
import { Type, k8s } from 'operator-runtime/crd';

/** The same shape as a Database's `spec.version`: the fleet sets exactly this string on each Database. */
export const FleetVersionSchema = Type.String({
  pattern: '^[0-9]+(\\.[0-9]+){0,2}$',
  maxLength: 32,
  description: 'The engine version every selected Database must run, e.g. "16".',
});

export const FleetPhaseSchema = Type.Union(
  [Type.Literal('Consistent'), Type.Literal('RollingOut'), Type.Literal('Halted'), Type.Literal('Paused')],
  { description: 'Consistent: every selected cluster runs the version; Halted: a cluster is Degraded or unreachable.' },
);

export const ClusterStateSchema = Type.Union(
  [
    Type.Literal('UpToDate'),
    Type.Literal('Pending'),
    Type.Literal('Upgrading'),
    Type.Literal('Degraded'),
    Type.Literal('Unreachable'),
  ],
  { description: "A member cluster's state in the rollout." },
);

export const DatabaseFleetSpecSchema = Type.Object({
  version: FleetVersionSchema,
  clusterSelector: k8s.builtin('io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector', {
    description: 'Which member clusters (by their labels) the fleet governs; {} selects every member.',
  }),
  databaseSelector: Type.Optional(
    k8s.builtin('io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector', {
      description: 'Which Databases (by label, in every namespace) of each selected cluster; all when omitted.',
    }),
  ),
  paused: Type.Optional(Type.Boolean({ description: 'Stop touching Databases; the status is still reported.' })),
});

export const FleetClusterStatusSchema = Type.Object({
  name: Type.String({ maxLength: 253 }),
  state: ClusterStateSchema,
  /** Selected Databases seen in the cluster. */
  databases: Type.Integer({ minimum: 0 }),
  /** Of those, how many run the fleet's version and are Ready at their current generation. */
  ready: Type.Integer({ minimum: 0 }),
  /** The distinct `spec.version`s of the cluster's selected Databases, sorted. */
  versions: Type.Array(Type.String({ maxLength: 32 }), { ...k8s.listSet(), maxItems: 64 }),
  message: Type.String({ maxLength: 4096 }),
});

export const DatabaseFleetStatusSchema = Type.Object({
  phase: Type.Optional(FleetPhaseSchema),
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64' })),
  /** The version the status was computed for (spec.version at observedGeneration). */
  targetVersion: Type.Optional(Type.String({ maxLength: 32 })),
  /** The cluster the rollout is on (in flight, or halted at); absent when none. */
  currentCluster: Type.Optional(Type.String({ maxLength: 253 })),
  clusters: Type.Optional(Type.Array(FleetClusterStatusSchema, { ...k8s.listMap(['name']), maxItems: 1024 })),
  conditions: Type.Optional(k8s.conditions({ maxItems: 16 })),
});
