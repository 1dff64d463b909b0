/**
 * Assembles the Database operator on a manager: the controller with its owned kinds, the event
 * recorder, the backup client, (optionally) leader election, and with a fleet of member clusters
 * the fleet's controllers (database-fleet-operator.ts). `main.ts` runs it as a process; tests build
 * it in-process through the rig (testing/operator-rig.ts), on a manager of their own.
 */
import { LeaderElector, Manager, type Client, type Logger, type ManagerOptions } from 'operator-runtime';
import type { Controller } from 'operator-runtime/controller';
import type { ControllerBuilderOptions, SecureMetricsOptions } from 'operator-runtime/manager';
import type { WebhookServerOptions } from 'operator-runtime/webhook';
import type { Registry } from 'prom-client';
import { BackupClient, type BackupService } from './backup-client.js';
import { allowedOrigins } from './backup-endpoints.js';
import { DATABASE } from './database.js';
import { addDatabaseFleetControllers, type DatabaseOperatorFleetOptions } from './database-fleet-operator.js';
import { CONTROLLER_NAME, DatabaseReconciler, declareDatabaseController } from './database-reconciler.js';
import { CONFIG_MAP, MANAGED_BY_SELECTOR, SECRET, SERVICE, STATEFUL_SET } from './resources.js';
import { registerDatabaseWebhooks } from './webhooks.js';

export interface DatabaseOperatorOptions {
  readonly client: Client;
  readonly registry: Registry;
  readonly logger: Logger;
  /** The operator's backup service; used when a Database names none. */
  readonly backupEndpoint: string;
  /**
   * The backup service's client. Given, it is the caller's to close; the operator's `close()` closes
   * only the one it built. @defaultValue a `BackupClient` (HTTP, undici)
   */
  readonly backups?: BackupService;
  /** Other backup endpoints a Database may name (compared by origin); any other is refused without a request. @defaultValue none */
  readonly allowedBackupEndpoints?: readonly string[];
  /** Lease namespace; no leader election without it. */
  readonly leaderElectionNamespace?: string;
  readonly identity?: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly metricsPort?: number;
  readonly healthPort?: number;
  readonly bindHost?: string;
  /** Serve /metrics over HTTPS to RBAC-authorized tokens only (see Manager's `secureMetrics`). */
  readonly secureMetrics?: SecureMetricsOptions;
  /** Serves the operator console on this port (0: a free one; see `manager.endpoints.consoleUrl`); off when omitted. */
  readonly consolePort?: number;
  readonly maxConcurrentReconciles?: number;
  readonly backupPollMs?: number;
  readonly gracefulShutdownMs?: number;
  /**
   * Serves the Database's admission and conversion webhooks (webhooks.ts) with these options (the
   * manager's `webhook`); the cluster side comes from `webhookManifests(manager, …)`. Off when omitted.
   */
  readonly webhook?: WebhookServerOptions;
  /**
   * Scale out across replicas (the manager's `sharding`): each replica reconciles only the Databases
   * assigned to it. The assigning sharder is leader-only, so give `leaderElectionNamespace` too.
   */
  readonly sharding?: ManagerOptions['sharding'];
  /** Plan mode (the manager's `plan`): every write a dry run, reported instead of persisted; `--plan` in main.ts. */
  readonly plan?: ManagerOptions['plan'];
  /** Member clusters besides the one `client` talks to: adds the fleet's controllers. Off when omitted. */
  readonly fleet?: DatabaseOperatorFleetOptions;
}

export interface DatabaseOperator {
  readonly manager: Manager;
  readonly controller: Controller;
  /** The DatabaseFleet controller in the host cluster; only with `fleet`. */
  readonly fleetController: Controller | undefined;
  close(): Promise<void>;
}

export const LEASE_NAME = 'database-operator';

export function createDatabaseOperator(options: DatabaseOperatorOptions): DatabaseOperator {
  return addDatabaseOperator(new Manager(databaseManagerOptions(options)), options);
}

/** The manager the operator runs on: its cache, servers, leader election, sharding and fleet. */
export function databaseManagerOptions(options: DatabaseOperatorOptions): ManagerOptions {
  const { client, registry, logger } = options;
  const elector = options.leaderElectionNamespace
    ? new LeaderElector({
        client,
        name: LEASE_NAME,
        namespace: options.leaderElectionNamespace,
        identity: options.identity,
        leaseDurationMs: options.leaseDurationMs,
        renewDeadlineMs: options.renewDeadlineMs,
        retryPeriodMs: options.retryPeriodMs,
        registry,
        logger,
      })
    : undefined;
  return {
    client,
    registry,
    logger,
    // Owned kinds: only our own objects are cached, not every Secret in the cluster.
    labelSelectorsByKind: [SECRET, CONFIG_MAP, SERVICE, STATEFUL_SET].map((kind) => ({
      ...kind,
      labelSelector: MANAGED_BY_SELECTOR,
    })),
    leaderElection: elector,
    metricsPort: options.metricsPort,
    healthPort: options.healthPort,
    bindHost: options.bindHost,
    secureMetrics: options.secureMetrics,
    console: options.consolePort !== undefined ? { port: options.consolePort } : undefined,
    gracefulShutdownMs: options.gracefulShutdownMs,
    webhook: options.webhook,
    sharding: options.sharding,
    fleet: options.fleet?.members,
    plan: options.plan,
  };
}

/**
 * The operator's controllers, webhooks, Event recorders and backup client, on `manager` (built from
 * {@link databaseManagerOptions}). `run` is given to every controller it registers — a
 * `ReconcileObserver` for tracing, say.
 */
export function addDatabaseOperator(
  manager: Manager,
  options: DatabaseOperatorOptions,
  run: Pick<ControllerBuilderOptions, 'observer'> = {},
): DatabaseOperator {
  const { registry } = options;
  const endpointPolicy = {
    defaultEndpoint: options.backupEndpoint,
    allowedEndpoints: options.allowedBackupEndpoints ?? [],
  };
  if (options.webhook) registerDatabaseWebhooks(manager.webhooks, endpointPolicy);
  // Only allowed endpoints are ever called, so their hosts bound the metrics' `host` label.
  const backups: BackupService =
    options.backups ?? new BackupClient({ registry, metricHosts: allowedOrigins(endpointPolicy).map((u) => u.host) });
  // A backup service the caller handed in is the caller's to close.
  const closeBackups = options.backups ? () => Promise.resolve() : () => backups.close();
  const recorder = manager.eventRecorder('database-operator');
  // Events about a member's Database are written into that member (with a fleet only).
  const memberRecorder = options.fleet ? manager.memberEventRecorder('database-operator') : undefined;
  // One reconciler for the host's Databases and every member's: it works in the request's cluster.
  const reconciler = new DatabaseReconciler({
    recorderFor: (cluster) => (memberRecorder && cluster.name !== '' ? memberRecorder.in(cluster) : recorder),
    backups,
    defaultBackupEndpoint: options.backupEndpoint,
    allowedBackupEndpoints: endpointPolicy.allowedEndpoints,
    backupPollMs: options.backupPollMs,
    clock: manager.clock,
  });
  const runOptions = {
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
    reconcileTimeoutMs: 60_000,
    ...run,
  };
  const controller = declareDatabaseController(manager.controller(CONTROLLER_NAME).for(DATABASE))
    .withOptions(runOptions)
    .complete(reconciler);
  const fleetController = options.fleet
    ? addDatabaseFleetControllers(manager, options.fleet, { reconciler, recorder, run: runOptions })
    : undefined;
  return { manager, controller, fleetController, close: closeBackups };
}
