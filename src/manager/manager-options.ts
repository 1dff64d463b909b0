/** What a manager is built from (`new Manager(options)`), and the defaults it falls back to. */
import type { Registry } from 'prom-client';
import type { KindLabelSelector } from '../cache/informer-cache.js';
import type { Client, RestMapper } from '../client/contracts.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { ConsoleOptions } from '../console/console-options.js';
import type { WebhookServerOptions } from '../webhook/webhook-server.js';
import type { ShardingOptions } from '../sharding/sharding-options.js';
import type { FleetOptions } from '../fleet/fleet-options.js';
import { DEFAULT_HEALTH_PORT, DEFAULT_METRICS_PORT } from './endpoints.js';
import type { PlanOptions } from './plan-mode.js';
import type { HeapCompactionOptions } from './heap-compactor.js';
import type { LeaderElection } from './runnable.js';
import type { SecureMetricsOptions } from './secure-metrics.js';

export { DEFAULT_HEALTH_PORT, DEFAULT_METRICS_PORT };
/** @defaultValue 30,000 ms */
export const DEFAULT_MANAGER_GRACEFUL_SHUTDOWN_MS = 30_000;
/** A watcher failing this many times in a row makes /readyz fail. @defaultValue 3 */
export const DEFAULT_UNHEALTHY_WATCH_FAILURES = 3;

export interface ManagerOptions {
  /** The API client (a `KubeClient`, or the fake client in tests). */
  readonly client: Client;
  /**
   * Knows each kind's scope: cluster-scoped kinds are cached cluster-wide even with `namespaces`,
   * and owner keys of cluster-scoped owners carry no namespace. @defaultValue `client.mapper`
   */
  readonly restMapper?: RestMapper;
  /** Cache only these namespaces (one watch per namespace per kind); all when omitted. */
  readonly namespaces?: readonly string[];
  /**
   * Cache only the objects of these kinds that match a label selector (e.g. owned Secrets labelled
   * `app.kubernetes.io/managed-by=<operator>`): reads, `owns()` handlers and indexes of the kind see
   * only them, and the rest of the cluster's objects are never held in memory. @defaultValue none
   */
  readonly labelSelectorsByKind?: readonly KindLabelSelector[];
  /** 0 disables the /metrics server. @defaultValue {@link DEFAULT_METRICS_PORT}, or {@link DEFAULT_SECURE_METRICS_PORT} with `secureMetrics` */
  readonly metricsPort?: number;
  /**
   * Serve /metrics over HTTPS, only to bearer tokens allowed to `get` it (TokenReview +
   * SubjectAccessReview through `client`; RBAC needs `create` on tokenreviews and
   * subjectaccessreviews). Needs its own port (health probes stay plain HTTP). @defaultValue plain HTTP, no authentication
   */
  readonly secureMetrics?: SecureMetricsOptions;
  /** 0 disables the /healthz and /readyz server. @defaultValue {@link DEFAULT_HEALTH_PORT} */
  readonly healthPort?: number;
  /** Where the endpoints listen. @defaultValue '0.0.0.0' in a pod (KUBERNETES_SERVICE_HOST set), '127.0.0.1' elsewhere */
  readonly bindHost?: string;
  /** How long stopping may take for in-flight reconciles. @defaultValue {@link DEFAULT_MANAGER_GRACEFUL_SHUTDOWN_MS} */
  readonly gracefulShutdownMs?: number;
  /** @defaultValue `DEFAULT_CACHE_SYNC_TIMEOUT_MS` (120 s) */
  readonly cacheSyncTimeoutMs?: number;
  /**
   * How long a cached read of `client` waits for the cache to observe the client's own earlier
   * writes (read-your-own-writes, docs/read-your-own-writes.md); 0 turns it off.
   * @defaultValue `DEFAULT_OWN_WRITES_WAIT_MS` (5 s)
   */
  readonly ownWritesWaitMs?: number;
  /**
   * Leader election (a `LeaderElector`); without it every runnable runs at once (one replica).
   * Losing leadership aborts leader-only runnables with a reason whose code is
   * `ERR_LEADERSHIP_LOST`; controllers then abort in-flight reconciles at once (fencing).
   */
  readonly leaderElection?: LeaderElection;
  /** A fresh registry (with Node process metrics) when omitted — never the global one. */
  readonly registry?: Registry;
  readonly logger?: Logger;
  readonly clock?: Clock;
  /**
   * Serves the read-only operator console (page at `/`, JSON at `/api/state`) on its own port,
   * loopback by default (`console.host`). Off when omitted. `{}` means port 8082 on 127.0.0.1.
   */
  readonly console?: ConsoleOptions;
  /**
   * Serves the handlers registered on `manager.webhooks` over HTTPS (certificate files reloaded
   * when they change), started before the caches; /readyz fails until it listens. Needed once any
   * handler is registered. @defaultValue no webhook server
   */
  readonly webhook?: WebhookServerOptions;
  /**
   * Scale controllers out across replicas (docs/sharding.md): every replica joins the ring with a
   * membership Lease, and each controller with `.for(kind)` reconciles only the objects assigned to
   * this replica. The sharder that assigns them is leader-only: give the manager `leaderElection`
   * too. @defaultValue not sharded
   */
  readonly sharding?: ShardingOptions;
  /**
   * Member clusters besides this one (the host, where the manager's own client, caches and leader
   * election live): a provider engages them at run time, each with its own caches, and
   * `fleetController()` reconciles their objects (docs/fleet.md). @defaultValue no fleet
   */
  readonly fleet?: FleetOptions;
  /**
   * Once the caches are synced and the process has been idle for a while after a busy phase, run
   * one memory-reducing garbage collection, so the pages the busy phase grew are given back
   * (docs/footprint.md: the reference operator's idle RSS on Node 24, 132 → 107 MiB). Needs V8 12+
   * (Node 22, 24); on Node 20 it does nothing: V8 11 has no such GC, and its memory reducer shrinks
   * an idle heap by itself, sooner or later. `false` turns it off. @defaultValue on with the real clock, off with a fake one (tests)
   */
  readonly heapCompaction?: HeapCompactionOptions | false;
  /**
   * Plan mode (docs/observability.md): every write is sent as a server-side dry run (`dryRun=All`)
   * and reported (JSON lines on stdout by default, and in the console) instead of persisted; reads
   * stay real. Each controller reconciles each key once, and `start()` resolves by itself once
   * every queue is quiet. No leader election runs (a plan takes no Lease, so it can run beside the
   * operator it plans for); sharding and fleets are refused. @defaultValue off
   */
  readonly plan?: PlanOptions;
}
