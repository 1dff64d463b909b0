import type { Registry } from 'prom-client';
import type { InformerCache } from '../cache/informer-cache.js';
import type { InformerFactory } from '../cache/informer-factory.js';
import type { Client } from '../client/contracts.js';
import type { SharedInformer } from '../cache/informer.js';
import type { KubeObject } from '../core/object-key.js';
import { Cluster } from '../cluster/cluster.js';
import type { ResourceType } from '../client/discovery.js';
import { whenAborted } from '../core/abort.js';
import { realClock, type Clock } from '../core/clock.js';
import { AlreadyStartedError, InvalidOptionError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { ControllerBuilder } from '../controller/controller-builder.js';
import type { ControllerCacheOptions, ControllerHost } from '../controller/controller-host.js';
import { EventRecorder, RECORDER_PERMISSION, type RecordedEvent } from '../controller/event-recorder.js';
import type { HealthCheck } from './health-checks.js';
import { ConsoleState } from '../console/console-state.js';
import { DEFAULT_HEALTH_PORT, Endpoints } from './endpoints.js';
import type { EndpointServer } from './http-server.js';
import { RunnableGroup, type GroupMember } from './runnable-group.js';
import { DEFAULT_SECURE_METRICS_PORT, validateSecureMetricsOptions } from './secure-metrics.js';
import type { Runnable, RunnableOptions } from './runnable.js';
import { StopOnFailure } from './stop-on-failure.js';
import { alwaysHeld, termRunnable } from './term.js';
import { Webhooks } from '../webhook/webhooks.js';
import { validateWebhookServerOptions } from '../webhook/webhook-server.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import { Sharding } from '../sharding/sharding.js';
import { shardAwareClient } from '../sharding/shard-aware-client.js';
import type { ShardMembership } from '../sharding/sharding-options.js';
import { Fleet, type FleetView } from '../fleet/fleet.js';
import { MemberEventRecorder } from '../fleet/member-event-recorder.js';
import { fleetTarget, type FleetControllerHost } from '../fleet/fleet-controller-target.js';
import type { FleetControllerBuilder } from '../fleet/fleet-controller-builder.js';
import type { FleetOptions } from '../fleet/fleet-options.js';
import { shardedClusters } from '../fleet/sharded-clusters.js';
import { MemberTermBridge } from './member-term-bridge.js';
import { heapCompactionRunnable } from './heap-compactor.js';
import { observedWritesClient } from './observed-writes-client.js';
import { PlanRun } from './plan-mode.js';
import { ReconcileWrites } from '../console/reconcile-writes.js';
import { objectKey as keyOf } from '../core/object-key.js';
import {
  DEFAULT_MANAGER_GRACEFUL_SHUTDOWN_MS,
  DEFAULT_UNHEALTHY_WATCH_FAILURES,
  type ManagerOptions,
} from './manager-options.js';

/** Which group a runnable added to the manager joins: sharded ones run while this replica holds its ring membership. */
type Placement = 'every-replica' | 'leader-only' | 'sharded';

interface Entry {
  readonly member: GroupMember;
  readonly placement: Placement;
}

/**
 * The `Manager` implementation (`new Manager(options)` builds one; only the interface in
 * manager.ts is public). Owns the host `Cluster` (its client, informer cache and delegating client),
 * one metrics registry and one logger, and runs its parts as groups (`RunnableGroup`), in order: HTTP endpoints → caches (until synced) → runnables that every
 * replica runs → the leader term (leader-only runnables, controllers, once elected) and, when
 * sharded, the member term (sharded controllers, while in the ring). Stops in reverse order. Two
 * managers share nothing.
 */
export class ControllerManager {
  /**
   * Reads from the cache (starting a kind's informer on first use), writes to the API server —
   * controller-runtime's delegating client. Use it in reconcilers. With `sharding`, reads of a
   * sharded primary kind go to the API server: the cache would hold every object of it again.
   */
  readonly client: Client;
  /** The API client itself: reads that must not come from the cache (a quorum read, a subresource). */
  readonly apiClient: Client;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly informers: InformerFactory;
  /** Cache-backed reads (get/list/byIndex) of everything the manager watches. */
  readonly cache: InformerCache;
  readonly gracefulShutdownMs: number;
  /** The console's data, when `console` is set (controllers built by `controller()` feed it). */
  readonly console: ConsoleState | undefined;
  /** Admission and conversion handlers (`validate`, `mutate`, `convert`), served with the `webhook` option. */
  readonly webhooks = new Webhooks();
  /** The namespaces the cache is restricted to (`namespaces` option); undefined: cluster-wide. */
  readonly namespaces: readonly string[] | undefined;
  /** Whether /metrics is served only to authorized scrapers (`secureMetrics`). */
  readonly secureMetricsEnabled: boolean;
  /** Plan mode's run (`plan` option): the writes planned so far. */
  readonly plan: PlanRun | undefined;
  /** This replica's ring membership, with the `sharding` option. */
  get sharding(): ShardMembership | undefined {
    return this.ring;
  }

  /** The ring membership and sharder (`sharding` option); `sharding` shows what users may read of it. */
  private readonly ring: Sharding | undefined;
  private readonly fleetRuntime: Fleet | undefined;
  private readonly memberRequirements: PermissionRequirement[] = [];
  private readonly entries: Entry[] = [];
  private readonly requirements: PermissionRequirement[] = [];
  private readonly healthChecks = new Map<string, HealthCheck>();
  private readonly readyChecks = new Map<string, HealthCheck>();
  private readonly options: ManagerOptions;
  /** The host cluster: its client, informers, cache and delegating client. */
  private readonly hostCluster: Cluster;
  /** What controllers built by `controller()` see of this manager. */
  private readonly host: ControllerHost;
  /** Where the endpoints listen, once started. */
  readonly endpoints: Endpoints;
  private started = false;
  private cachesSynced = false;

  constructor(options: ManagerOptions) {
    this.options = options;
    this.apiClient = options.client;
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? silentLogger;
    this.registry = options.registry ?? createMetricsRegistry({ defaultMetrics: true });
    this.gracefulShutdownMs = options.gracefulShutdownMs ?? DEFAULT_MANAGER_GRACEFUL_SHUTDOWN_MS;
    this.namespaces = options.namespaces?.length ? [...options.namespaces] : undefined;
    this.secureMetricsEnabled = options.secureMetrics !== undefined;
    for (const [name, value] of [
      ['metricsPort', options.metricsPort],
      ['healthPort', options.healthPort],
      ['gracefulShutdownMs', options.gracefulShutdownMs],
      ['cacheSyncTimeoutMs', options.cacheSyncTimeoutMs],
      ['ownWritesWaitMs', options.ownWritesWaitMs],
    ] as const) {
      if (value !== undefined && !(Number.isFinite(value) && value >= 0))
        throw new InvalidOptionError(name, 'must be a number >= 0');
    }
    if (options.secureMetrics) {
      validateSecureMetricsOptions(options.secureMetrics);
      const metricsPort = options.metricsPort ?? DEFAULT_SECURE_METRICS_PORT;
      if (metricsPort > 0 && metricsPort === (options.healthPort ?? DEFAULT_HEALTH_PORT)) {
        throw new InvalidOptionError(
          'metricsPort',
          'secure metrics need their own port: health probes stay plain HTTP',
        );
      }
    }
    this.hostCluster = new Cluster({
      apiClient: this.apiClient,
      ...omitUndefined({
        restMapper: options.restMapper,
        namespaces: options.namespaces,
        labelSelectorsByKind: options.labelSelectorsByKind,
        syncTimeoutMs: options.cacheSyncTimeoutMs,
        ownWritesWaitMs: options.ownWritesWaitMs,
      }),
      clock: this.clock,
      logger: this.logger,
      registry: this.registry,
    });
    this.informers = this.hostCluster.informers;
    this.cache = this.hostCluster.cache;
    this.ring = options.sharding
      ? new Sharding(options.sharding, {
          client: this.apiClient,
          clock: this.clock,
          logger: this.logger,
          registry: this.registry,
          ...omitUndefined({ namespaces: this.namespaces }),
        })
      : undefined;
    const cached = this.hostCluster.client;
    // Sharded: reads of a sharded primary kind go to the API server, never to an unfiltered informer.
    this.client = this.ring ? shardAwareClient(cached, this.apiClient, this.ring) : cached;
    this.host = this.controllerHost();
    this.fleetRuntime = options.fleet
      ? new Fleet(this.fleetOptions(options.fleet), {
          clock: this.clock,
          logger: this.logger,
          registry: this.registry,
          ...omitUndefined({
            ownWritesWaitMs: options.ownWritesWaitMs,
            labelSelectorsByKind: options.labelSelectorsByKind,
          }),
        })
      : undefined;
    // The console's server options (port, host) ride along unused: ConsoleState reads only its own.
    this.console = options.console
      ? new ConsoleState({
          ...options.console,
          clock: this.clock,
          informers: () => this.informers.health(),
          clusters: () => this.fleetRuntime?.health() ?? [],
          ...omitUndefined({ leaderElection: options.leaderElection }),
        })
      : undefined;
    this.plan = this.planRun(options);
    const observed = this.observeWrites();
    if (observed) ({ client: this.client, apiClient: this.apiClient } = observed);
    const { registry, logger, clock, webhooks, console, healthChecks, readyChecks } = this;
    this.endpoints = new Endpoints(options, {
      client: options.client,
      registry,
      logger,
      clock,
      webhooks,
      console,
      healthChecks,
      readyChecks,
    });
    this.healthChecks.set('ping', () => true);
    this.readyChecks.set('informers', () => this.informersReady());
    const compactor = heapCompactionRunnable(options.heapCompaction, {
      clock: this.clock,
      registry: this.registry,
      logger: this.logger.child({ component: 'heap' }),
      ready: () => this.informersReady(),
    });
    if (compactor) this.add(compactor, { name: 'heap-compaction', needLeaderElection: false });
    if (options.webhook) {
      validateWebhookServerOptions(options.webhook);
      this.readyChecks.set('webhook', () => this.endpoints.webhook?.serving ?? false);
    }
    if (options.secureMetrics) {
      const reason = 'secure metrics: authenticate and authorize scrapers';
      this.requirePermissions(
        { resource: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview' }, verbs: ['create'], reason },
        { resource: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview' }, verbs: ['create'], reason },
      );
    }
    const election = options.leaderElection?.requiredPermissions?.();
    if (election) this.requirePermissions(...election);
    if (this.ring) this.add(this.ring.sharder(), { name: 'sharder', needLeaderElection: true });
    const fleet = this.fleetRuntime;
    if (fleet) {
      this.requirePermissions(...fleet.providerPermissions());
      // Member caches run on every replica, as the host's do: a new leader finds them synced.
      this.add(fleet, { name: 'fleet', needLeaderElection: false });
      if (fleet.readiness === 'all-clusters') this.readyChecks.set('fleet', () => fleet.allReady());
    }
  }

  /** Plan mode's run, after checking what plan mode cannot do. */
  private planRun(options: ManagerOptions): PlanRun | undefined {
    if (!options.plan) return undefined;
    if (options.sharding) throw new InvalidOptionError('plan', 'cannot run sharded: a plan takes no membership Lease');
    if (options.fleet) throw new InvalidOptionError('plan', 'cannot plan for member clusters (fleet)');
    return new PlanRun(options.plan, {
      clock: this.clock,
      writes: this.console?.writes ?? new ReconcileWrites(),
      informers: () => this.informers.health(),
    });
  }

  /**
   * With the console's history or plan mode, `client` and `apiClient` report each write (into the
   * reconcile in progress, and plan mode's report) — in plan mode as a dry run. The cluster's own
   * caches keep the plain client: reads need no observing.
   */
  private observeWrites(): { client: Client; apiClient: Client } | undefined {
    const consoleState = this.console;
    const history = consoleState && this.options.console?.history !== false;
    const plan = this.plan;
    if (!history && !plan) return undefined;
    const writes = consoleState?.writes ?? new ReconcileWrites();
    const cache = this.cache;
    const observe = (client: Client): Client =>
      observedWritesClient(client, {
        dryRun: plan !== undefined,
        onWrite: (write) => {
          const scope = history ? consoleState.writes.record(write) : writes.current();
          plan?.wrote(write, scope);
        },
        before: (type, namespace, name) => {
          for (const { informer } of cache.existingInformersHolding(type, namespace)) {
            const found = informer.reader.get(keyOf({ namespace, name }));
            if (found !== undefined) return found;
          }
          return undefined;
        },
      });
    return { client: observe(this.client), apiClient: observe(this.apiClient) };
  }

  /**
   * The member clusters (`fleet` option): each connected one's view (client, cache, labels) and
   * every engaged one's health. Undefined without the option.
   */
  get fleet(): FleetView | undefined {
    return this.fleetRuntime;
  }

  /**
   * Records what the operator needs RBAC to allow. Controllers, the event recorder, leader election
   * and secure metrics record theirs; call it for anything else the operator does (a direct read
   * through `apiClient`, a feature's own Leases). Never changes what the manager does.
   */
  requirePermissions(...requirements: PermissionRequirement[]): void {
    this.requirements.push(...requirements);
  }

  /** Everything recorded so far: what `rbacManifests` (operator-runtime/rbac) turns into Roles. */
  permissions(): readonly PermissionRequirement[] {
    // Sharding's are read now: its primary kinds are known once the controllers are built.
    return [...this.requirements, ...(this.ring?.requiredPermissions() ?? [])];
  }

  /**
   * What fleet controllers need RBAC to allow in every member cluster (kept apart from
   * `permissions()`, which is the host cluster's): `rbacManifests` of it is what a member's
   * ServiceAccount (the one its kubeconfig authenticates as) must be bound to.
   */
  memberPermissions(): readonly PermissionRequirement[] {
    return [...this.memberRequirements];
  }

  /**
   * Starts building a fleet controller: the same declarations as `controller()`, reconciling the
   * `for` kind's objects in every member cluster, one queue for all of them (keys
   * `cluster/namespace/name`). Needs the `fleet` option.
   */
  fleetController(name: string): FleetControllerBuilder {
    const fleet = this.fleetRuntime;
    if (!fleet) throw new InvalidOptionError('fleet', `fleet controller ${name} needs the manager's fleet option`);
    const host: FleetControllerHost = {
      clock: this.clock,
      logger: this.logger,
      registry: this.registry,
      gracefulShutdownMs: this.gracefulShutdownMs,
      fleet,
      trackController: (n) => this.console?.trackController(n),
      add: (runnable, options) => this.add(runnable, options),
      requireMemberPermissions: (...requirements) => this.memberRequirements.push(...requirements),
    };
    return new ControllerBuilder((d) => fleetTarget(host, d), name);
  }

  /** Starts building a controller whose runnable is added to this manager by `complete()`. */
  controller(name: string): ControllerBuilder {
    return new ControllerBuilder(this.host, name);
  }

  /** An event recorder writing through this manager's client, as `component`. */
  eventRecorder(component: string): EventRecorder {
    this.requirePermissions({ ...RECORDER_PERMISSION, reason: `event recorder ${component}` });
    const onRecorded = this.consoleEventFeed();
    return new EventRecorder({
      client: this.apiClient,
      component,
      clock: this.clock,
      logger: this.logger,
      ...omitUndefined({ onRecorded }),
    });
  }

  /**
   * Events about objects in member clusters, as `component`: `recorder.in(ctx.cluster).event(…)`
   * writes to that member's API server, and the console lists them with the cluster's name.
   * Declares `create`/`patch` of Events in `memberPermissions()`. Needs the `fleet` option.
   */
  memberEventRecorder(component: string): MemberEventRecorder {
    if (!this.fleetRuntime)
      throw new InvalidOptionError('fleet', `member event recorder ${component} needs the manager's fleet option`);
    this.memberRequirements.push({ ...RECORDER_PERMISSION, reason: `member event recorder ${component}` });
    const onRecorded = this.consoleEventFeed();
    return new MemberEventRecorder({
      component,
      clock: this.clock,
      logger: this.logger,
      ...omitUndefined({ onRecorded }),
    });
  }

  /** Where recorders report the Events they accept: the console, when it is on. */
  private consoleEventFeed(): ((event: RecordedEvent) => void) | undefined {
    const consoleState = this.console;
    return consoleState && ((e: RecordedEvent): void => consoleState.recordEvent(e));
  }

  /** Adds a runnable; controllers are leader-only by default, like controller-runtime's. */
  add(runnable: Runnable, options: RunnableOptions = {}): void {
    if (this.started) throw new AlreadyStartedError('cannot add a runnable to a started manager');
    const placement: Placement = options.sharded
      ? 'sharded'
      : (options.needLeaderElection ?? true)
        ? 'leader-only'
        : 'every-replica';
    this.entries.push({ member: { runnable, name: options.name ?? `runnable-${this.entries.length + 1}` }, placement });
  }

  addHealthCheck(name: string, check: HealthCheck): void {
    this.healthChecks.set(name, check);
  }

  addReadyCheck(name: string, check: HealthCheck): void {
    this.readyChecks.set(name, check);
  }

  /** Whether a kind is namespaced, from the REST mapper. */
  isNamespaced(type: ResourceType, signal?: AbortSignal): Promise<boolean> {
    return this.hostCluster.isNamespaced(type, signal);
  }

  /**
   * With `fleet.sharded`, the provider is wrapped so this replica engages only the clusters whose
   * Lease it holds, inside the manager's own member term (one membership Lease per replica).
   */
  private fleetOptions(fleet: FleetOptions): FleetOptions {
    if (!fleet.sharded) return fleet;
    const ring = this.ring;
    if (!ring)
      throw new InvalidOptionError(
        'fleet.sharded',
        "dividing clusters among replicas needs the manager's sharding option",
      );
    const bridge = new MemberTermBridge();
    this.add(bridge.runnable, { name: 'fleet-membership', sharded: true });
    return {
      ...fleet,
      provider: shardedClusters(fleet.provider, {
        client: this.apiClient,
        sharding: ring.options,
        membership: bridge.run,
        clock: this.clock,
        logger: this.logger,
        registry: this.registry,
      }),
    };
  }

  private controllerHost(): ControllerHost {
    // A controller with its own label selectors reads through its own view of the shared factory:
    // informers with the same spec are still shared, and the manager's cache stays as configured.
    const cluster = this.hostCluster;
    const cacheFor = (options: ControllerCacheOptions): InformerCache => cluster.cacheView(options);
    const scopeNeeded = (type: ResourceType): boolean => cluster.scopeNeeded(type);
    // Read when a reconcile asks, not now: with the console's history or plan mode the constructor
    // wraps the clients after this host is built, and a reconciler writing through `ctx.cluster`
    // must be observed (in plan mode: dry-run) like one writing through `manager.client`.
    const clients = (): { client: Client; apiClient: Client } => this;
    return {
      clock: this.clock,
      logger: this.logger,
      registry: this.registry,
      gracefulShutdownMs: this.gracefulShutdownMs,
      cluster: {
        name: '',
        labels: {},
        get client() {
          return clients().client;
        },
        get apiClient() {
          return clients().apiClient;
        },
        get synced() {
          return cluster.hasSynced();
        },
      },
      trackController: (name) => {
        const view = this.console?.trackController(name);
        return this.plan ? this.plan.track(name, view) : view;
      },
      prepareInformers: (type, options) => {
        if (!scopeNeeded(type)) cacheFor(options).informersFor(type);
      },
      informersFor: async (type, options, signal): Promise<SharedInformer<KubeObject>[]> => {
        if (scopeNeeded(type)) await cluster.mapper.mapping(type, signal);
        return cacheFor(options).informersFor(type);
      },
      isNamespaced: (type, signal) => this.isNamespaced(type, signal),
      observedOwnWrites: (informers, key, signal) => cluster.observedOwnWrites(informers, key, signal),
      add: (runnable, options) => this.add(runnable, options),
      requirePermissions: (...requirements) => this.requirePermissions(...requirements),
      ...omitUndefined({ sharding: this.ring }),
    };
  }

  /**
   * Runs everything until `signal` aborts, then stops in reverse order within the graceful
   * shutdown period. Rejects if a runnable fails, caches do not sync in time, or leadership is lost
   * (after leader-only work stopped) — the process should then exit non-zero.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new AlreadyStartedError('the manager was already started');
    this.started = true;
    const log = this.logger.child({ component: 'manager' });
    // One internal signal stops everything: the caller's, or a failure of any part.
    const stop = new StopOnFailure(signal);
    const { servers, caches, everyReplica, terms } = this.groups(stop, log);
    try {
      await servers.start();
      log.info(
        { metricsPort: this.endpoints.metricsPort, healthPort: this.endpoints.healthPort },
        'endpoints listening',
      );
      await caches.start();
      this.cachesSynced = true;
      log.info({ informers: this.informers.list().length }, 'caches synced');
      // In one step: the elections start in the same tick as the work every replica runs.
      await Promise.all([everyReplica.start(stop.signal), terms.start()]);
      // Plan mode ends by itself once every key was reconciled and the queues are quiet.
      await (this.plan ? this.plan.quiet(stop.signal) : whenAborted(stop.signal));
    } catch (err) {
      stop.fail(err);
    } finally {
      log.info({}, 'stopping');
      // Terms first (each: its work, then its Lease), then every-replica work, caches, servers.
      for (const group of [terms, everyReplica, caches, servers]) await group.stop();
      stop.dispose();
      log.info({}, 'stopped');
    }
    if (stop.failure !== undefined) throw stop.failure;
  }

  /**
   * The groups one run starts in order. Work runs under the stop signal (all of it stops at once,
   * seeing the reason); servers, caches and the terms' holders stop one by one, in reverse.
   */
  private groups(
    stop: StopOnFailure,
    log: Logger,
  ): Record<'servers' | 'caches' | 'everyReplica' | 'terms', RunnableGroup> {
    const onFailure = (err: unknown, runnable: string): void => {
      log.error({ err, runnable }, 'runnable failed: stopping the manager');
      stop.fail(err);
    };
    const work = (name: Placement): RunnableGroup => new RunnableGroup(name, { onFailure }).add(...this.placed(name));
    const caches = new RunnableGroup('caches', { onFailure }).add({
      name: 'informers',
      runnable: this.hostCluster,
      ready: () => this.hostCluster.waitForSync(stop.signal),
    });
    const term = { stopping: stop.signal, fail: stop.fail, logger: log };
    // A plan takes no Lease: it may run beside the operator it plans for.
    const election = this.plan ? undefined : this.options.leaderElection;
    const terms = new RunnableGroup('terms', { onFailure }).add({
      name: 'leader-election',
      runnable: termRunnable(election ? (s, w) => election.run(s, w) : alwaysHeld, {
        ...term,
        work: () => work('leader-only'),
        startMessage: 'starting leader-only runnables',
        lostMessage: 'leadership lost: stopping leader-only runnables',
      }),
    });
    const sharding = this.ring;
    // Sharded controllers run while this replica holds its membership Lease; losing it fences them
    // like leadership. Added last, so stopped first: sharded work, then leave the ring (the sharder
    // may hand our keys on only after that), and only then leader-only work and the election.
    if (sharding) {
      terms.add({
        name: 'ring-membership',
        runnable: termRunnable((s, w) => sharding.runMember(s, w), {
          ...term,
          work: () => work('sharded'),
          startMessage: 'starting sharded controllers',
          lostMessage: 'ring membership lost: stopping sharded controllers',
          fields: { member: sharding.memberId },
        }),
      });
    }
    const servers = new RunnableGroup('servers', { onFailure }).add(...this.endpoints.members());
    return { servers, caches, everyReplica: work('every-replica'), terms };
  }

  private placed(placement: Placement): GroupMember[] {
    return this.entries.filter((e) => e.placement === placement).map((e) => e.member);
  }

  private informersReady(): boolean {
    return this.cachesSynced && this.hostCluster.healthy(DEFAULT_UNHEALTHY_WATCH_FAILURES);
  }

  /** White-box tests read these. */
  private get metricsServer(): EndpointServer | undefined {
    return this.endpoints.metrics;
  }

  private get healthServer(): EndpointServer | undefined {
    return this.endpoints.health;
  }
}
