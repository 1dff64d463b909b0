/**
 * Assembles the Database operator on a manager: the controller with its owned kinds, the event
 * recorder, the backup client, (optionally) leader election, and with a fleet of member clusters
 * the DatabaseFleet controller. `main.ts` runs it as a process; tests build it in-process.
 */
import { EventRecorder, LeaderElector, Manager, type Client, type Logger, type ManagerOptions } from 'operator-runtime';
import type { Controller, ReconcileObserver } from 'operator-runtime/controller';
import type { FleetOptions } from 'operator-runtime/fleet';
import type { ControllerDeclaration, SecureMetricsOptions } from 'operator-runtime/manager';
import type { WebhookServerOptions } from 'operator-runtime/webhook';
import type { Registry } from 'prom-client';
import { BackupClient, type BackupService } from './backup-client.js';
import { allowedOrigins } from './backup-endpoints.js';
import { DATABASE } from './database.js';
import { DATABASE_FLEET } from './database-fleet.js';
import { FleetDatabaseReconciler } from './database-fleet-member-reconciler.js';
import { DatabaseFleetReconciler, FLEET_CONTROLLER_NAME, type FleetView } from './database-fleet-reconciler.js';
import { CONTROLLER_NAME, DatabaseReconciler } from './database-reconciler.js';
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
  /** Serves the operator console on this port (0: a free one; see `manager.consoleUrl`); off when omitted. */
  readonly consolePort?: number;
  readonly maxConcurrentReconciles?: number;
  readonly backupPollMs?: number;
  readonly gracefulShutdownMs?: number;
  /** The manager's clock (tests pass a FakeClock). @defaultValue the real clock */
  readonly clock?: ManagerOptions['clock'];
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
  /** Told about every finished reconcile (the controller's `observer`: tracing, or tests that check overlap). */
  readonly observer?: ReconcileObserver;
  /** Member clusters besides the one `client` talks to: adds the DatabaseFleet controller. Off when omitted. */
  readonly fleet?: DatabaseOperatorFleetOptions;
}

/**
 * The operator over a fleet (issue 26): with `members`, the manager engages those member clusters,
 * a fleet controller reconciles every member's Databases (the same reconciler, bound per member),
 * and the DatabaseFleet controller rolls versions out across them.
 */
export interface DatabaseOperatorFleetOptions {
  /** The manager's `fleet` option: where member clusters come from (docs/fleet.md). */
  readonly members?: FleetOptions;
  /**
   * The member clusters the DatabaseFleet controller reads and upgrades, when not the manager's own
   * fleet (tests hand in fake members). @defaultValue `manager.fleet`, with `members`
   */
  readonly view?: FleetView;
  /** @defaultValue DEFAULT_ROLLOUT_POLL_MS */
  readonly rolloutPollMs?: number;
  /** @defaultValue DEFAULT_CONSISTENCY_CHECK_MS */
  readonly consistencyCheckMs?: number;
}

export interface DatabaseOperator {
  readonly manager: Manager;
  readonly elector: LeaderElector | undefined;
  readonly controller: Controller;
  /** The DatabaseFleet controller in the host cluster; only with `fleet`. */
  readonly fleetController: Controller | undefined;
  /** The Database reconciler for every member's Databases (`.complete()`d on the manager's fleet controller); only with `fleet`. */
  readonly memberReconciler: FleetDatabaseReconciler | undefined;
  close(): Promise<void>;
}

export const LEASE_NAME = 'database-operator';

export function createDatabaseOperator(options: DatabaseOperatorOptions): DatabaseOperator {
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
  const manager = new Manager({
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
    clock: options.clock,
    webhook: options.webhook,
    sharding: options.sharding,
    fleet: options.fleet?.members,
    plan: options.plan,
  });
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
  const recorder: EventRecorder = manager.eventRecorder('database-operator');
  const reconciler = new DatabaseReconciler({
    // Reads from the cache, writes to the API server: a no-op reconcile costs no request at all.
    // Sharded, the manager's client reads Databases (re-reads after a write conflict) from the API server.
    client: manager.client,
    recorder,
    backups,
    defaultBackupEndpoint: options.backupEndpoint,
    allowedBackupEndpoints: endpointPolicy.allowedEndpoints,
    registry,
    backupPollMs: options.backupPollMs,
    clock: manager.clock,
  });
  const controller = databaseController(manager.controller(CONTROLLER_NAME).for(DATABASE))
    .withOptions({
      maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4,
      reconcileTimeoutMs: 60_000,
      observer: options.observer,
    })
    .complete(reconciler);

  const fleet = options.fleet;
  const view: FleetView | undefined = fleet?.view ?? manager.fleet;
  if (fleet && !view)
    throw new Error("the fleet option needs members (the manager's fleet) or a view of member clusters");
  const fleetController =
    fleet && view
      ? manager
          .controller(FLEET_CONTROLLER_NAME)
          .for(DATABASE_FLEET)
          // Its status only: member Databases are written with each member's own client and RBAC.
          .writes(DATABASE_FLEET, ['patch'], { subresource: 'status' })
          .withOptions({ maxConcurrentReconciles: 2, reconcileTimeoutMs: 60_000, observer: options.observer })
          .complete(
            new DatabaseFleetReconciler({
              client: manager.client,
              fleet: view,
              recorder,
              rolloutPollMs: fleet.rolloutPollMs,
              consistencyCheckMs: fleet.consistencyCheckMs,
              clock: manager.clock,
            }),
          )
      : undefined;
  // The same Database reconciler, bound per member to its client and an Event recorder writing there.
  const memberReconciler = fleet
    ? new FleetDatabaseReconciler({
        backups,
        defaultBackupEndpoint: options.backupEndpoint,
        allowedBackupEndpoints: endpointPolicy.allowedEndpoints,
        registry,
        backupPollMs: options.backupPollMs,
        clock: manager.clock,
        recorderFor: (cluster) =>
          new EventRecorder({
            client: cluster.client,
            component: 'database-operator',
            logger: logger.child({ cluster: cluster.name }),
          }),
      })
    : undefined;
  // Every member's Databases, reconciled as the host controller reconciles the host's.
  if (memberReconciler && fleet?.members) {
    databaseController(manager.fleetController(CONTROLLER_NAME).for(DATABASE))
      .withOptions({ maxConcurrentReconciles: options.maxConcurrentReconciles ?? 4, reconcileTimeoutMs: 60_000 })
      .complete(memberReconciler);
  }
  return { manager, elector, controller, fleetController, memberReconciler, close: closeBackups };
}

/**
 * What the Database controller owns and writes, declared once for the host's controller and the
 * fleet's (one builder for both). With the kinds it watches, config/rbac.yaml is generated from
 * these writes (docs/rbac.md), and rbac-minimal.int.test.ts shows each resulting rule is needed.
 */
function databaseController<B extends ControllerDeclaration>(builder: B): B {
  return builder
    .owns(SECRET)
    .owns(CONFIG_MAP)
    .owns(SERVICE)
    .owns(STATEFUL_SET)
    .writes(DATABASE, ['patch']) // the finalizer: handleFinalizer merge-patches metadata.finalizers
    .writes(DATABASE, ['patch'], { subresource: 'status' }) // patchStatus
    .writes(SECRET, ['create']) // created once, never patched: its password is never regenerated
    .writes(CONFIG_MAP, ['create', 'patch']) // createOrPatch
    .writes(SERVICE, ['create', 'patch'])
    .writes(STATEFUL_SET, ['create', 'patch']);
}
