/**
 * The Database operator as a process. Configuration from the environment:
 *   KUBECONFIG (or in-cluster)       how to reach the API server
 *   BACKUP_SERVICE_URL               default backup endpoint (required)
 *   BACKUP_ALLOWED_ENDPOINTS         comma-separated other endpoints a Database may name (default none)
 *   LEADER_ELECTION_NAMESPACE        enables leader election (Lease `database-operator`)
 *   POD_NAME                         identity for leader election (default hostname_<random>)
 *   METRICS_PORT / HEALTH_PORT       8080 / 8081 (0 disables); BIND_HOST (default 0.0.0.0 in a pod, else 127.0.0.1)
 *   CONSOLE_PORT                     serves the operator console on 127.0.0.1:<port> (off when unset)
 *   WEBHOOK_CERT_DIR                 serves the admission and conversion webhooks over HTTPS with tls.crt/tls.key from
 *                                    this directory (reloaded when they change); WEBHOOK_PORT (default 9443)
 *   SECURE_METRICS=true              /metrics over HTTPS (default port 8443) for tokens RBAC allows to get it;
 *   METRICS_CERT_FILE / METRICS_KEY_FILE   its certificate (default: self-signed at start)
 *   LEASE_DURATION_MS, RENEW_DEADLINE_MS, RETRY_PERIOD_MS   leader-election timings
 *   LOG_LEVEL                        pino level (default info)
 *   RECONCILE_LOG                    file to append reconcile start/end and status-write records to (tests)
 *   SHARDING_RING                    shards Databases across the replicas of this ring (needs LEADER_ELECTION_NAMESPACE:
 *                                    the sharder is leader-only); SHARDING_NAMESPACE holds the membership Leases
 *                                    (default LEADER_ELECTION_NAMESPACE); SHARDING_MODE auto|server|label|client;
 *                                    the membership Lease uses the leader-election timings above
 */
import { appendFileSync } from 'node:fs';
import { KubeClient, createLogger, createMetricsRegistry, runUntilSignal, type ManagerOptions } from 'operator-runtime';
import { createDatabaseOperator } from './operator.js';

const env = process.env;
const num = (name: string): number | undefined => (env[name] ? Number(env[name]) : undefined);
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const SHARDING_MODES = ['auto', 'server', 'label', 'client'] as const;
const logger = createLogger({ name: 'database-operator', level: LOG_LEVELS.find((l) => l === env.LOG_LEVEL) ?? 'info' });
if (!env.BACKUP_SERVICE_URL) {
  logger.error({}, 'BACKUP_SERVICE_URL is required');
  process.exit(2);
}
const registry = createMetricsRegistry({ defaultMetrics: true });
const client = await KubeClient.fromDefault({ registry, logger });
const identity = env.POD_NAME;
const reconcileLog = env.RECONCILE_LOG;
/** One JSON line per event, appended synchronously so a kill -9 loses nothing already recorded. */
const record = (entry: Record<string, unknown>): void => appendFileSync(reconcileLog!, `${JSON.stringify({ t: Date.now(), replica: identity ?? String(process.pid), ...entry })}\n`);
const operator = createDatabaseOperator({
  client,
  registry,
  logger,
  backupEndpoint: env.BACKUP_SERVICE_URL,
  allowedBackupEndpoints: (env.BACKUP_ALLOWED_ENDPOINTS ?? '').split(',').map((e) => e.trim()).filter(Boolean),
  ...(env.LEADER_ELECTION_NAMESPACE ? { leaderElectionNamespace: env.LEADER_ELECTION_NAMESPACE } : {}),
  ...(identity ? { identity } : {}),
  ...(num('LEASE_DURATION_MS') ? { leaseDurationMs: num('LEASE_DURATION_MS')! } : {}),
  ...(num('RENEW_DEADLINE_MS') ? { renewDeadlineMs: num('RENEW_DEADLINE_MS')! } : {}),
  ...(num('RETRY_PERIOD_MS') ? { retryPeriodMs: num('RETRY_PERIOD_MS')! } : {}),
  ...(num('METRICS_PORT') !== undefined ? { metricsPort: num('METRICS_PORT')! } : {}),
  ...(num('HEALTH_PORT') !== undefined ? { healthPort: num('HEALTH_PORT')! } : {}),
  ...(env.BIND_HOST ? { bindHost: env.BIND_HOST } : {}),
  ...(env.SECURE_METRICS === 'true'
    ? { secureMetrics: env.METRICS_CERT_FILE && env.METRICS_KEY_FILE ? { certFile: env.METRICS_CERT_FILE, keyFile: env.METRICS_KEY_FILE } : {} }
    : {}),
  ...(num('CONSOLE_PORT') !== undefined ? { consolePort: num('CONSOLE_PORT')! } : {}),
  ...(env.WEBHOOK_CERT_DIR ? { webhook: { certDir: env.WEBHOOK_CERT_DIR, ...(num('WEBHOOK_PORT') !== undefined ? { port: num('WEBHOOK_PORT')! } : {}) } } : {}),
  ...(env.SHARDING_RING ? { sharding: shardingFromEnv(env.SHARDING_RING) } : {}),
  ...(reconcileLog
    ? {
        onReconcile: (phase: 'start' | 'end', key: string) => record({ phase, key }),
        onStatusWrite: (key: string, read: string, written: string) => record({ phase: 'status-write', key, read, written }),
      }
    : {}),
});
function shardingFromEnv(ring: string): NonNullable<ManagerOptions['sharding']> {
  const namespace = env.SHARDING_NAMESPACE ?? env.LEADER_ELECTION_NAMESPACE;
  const mode = SHARDING_MODES.find((m) => m === env.SHARDING_MODE);
  if (!namespace || (env.SHARDING_MODE && !mode)) {
    logger.error({ mode: env.SHARDING_MODE }, 'SHARDING_RING needs SHARDING_NAMESPACE (or LEADER_ELECTION_NAMESPACE), and SHARDING_MODE must be auto, server, label or client');
    process.exit(2);
  }
  return {
    ring,
    namespace,
    ...(identity ? { identity } : {}),
    ...(mode ? { mode } : {}),
    ...(num('LEASE_DURATION_MS') ? { leaseDurationMs: num('LEASE_DURATION_MS')! } : {}),
    ...(num('RENEW_DEADLINE_MS') ? { renewDeadlineMs: num('RENEW_DEADLINE_MS')! } : {}),
    ...(num('RETRY_PERIOD_MS') ? { retryPeriodMs: num('RETRY_PERIOD_MS')! } : {}),
  };
}

const code = await runUntilSignal(operator.manager, { logger });
await operator.close();
await client.close();
process.exit(code);
