/**
 * The operator's manager as deployed — leader election in its own namespace, secure metrics,
 * webhooks served with the certificate the Deployment mounts — on a client that never connects,
 * built only to read what it declares: its RBAC, webhook configurations and CRD conversion stanza
 * (config/, written by `npm run generate:example` from operator-runtime.config.ts) come from here.
 * Nothing is started.
 */
import { createLogger, createMetricsRegistry, type Manager } from 'operator-runtime';
import { DEFAULT_WEBHOOK_CERT_DIR } from 'operator-runtime/codegen';
import { offlineClient } from 'operator-runtime/rbac';
import { createDatabaseOperator } from './operator.js';

/** The operator's name: its roles, bindings and ServiceAccount. */
export const OPERATOR_NAME = 'database-operator';
/** Where the operator runs; its leader-election Lease lives here too. */
export const OPERATOR_NAMESPACE = 'database-operator-system';

export function manifestManager(): Manager {
  return createDatabaseOperator({
    client: offlineClient(),
    registry: createMetricsRegistry(),
    logger: createLogger({ level: 'silent' }),
    // Never called: only the endpoint policy is built from it.
    backupEndpoint: 'http://backup-service.database-operator-system.svc:8090',
    leaderElectionNamespace: OPERATOR_NAMESPACE,
    secureMetrics: {},
    // Where the Deployment mounts cert-manager's serving certificate (WEBHOOK_CERT_DIR in main.ts).
    webhook: { certDir: DEFAULT_WEBHOOK_CERT_DIR },
  }).manager;
}
