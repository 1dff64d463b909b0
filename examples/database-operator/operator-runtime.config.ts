/**
 * The reference operator's project config: `npm run generate:example` (the CLI's
 * `generate manifests` on this file) writes its Kustomize base in config/ — the CRD from the
 * Database schema, RBAC from what the manager declares, and the objects that run it.
 * manifests.int.test.ts checks the committed files are exactly what it generates.
 */
import { DEFAULT_WEBHOOK_CERT_DIR, defineConfig } from 'operator-runtime/codegen';
import { DATABASE } from './src/database.js';
import { DATABASE_FLEET } from './src/database-fleet.js';
import { OPERATOR_NAME, OPERATOR_NAMESPACE, manifestManager } from './src/manifest-manager.js';

export default defineConfig({
  name: OPERATOR_NAME,
  namespace: OPERATOR_NAMESPACE,
  // The released version (package.json), never :latest; pin the digest (@sha256:…) once published.
  image: 'example.com/database-operator:0.1.0',
  kinds: [DATABASE, DATABASE_FLEET],
  // As deployed: leader election in its namespace, secure metrics; built on a client that never connects.
  manager: manifestManager,
  outDir: 'config',
  regenerate: 'npm run generate:example',
  deployment: {
    // Two replicas with leader election: one reconciles, the other keeps a warm cache and takes over.
    replicas: 2,
    // Secure metrics (HTTPS, RBAC-checked tokens) on kubebuilder's port, as manifestManager declares.
    metricsPort: 8443,
    env: [
      { name: 'BACKUP_SERVICE_URL', value: `http://backup-service.${OPERATOR_NAMESPACE}.svc:8090` },
      { name: 'SECURE_METRICS', value: 'true' },
      // Admission and conversion webhooks, with the certificate cert-manager writes (webhooks.yaml).
      { name: 'WEBHOOK_CERT_DIR', value: DEFAULT_WEBHOOK_CERT_DIR },
      { name: 'LEADER_ELECTION_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
  },
  // The OLM bundle (`operator-runtime generate bundle`, bundle.test.ts): its version is package.json's.
  bundle: {
    displayName: 'Database Operator',
    description:
      'Runs PostgreSQL and MySQL databases (Database) and rolls one engine version across clusters (DatabaseFleet).',
    keywords: ['database', 'postgres', 'mysql'],
    provider: { name: 'operator-runtime' },
    channels: ['alpha'],
    samples: ['config/samples.yaml', 'samples/database-fleet.yaml'],
  },
  lint: {
    allow: [
      {
        check: 'enum-pascal-case',
        kind: 'Database',
        path: '.spec.engine',
        reason: "the engines' command names (postgres, mysql), which the API conventions keep as they are written",
      },
    ],
  },
  comments: {
    crds: [
      "Database: the reference operator's custom resource (databases.example.com/v1, storage; v1alpha1",
      'converted by its webhook), from its schemas in examples/database-operator/src/database-schema.ts',
      'and database-v1alpha1-schema.ts. DatabaseFleet (databasefleets.example.com/v1): one version across the',
      'Databases of the member clusters it selects, for an operator run with a fleet; from database-fleet-schema.ts.',
    ],
    rbac: [
      "The Database operator's roles: exactly what its controllers, event recorder, leader election",
      'and secure metrics declare (examples/database-operator/src/operator.ts). The ServiceAccount',
      `${OPERATOR_NAMESPACE}/${OPERATOR_NAME} is created in deployment.yaml.`,
    ],
  },
});
