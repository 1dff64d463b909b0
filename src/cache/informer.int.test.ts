/**
 * The informer against a real API server (TestEnv), through the real KubeClient and
 * `clientListerWatcherFactory`: broken watches of every kind under random writes, a silent watch,
 * and a 403 that turns into a grant. Faults come from a TCP proxy between the informer's client
 * and kube-apiserver (cut, freeze) and from the control plane itself (restart, compaction).
 *
 * ConfigMaps are served without the watch cache (`--watch-cache-sizes=configmaps#0`), so an etcd
 * compaction makes their watches answer 410; Widgets (a CRD) keep the watch cache, so an API
 * server restart does ("too old resource version"). One env covers both paths.
 *
 * `CACHE_PROPERTY_ROUNDS=<n>` runs the property test with n faults instead of the default 6.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { keyOf, type KubeObject } from '../core/object-key.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { NOTE_CRD, WIDGET_CRD } from '../testing/conformance/client-conformance.js';
import { clientListerWatcherFactory } from './client-lister-watcher.js';
import type { EventHandler } from './handler-dispatcher.js';
import { InformerFactory, type InformerFactoryOptions } from './informer-factory.js';
import type { SharedInformer } from './informer.js';
import { TcpProxy } from './testing/tcp-proxy.js';
import { until, versions, viaPort, withoutManagedFields } from './testing/int-helpers.js';
import { deletedObject, isTombstone, type Tombstone } from './tombstone.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
/** A ConfigMap-shaped custom resource: the second kind on the 1.36 server, which serves no ConfigMaps. */
const NOTE = { apiVersion: 'example.com/v1', kind: 'Note' } as const;
type Kind = typeof WIDGET | typeof CM | typeof NOTE;

const ROUNDS = Number(process.env.CACHE_PROPERTY_ROUNDS ?? 6);

/** A handler that rebuilds the world from its calls and records every break of the delivery contract. */
class Replica {
  readonly objects = new Map<string, KubeObject>();
  readonly violations: string[] = [];
  /** uids this handler was given (by add) and uids it was told are gone. */
  readonly given = new Set<string>();
  readonly deleted = new Set<string>();
  tombstones = 0;
  calls = 0;

  constructor(private readonly slow: boolean) {}

  get handler(): EventHandler<KubeObject> {
    return {
      add: (obj) => this.step(() => this.add(obj)),
      update: (old, obj) => this.step(() => this.update(old, obj)),
      delete: (obj) => this.step(() => this.delete(obj)),
    };
  }

  private async step(f: () => void): Promise<void> {
    this.calls++;
    // A slow handler lets changes pile up per key, so coalescing is exercised, not only the fast path.
    if (this.slow) await new Promise((r) => setTimeout(r, Math.random() * 3));
    f();
  }

  private add(obj: KubeObject): void {
    const key = keyOf(obj);
    if (this.objects.has(key)) this.violations.push(`add(${key}) while the handler still holds it`);
    this.objects.set(key, obj);
    this.given.add(obj.metadata!.uid!);
  }

  private update(old: KubeObject, obj: KubeObject): void {
    const key = keyOf(obj);
    if (this.objects.get(key) !== old)
      this.violations.push(`update(${key}): old is not what this handler was last given`);
    if (old.metadata?.uid !== obj.metadata?.uid)
      this.violations.push(`update(${key}) across uids: a delete and re-create was hidden`);
    this.objects.set(key, obj);
    this.given.add(obj.metadata!.uid!);
  }

  private delete(x: KubeObject | Tombstone<KubeObject>): void {
    const obj = deletedObject(x);
    const key = keyOf(obj);
    const held = this.objects.get(key);
    if (!held) this.violations.push(`delete(${key}) of an object the handler was not given`);
    else if (held.metadata?.uid !== obj.metadata?.uid)
      this.violations.push(`delete(${key}) names another uid than the one held`);
    if (isTombstone(x)) this.tombstones++;
    this.objects.delete(key);
    if (held?.metadata?.uid) this.deleted.add(held.metadata.uid);
  }
}

interface DriverStats {
  creates: number;
  updates: number;
  deletes: number;
  failures: number;
}

/** Random creates, updates and deletes on a small pool of names (so names are re-used by new uids). */
async function drive(
  client: KubeClient,
  namespace: string,
  signal: AbortSignal,
  stats: DriverStats,
  other: Kind = CM,
): Promise<void> {
  const worker = async (): Promise<void> => {
    while (!signal.aborted) {
      const kind: Kind = Math.random() < 0.5 ? WIDGET : other;
      const name = `o${Math.floor(Math.random() * 20)}`;
      const r = Math.random();
      const value = Math.floor(Math.random() * 10) + 1;
      try {
        if (r < 0.4) {
          await client.create(
            kind === WIDGET
              ? { ...WIDGET, metadata: { name, namespace }, spec: { size: value } }
              : { ...kind, metadata: { name, namespace }, data: { v: String(value) } },
          );
          stats.creates++;
        } else if (r < 0.75) {
          await client.patch(kind, name, kind === WIDGET ? { spec: { size: value } } : { data: { v: String(value) } }, {
            namespace,
            type: 'merge',
          });
          stats.updates++;
        } else {
          await client.delete(kind, name, { namespace });
          stats.deletes++;
        }
      } catch {
        // 404/409 from the random choice, or the API server restarting: the server's state is the truth.
        stats.failures++;
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
}

/** Waits until `informer`'s store holds exactly what a fresh quorum list returns, then compares objects. */
async function assertStoreEqualsServer(
  informer: SharedInformer<KubeObject>,
  client: KubeClient,
  kind: Kind,
  namespace: string,
): Promise<KubeObject[]> {
  let server: KubeObject[] = [];
  await until(
    async () => {
      server = (await client.list(kind, { namespace })).items; // no resourceVersion: a quorum read
      return JSON.stringify(versions(informer.reader.list())) === JSON.stringify(versions(server));
    },
    60_000,
    `the ${kind.kind} store to equal the server`,
    100,
  ).catch((err: unknown) => {
    assert.deepEqual(versions(informer.reader.list()), versions(server), String(err));
  });
  const byKey = new Map(informer.reader.list().map((o) => [keyOf(o), o]));
  for (const o of server)
    assert.deepEqual(
      byKey.get(keyOf(o)),
      withoutManagedFields(o),
      `${kind.kind} ${keyOf(o)} differs from the server's`,
    );
  return server;
}

/**
 * The property test proper, on either server: Widgets plus `other` (ConfigMaps on 1.20, Notes on
 * the CRD-only 1.36 server) under random writes, cut watches, restarts and compactions.
 */
async function propertyTest(t: TestContext, env: TestEnv, admin: KubeClient, ns: string, other: Kind): Promise<void> {
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(env.server).port) });
  const client = await KubeClient.fromKubeconfig({
    kubeconfig: viaPort(env.kubeconfig, proxy.port) as unknown as Kubeconfig,
    requestTimeoutMs: 15_000,
  });
  const options: InformerFactoryOptions = {
    pageSize: 7, // several pages per list, so continue tokens (and their expiry) are exercised
    minWatchTimeoutMs: 3_000, // clean server closes every few seconds: resume from the last resourceVersion
    backoff: { initialMs: 50, maxMs: 1_000 },
    listTimeoutMs: 20_000,
  };
  const factory = new InformerFactory(clientListerWatcherFactory(client), options);
  const informers: Record<string, SharedInformer<KubeObject>> = {
    [WIDGET.kind]: factory.informerFor({ ...WIDGET, namespace: ns }),
    [other.kind]: factory.informerFor({ ...other, namespace: ns }),
  };
  const replicas = new Map<string, Replica[]>();
  for (const [kind, informer] of Object.entries(informers)) {
    const fast = new Replica(false);
    const slow = new Replica(true);
    informer.addEventHandler(fast.handler, { name: 'fast' });
    informer.addEventHandler(slow.handler, { name: 'slow' });
    replicas.set(kind, [fast, slow]);
  }
  const stop = new AbortController();
  const run = factory.start(stop.signal);
  const stats: DriverStats = { creates: 0, updates: 0, deletes: 0, failures: 0 };
  const drivers = new AbortController();
  let driving: Promise<void> | undefined;
  const faults: string[] = [];
  try {
    await factory.waitForSync(stop.signal, 30_000);
    // How each informer made its first sync, before any fault: the mode of a later relist depends on
    // where the last fault fell (a watch-list cut before its bookmark is followed by one list+watch
    // sync, as in client-go: watcher-step.ts), so only this one is fixed by the server's version.
    const firstSyncModes = Object.fromEntries(Object.values(informers).map((i) => [i.name, i.health().listMode]));
    driving = drive(admin, ns, drivers.signal, stats, other);
    const schedule = ['cut', 'compact', 'restart', 'cut', 'compact', 'cut'];
    for (let round = 0; round < ROUNDS; round++) {
      // Let writes land between faults; sometimes a fault hits a relist still in progress.
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 1200));
      const fault =
        round < schedule.length
          ? schedule[round]!
          : (['cut', 'cut', 'compact', 'compact', 'restart'] as const)[Math.floor(Math.random() * 5)]!;
      faults.push(fault);
      if (fault === 'cut') {
        proxy.cut();
        continue;
      }
      // The informer goes deaf first, so writes happen that it has not seen: its resourceVersion
      // falls behind, and the next watch after compaction (etcd) or restart (watch cache) is a 410.
      proxy.freeze();
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 300));
      if (fault === 'compact') await env.compact();
      else await env.restartApiServer();
      proxy.thaw();
      proxy.cut();
    }
    await new Promise((r) => setTimeout(r, 500));
    drivers.abort();
    await driving;

    const servers: Record<string, KubeObject[]> = {};
    for (const kind of [WIDGET, other])
      servers[kind.kind] = await assertStoreEqualsServer(informers[kind.kind]!, admin, kind, ns);

    for (const kind of [WIDGET, other]) {
      const informer = informers[kind.kind]!;
      await informer.whenHandlersIdle();
      const server = servers[kind.kind]!;
      const alive = new Set(server.map((o) => o.metadata!.uid!));
      for (const replica of replicas.get(kind.kind)!) {
        assert.deepEqual(replica.violations, [], `${kind.kind} handler contract`);
        assert.deepEqual(
          versions(replica.objects.values()),
          versions(server),
          `${kind.kind} handler replica equals the server`,
        );
        const undeleted = [...replica.given].filter((uid) => !alive.has(uid) && !replica.deleted.has(uid));
        assert.deepEqual(
          undeleted,
          [],
          `${kind.kind}: every object a handler was given and that is gone was deleted in it`,
        );
      }
    }
    // The faults did what they are for: compaction made ConfigMaps relist (1.20, no watch cache for
    // them), the restart made the custom resources relist. On 1.36 the first sync was by watch-list.
    const otherLists = informers[other.kind]!.health().lists;
    assert.ok(
      otherLists >= 2,
      `${other.kind}s relisted after ${other === CM ? 'compaction' : 'the restart'} (lists: ${otherLists})`,
    );
    assert.ok(
      informers[WIDGET.kind]!.health().lists >= 2,
      `Widgets relisted after the restart (lists: ${informers[WIDGET.kind]!.health().lists})`,
    );
    if (other !== CM)
      for (const i of Object.values(informers))
        assert.equal(firstSyncModes[i.name], 'watch-list', `${i.name}: the 1.36 server syncs by watch-list`);

    // Still live, and nothing stale replayed after convergence: a new write arrives and the rest holds.
    await admin.create({ ...other, metadata: { name: 'marker', namespace: ns } });
    await admin.create({ ...WIDGET, metadata: { name: 'marker', namespace: ns }, spec: { size: 1 } });
    await until(
      () => informers[other.kind]!.reader.has(`${ns}/marker`) && informers[WIDGET.kind]!.reader.has(`${ns}/marker`),
      20_000,
      'the markers',
    );
    for (const kind of [WIDGET, other]) await assertStoreEqualsServer(informers[kind.kind]!, admin, kind, ns);

    const deletes = [...replicas.values()].flat().map((r) => r.deleted.size);
    const tombstones = [...replicas.values()].flat().map((r) => r.tombstones);
    t.diagnostic(
      `faults ${faults.join(',')}; driver ${JSON.stringify(stats)}; deletes delivered ${deletes.join('/')}, tombstones ${tombstones.join('/')}; lists W=${informers[WIDGET.kind]!.health().lists} ${other.kind}=${informers[other.kind]!.health().lists}`,
    );
  } finally {
    drivers.abort();
    await driving;
    stop.abort();
    await run;
    await client.close();
    await proxy.close();
  }
}

describe('informer against a real API server', () => {
  let env: TestEnv;
  let admin: KubeClient;

  before(async () => {
    env = await TestEnv.start({ crds: [WIDGET_CRD], apiServerFlags: ['--watch-cache-sizes=configmaps#0'] });
    admin = await KubeClient.fromKubeconfig({
      kubeconfig: env.kubeconfig as unknown as Kubeconfig,
      requestTimeoutMs: 15_000,
    });
  });
  after(async () => {
    await admin?.close();
    await env?.stop();
  });

  const namespace = async (name: string): Promise<string> => {
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return name;
  };

  test('under random writes, cut watches, API server restarts and compactions, the store and every handler end equal to a quorum list, deletes included', async (t) => {
    await propertyTest(t, env, admin, await namespace('prop'), CM);
  });

  test('a watch that goes silent (connection held, nothing sent) is torn down by the stall guard and resumed', async () => {
    const ns = await namespace('stall');
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: Number(new URL(env.server).port) });
    const client = await KubeClient.fromKubeconfig({
      kubeconfig: viaPort(env.kubeconfig, proxy.port) as unknown as Kubeconfig,
    });
    // Idle limit = timeoutSeconds (2–3 s) + 1 s margin; undici's own body timeout would take 30 s more.
    const factory = new InformerFactory(clientListerWatcherFactory(client), {
      minWatchTimeoutMs: 2_000,
      stallMarginMs: 1_000,
      backoff: { initialMs: 50, maxMs: 500 },
    });
    const informer = factory.informerFor({ ...CM, namespace: ns });
    const stop = new AbortController();
    const run = factory.start(stop.signal);
    try {
      await factory.waitForSync(stop.signal, 30_000);
      // A change arriving proves a watch is open and streaming before it goes silent.
      await admin.create({ ...CM, metadata: { name: 'before', namespace: ns } });
      await until(() => informer.reader.has(`${ns}/before`), 10_000, 'the change before the freeze');
      assert.equal(informer.health().lastError, undefined);

      proxy.freeze();
      await admin.create({ ...CM, metadata: { name: 'during', namespace: ns } });
      await until(() => informer.health().lastError?.code === 'ERR_WATCH_STALLED', 15_000, 'the stall guard');
      assert.equal(informer.reader.has(`${ns}/during`), false, 'nothing got through the silent connection');

      proxy.thaw();
      await until(() => informer.reader.has(`${ns}/during`), 15_000, 'the resumed watch to deliver the change');
      const h = informer.health();
      assert.ok(h.restarts >= 1);
      assert.equal(h.lists, 1, 'resumed from its resourceVersion, no relist needed');
    } finally {
      stop.abort();
      await run;
      await client.close();
      await proxy.close();
    }
  });

  test('an informer refused with 403 keeps retrying with backoff, shows the error in health(), and syncs by itself once RBAC grants list and watch', async () => {
    const ns = await namespace('rbac');
    await admin.create({ ...WIDGET, metadata: { name: 'w1', namespace: ns }, spec: { size: 1 } });
    const user = await env.userKubeconfig({ user: 'cache-reader' });
    const client = await KubeClient.fromKubeconfig({ path: user.path });
    const factory = new InformerFactory(clientListerWatcherFactory(client), {
      backoff: { initialMs: 100, maxMs: 800 },
    });
    const informer = factory.informerFor({ ...WIDGET, namespace: ns });
    const stop = new AbortController();
    const run = factory.start(stop.signal);
    try {
      const startedAt = Date.now();
      await until(() => informer.health().consecutiveFailures >= 3, 15_000, 'three refused lists');
      const refused = informer.health();
      assert.equal(refused.lastError?.status, 403);
      assert.equal(refused.synced, false);
      assert.equal(informer.hasSynced(), false);
      // Backoff, not a hot loop: 100 ms doubling (±20 %) allows only a handful of tries this soon.
      const elapsed = Date.now() - startedAt;
      assert.ok(
        refused.consecutiveFailures <= 2 + elapsed / 80,
        `${refused.consecutiveFailures} failures in ${elapsed} ms`,
      );

      await admin.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'widget-reader', namespace: ns },
        rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['list', 'watch'] }],
      });
      await admin.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'widget-reader', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'widget-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'cache-reader' }],
      });
      await informer.waitForSync(stop.signal, 20_000);
      assert.ok(informer.reader.has(`${ns}/w1`));
      // The watch is allowed too: a later change arrives without another list.
      await admin.create({ ...WIDGET, metadata: { name: 'w2', namespace: ns }, spec: { size: 2 } });
      await until(() => informer.reader.has(`${ns}/w2`), 15_000, 'a change through the watch');
      const h = informer.health();
      assert.equal(h.state, 'watching');
      assert.equal(h.consecutiveFailures, 0);
      assert.equal(h.lists, 1);
    } finally {
      stop.abort();
      await run;
      await client.close();
    }
  });
});

describe('informer against the Kubernetes 1.36 CRD-only API server', () => {
  let env: TestEnv;
  let admin: KubeClient;

  before(async () => {
    env = await TestEnv.start({ server: 'modern', crds: [WIDGET_CRD, NOTE_CRD] });
    admin = await KubeClient.fromKubeconfig({
      kubeconfig: env.kubeconfig as unknown as Kubeconfig,
      requestTimeoutMs: 15_000,
    });
  });
  after(async () => {
    await admin?.close();
    await env?.stop();
  });

  test('Kubernetes 1.36: under random writes, cut watches, API server restarts and compactions, the store and every handler end equal to a quorum list, deletes included (syncs by watch-list)', async (t) => {
    await propertyTest(t, env, admin, 'prop', NOTE);
  });
});
