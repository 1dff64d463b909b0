/**
 * The Database operator's configuration from the environment (what main.ts documents), as
 * `createDatabaseOperator` options. A bad value is logged and ends the process with exit code 2.
 */
import type { Logger, ManagerOptions } from 'operator-runtime';
import type { DatabaseOperatorOptions } from './operator.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const SHARDING_MODES = ['auto', 'server', 'label', 'client'] as const;

type LeaseTimings = Pick<OperatorEnvOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>;

/** Everything but the client, registry and logger, which the process makes. */
export type OperatorEnvOptions = Omit<DatabaseOperatorOptions, 'client' | 'registry' | 'logger'>;

/** LOG_LEVEL, default info. */
export function logLevelFromEnv(env: NodeJS.ProcessEnv): (typeof LOG_LEVELS)[number] {
  return LOG_LEVELS.find((l) => l === env.LOG_LEVEL) ?? 'info';
}

export function operatorOptionsFromEnv(env: NodeJS.ProcessEnv, logger: Logger): OperatorEnvOptions {
  // An unset or empty variable means the default, as does 0 for the lease timings.
  const num = (name: string): number | undefined => (env[name] ? Number(env[name]) : undefined);
  const positive = (name: string): number | undefined => num(name) || undefined;
  const backupEndpoint = env.BACKUP_SERVICE_URL;
  if (!backupEndpoint) fail(logger, {}, 'BACKUP_SERVICE_URL is required');
  const identity = env.POD_NAME || undefined;
  const timings: LeaseTimings = {
    leaseDurationMs: positive('LEASE_DURATION_MS'),
    renewDeadlineMs: positive('RENEW_DEADLINE_MS'),
    retryPeriodMs: positive('RETRY_PERIOD_MS'),
  };
  const metricsFiles =
    env.METRICS_CERT_FILE && env.METRICS_KEY_FILE
      ? { certFile: env.METRICS_CERT_FILE, keyFile: env.METRICS_KEY_FILE }
      : {};
  return {
    backupEndpoint,
    allowedBackupEndpoints: (env.BACKUP_ALLOWED_ENDPOINTS ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean),
    leaderElectionNamespace: env.LEADER_ELECTION_NAMESPACE || undefined,
    identity,
    ...timings,
    metricsPort: num('METRICS_PORT'),
    healthPort: num('HEALTH_PORT'),
    bindHost: env.BIND_HOST || undefined,
    secureMetrics: env.SECURE_METRICS === 'true' ? metricsFiles : undefined,
    consolePort: num('CONSOLE_PORT'),
    webhook: env.WEBHOOK_CERT_DIR ? { certDir: env.WEBHOOK_CERT_DIR, port: num('WEBHOOK_PORT') } : undefined,
    sharding: env.SHARDING_RING ? shardingFromEnv(env, env.SHARDING_RING, identity, timings, logger) : undefined,
  };
}

function shardingFromEnv(
  env: NodeJS.ProcessEnv,
  ring: string,
  identity: string | undefined,
  timings: LeaseTimings,
  logger: Logger,
): NonNullable<ManagerOptions['sharding']> {
  const namespace = env.SHARDING_NAMESPACE ?? env.LEADER_ELECTION_NAMESPACE;
  const mode = SHARDING_MODES.find((m) => m === env.SHARDING_MODE);
  if (!namespace || (env.SHARDING_MODE && !mode)) {
    fail(
      logger,
      { mode: env.SHARDING_MODE },
      'SHARDING_RING needs SHARDING_NAMESPACE (or LEADER_ELECTION_NAMESPACE), and SHARDING_MODE must be auto, server, label or client',
    );
  }
  return { ring, namespace, identity, mode, ...timings };
}

function fail(logger: Logger, fields: Record<string, unknown>, message: string): never {
  logger.error(fields, message);
  process.exit(2);
}
