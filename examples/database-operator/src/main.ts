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
 *   SHARDING_RING                    shards Databases across the replicas of this ring (needs LEADER_ELECTION_NAMESPACE:
 *                                    the sharder is leader-only); SHARDING_NAMESPACE holds the membership Leases
 *                                    (default LEADER_ELECTION_NAMESPACE); SHARDING_MODE auto|server|label|client;
 *                                    the membership Lease uses the leader-election timings above
 */
import { KubeClient, createLogger, createMetricsRegistry, runUntilSignal } from 'operator-runtime';
import { createDatabaseOperator } from './operator.js';
import { logLevelFromEnv, operatorOptionsFromEnv } from './operator-env.js';

const logger = createLogger({ name: 'database-operator', level: logLevelFromEnv(process.env) });
const options = operatorOptionsFromEnv(process.env, logger);
const registry = createMetricsRegistry({ defaultMetrics: true });
const client = await KubeClient.fromDefault({ registry, logger });
const operator = createDatabaseOperator({ client, registry, logger, ...options });
const code = await runUntilSignal(operator.manager, { logger });
await operator.close();
await client.close();
process.exit(code);
