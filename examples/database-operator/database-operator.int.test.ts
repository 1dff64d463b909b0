import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient, createLogger, createMetricsRegistry, type Kubeconfig } from 'operator-runtime';
import { computeKstatus } from 'operator-runtime/helpers';
import { TestEnv, eventually, kubectl, readManifests } from 'operator-runtime/testing';
import type { Registry } from 'prom-client';
import { BackupService } from './testing/backup-service.js';
import { DATABASE, FINALIZER, type Database } from './src/database.js';
import type { DatabaseOperator } from './src/operator.js';
import { createOperatorUnderTest } from './testing/operator-rig.js';
import { SECRET, STATEFUL_SET } from './src/resources.js';

const crdFile = new URL('./config/crd.yaml', import.meta.url);
const NS = 'default';

function database(name: string, spec: Partial<Database['spec']> = {}) {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Database',
    metadata: { name, namespace: NS },
    spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi', ...spec },
  };
}

/** Writes (POST/PUT/PATCH/DELETE) the operator's client made, from its own rest_client metrics. */
async function writes(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric('rest_client_requests_total')!.get();
  return metric.values.filter((v) => v.labels.method !== 'GET').reduce((sum, v) => sum + v.value, 0);
}

describe('the Database operator against a real control plane', () => {
  let env: TestEnv;
  let client: KubeClient;
  let operatorClient: KubeClient;
  let backups: BackupService;
  let operator: DatabaseOperator;
  let registry: Registry;
  const stop = new AbortController();
  let running: Promise<void>;
  const reconciles = new Map<string, number>();
  const ended: string[] = [];

  const get = (name: string) => client.get<Database>(DATABASE, name, { namespace: NS });
  const ready = (name: string) =>
    eventually(`${name} Ready`, async () => {
      const db = await get(name);
      return db.status?.phase === 'Ready' && db.status.observedGeneration === db.metadata.generation ? db : undefined;
    });

  before(async () => {
    env = await TestEnv.start({
      crds: await readManifests(crdFile),
      controllerManager: true,
      simulatePods: { readyDelayMs: 100 },
    });
    backups = new BackupService({ backupDurationMs: 1500 });
    await backups.start();
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    registry = createMetricsRegistry();
    operatorClient = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig, registry });
    operator = createOperatorUnderTest({
      client: operatorClient,
      registry,
      logger: createLogger({ level: 'silent' }),
      backupEndpoint: backups.url,
      metricsPort: 0,
      healthPort: 0,
      backupPollMs: 300,
      observer: {
        reconciled: ({ key }) => {
          reconciles.set(key, (reconciles.get(key) ?? 0) + 1);
          ended.push(key);
        },
      },
    });
    running = operator.manager.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    await running;
    await operator?.close();
    await operatorClient?.close();
    await client?.close();
    await backups?.stop();
    await env?.stop();
  });

  test('create → Ready with observedGeneration, owned objects controlled by the Database', async () => {
    await client.create(database('alpha', { replicas: 2 }));
    const db = await ready('alpha');
    assert.equal(db.status?.readyReplicas, 2);
    assert.deepEqual(db.metadata.finalizers, [FINALIZER]);
    assert.equal(db.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    // kstatus: Current, every condition at the generation observed, no Reconciling or Stalled left.
    assert.equal(computeKstatus(db).status, 'Current');
    assert.ok(db.status?.conditions?.every((c) => c.observedGeneration === db.metadata.generation));
    // Its status shows each dependent: one condition per owned object (dependentsOf), each True.
    assert.deepEqual(db.status?.conditions?.map((c) => c.type).sort(), [
      'ConfigMapReady',
      'Provisioned',
      'Ready',
      'SecretReady',
      'ServiceReady',
      'StatefulSetReady',
    ]);
    assert.ok(db.status?.conditions?.every((c) => c.status === 'True'));
    assert.equal(db.status?.conditions?.find((c) => c.type === 'StatefulSetReady')?.message, '2/2 replicas ready');
    for (const [type, name] of [
      [SECRET, 'alpha-credentials'],
      [STATEFUL_SET, 'alpha'],
      [{ apiVersion: 'v1', kind: 'Service' }, 'alpha'],
      [{ apiVersion: 'v1', kind: 'ConfigMap' }, 'alpha-config'],
    ] as const) {
      const owned = await client.get<{ metadata?: { ownerReferences?: { uid: string; controller?: boolean }[] } }>(
        type,
        name,
        { namespace: NS },
      );
      assert.equal(owned.metadata?.ownerReferences?.[0]?.uid, db.metadata.uid, `${type.kind} ${name} is owned`);
      assert.equal(owned.metadata?.ownerReferences?.[0]?.controller, true);
    }
  });

  test('a spec change updates the StatefulSet and status follows', async () => {
    await client.patch(DATABASE, 'alpha', { spec: { replicas: 3 } }, { namespace: NS, type: 'merge' });
    const db = await eventually('alpha with 3 ready replicas', async () => {
      const d = await get('alpha');
      return d.status?.readyReplicas === 3 &&
        d.status.phase === 'Ready' &&
        d.status.observedGeneration === d.metadata.generation
        ? d
        : undefined;
    });
    const sts = await client.get(STATEFUL_SET, 'alpha', { namespace: NS });
    assert.equal(sts.spec?.replicas, 3);
    assert.equal(db.metadata.generation, 2);
  });

  test('a no-op reconcile makes zero API writes, and status-only changes cause no reconcile', async () => {
    await ready('alpha');
    await new Promise((r) => setTimeout(r, 500)); // let the last events settle
    const before = await writes(registry);
    const endedBefore = ended.length;
    operator.controller.enqueue({ namespace: NS, name: 'alpha' });
    await eventually('the forced reconcile to end', async () => ended.length > endedBefore);
    assert.equal(await writes(registry), before, 'nothing drifted, so nothing was written');

    const count = reconciles.get(`${NS}/alpha`)!;
    await client.patchStatus(DATABASE, 'alpha', { status: { endpoint: 'tampered' } }, { namespace: NS, type: 'merge' });
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(reconciles.get(`${NS}/alpha`), count, 'a status-only change is not a reason to reconcile');
  });

  test('invalid specs are rejected by the API server, naming the field', async () => {
    await assert.rejects(client.create(database('bad', { replicas: 12 })), /spec\.replicas/);
    await assert.rejects(client.create(database('bad', { engine: 'oracle' as 'postgres' })), /spec\.engine/);
    await assert.rejects(client.create(database('bad', { storage: 'lots' })), /spec\.storage/);
  });

  test('an unsupported version → Degraded with a reason and a Warning event, without a hot loop', async () => {
    await client.create(database('oldie', { version: '9' }));
    const db = await eventually('oldie Degraded', async () => {
      const d = await get('oldie');
      return d.status?.phase === 'Degraded' ? d : undefined;
    });
    assert.equal(db.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'UnsupportedVersion');
    // kstatus: Stalled (only a spec change helps), so Flux reports Failed and Argo CD Degraded.
    assert.equal(db.status?.conditions?.find((c) => c.type === 'Stalled')?.status, 'True');
    assert.equal(computeKstatus(db).status, 'Failed');
    await new Promise((r) => setTimeout(r, 2000));
    assert.ok(reconciles.get(`${NS}/oldie`)! <= 3, `bounded reconciles, got ${reconciles.get(`${NS}/oldie`)}`);
    const events = await kubectl(env.kubeconfigPath, [
      'get',
      'events',
      '-n',
      NS,
      '--field-selector',
      'involvedObject.name=oldie,type=Warning',
      '-o',
      'jsonpath={.items[*].reason}',
    ]);
    assert.match(events, /UnsupportedVersion/);
  });

  test('a deleted Secret is recreated with a new password and a Warning event; a hand-edited StatefulSet is restored', async () => {
    const secretBefore = await client.get(SECRET, 'alpha-credentials', { namespace: NS });
    await client.delete(SECRET, 'alpha-credentials', { namespace: NS });
    const secretAfter = await eventually('a new secret', async () => {
      const s = await client.get(SECRET, 'alpha-credentials', { namespace: NS });
      return s.metadata?.uid !== secretBefore.metadata?.uid ? s : undefined;
    });
    assert.ok(Buffer.from(secretAfter.data?.password ?? '', 'base64').length >= 20);
    await eventually('a SecretRecreated warning', async () =>
      /SecretRecreated/.test(
        await kubectl(env.kubeconfigPath, [
          'get',
          'events',
          '-n',
          NS,
          '--field-selector',
          'involvedObject.name=alpha,type=Warning',
          '-o',
          'jsonpath={.items[*].reason}',
        ]),
      ),
    );

    await client.patch(STATEFUL_SET, 'alpha', { spec: { replicas: 7 } }, { namespace: NS, type: 'merge' });
    await eventually(
      'replicas restored to 3',
      async () => (await client.get(STATEFUL_SET, 'alpha', { namespace: NS })).spec?.replicas === 3,
    );
    // The surviving Secret is never regenerated by these reconciles.
    const still = await client.get(SECRET, 'alpha-credentials', { namespace: NS });
    assert.equal(still.metadata?.uid, secretAfter.metadata?.uid);
  });

  test('delete → exactly one backup, the finalizer removed only after it completed, owned objects collected', async () => {
    const db = await get('alpha');
    await client.delete(DATABASE, 'alpha', { namespace: NS });
    await eventually(
      'alpha gone',
      async () =>
        client.get(DATABASE, 'alpha', { namespace: NS }).then(
          () => false,
          (err: { status?: number }) => err.status === 404,
        ),
      { timeoutMs: 30_000 },
    );
    const mine = backups.backups().filter((b) => b.uid === db.metadata.uid);
    assert.equal(mine.length, 1, 'exactly one backup for this deletion');
    assert.equal(mine[0]!.state, 'completed');
    assert.ok(Date.parse(mine[0]!.completedAt!) >= Date.parse(mine[0]!.startedAt) + 1500);
    await eventually('the StatefulSet garbage-collected', async () =>
      client.get(STATEFUL_SET, 'alpha', { namespace: NS }).then(
        () => false,
        (err: { status?: number }) => err.status === 404,
      ),
    );
  });

  test('backup service down → finalizer kept, BackedUp=False and a Warning event; then success when it recovers', async () => {
    await client.create(database('beta'));
    await ready('beta');
    backups.setFaults({ down: true });
    await client.delete(DATABASE, 'beta', { namespace: NS });
    const stuck = await eventually('BackedUp=False', async () => {
      const d = await get('beta');
      return d.status?.conditions?.find(
        (c) => c.type === 'BackedUp' && c.status === 'False' && c.reason === 'BackupFailed',
      )
        ? d
        : undefined;
    });
    assert.deepEqual(stuck.metadata.finalizers, [FINALIZER], 'the finalizer stays while the backup cannot run');
    assert.equal(stuck.status?.phase, 'Deleting');
    // Tenants read status and Events: the service's own words (its 503 body) are not repeated there.
    const failed = stuck.status?.conditions?.find((c) => c.type === 'BackedUp');
    assert.ok(failed);
    assert.match(failed.message, /HTTP 503/);
    assert.doesNotMatch(failed.message, /unavailable|injected|127\.0\.0\.1/);
    await eventually('a BackupFailed warning', async () =>
      /BackupFailed/.test(
        await kubectl(env.kubeconfigPath, [
          'get',
          'events',
          '-n',
          NS,
          '--field-selector',
          'involvedObject.name=beta,type=Warning',
          '-o',
          'jsonpath={.items[*].reason}',
        ]),
      ),
    );
    backups.setFaults({});
    await eventually(
      'beta gone',
      async () =>
        client.get(DATABASE, 'beta', { namespace: NS }).then(
          () => false,
          (err: { status?: number }) => err.status === 404,
        ),
      { timeoutMs: 40_000 },
    );
    assert.equal(backups.backups().filter((b) => b.uid === stuck.metadata.uid && b.state === 'completed').length, 1);
  });

  test('server-side request forgery: an endpoint outside the allow-list gets a condition, and no request is ever made to it', async () => {
    let hits = 0;
    const trap: Server = createServer((_req, res) => {
      hits++;
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"id":"trap","state":"completed"}');
    });
    await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
    const trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
    try {
      await client.create(database('ssrf', { backup: { endpoint: trapUrl } }));
      const refused = await eventually('BackupEndpointAllowed=False', async () => {
        const d = await get('ssrf');
        return d.status?.conditions?.find(
          (c) => c.type === 'BackupEndpointAllowed' && c.status === 'False' && c.reason === 'EndpointNotAllowed',
        )
          ? d
          : undefined;
      });
      assert.doesNotMatch(JSON.stringify(refused.status), /127\.0\.0\.1:\d+/, "the tenant's URL is not echoed");
      await client.delete(DATABASE, 'ssrf', { namespace: NS });
      const stuck = await eventually('BackedUp=False EndpointNotAllowed', async () => {
        const d = await get('ssrf');
        return d.status?.conditions?.find(
          (c) => c.type === 'BackedUp' && c.status === 'False' && c.reason === 'EndpointNotAllowed',
        )
          ? d
          : undefined;
      });
      assert.deepEqual(stuck.metadata.finalizers, [FINALIZER], 'no backup, so the finalizer stays');
      await eventually('an EndpointNotAllowed warning', async () =>
        /EndpointNotAllowed/.test(
          await kubectl(env.kubeconfigPath, [
            'get',
            'events',
            '-n',
            NS,
            '--field-selector',
            'involvedObject.name=ssrf,type=Warning',
            '-o',
            'jsonpath={.items[*].reason}',
          ]),
        ),
      );
      assert.equal(hits, 0, "the operator never called the tenant's endpoint");
      // Naming no endpoint (the operator's own) lets the deletion finish.
      await client.patch(DATABASE, 'ssrf', { spec: { backup: { endpoint: null } } }, { namespace: NS, type: 'merge' });
      await eventually(
        'ssrf gone',
        async () =>
          client.get(DATABASE, 'ssrf', { namespace: NS }).then(
            () => false,
            (err: { status?: number }) => err.status === 404,
          ),
        { timeoutMs: 30_000 },
      );
      assert.equal(hits, 0);
    } finally {
      await new Promise<void>((resolve) => trap.close(() => resolve()));
    }
  });

  test("owned kinds are cached by the managed-by label: a tenant's own Secrets and ConfigMaps never enter the operator's memory", async () => {
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tenant-token', namespace: NS },
      stringData: { token: 'x' },
    });
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'tenant-config', namespace: NS },
      data: { a: 'b' },
    });
    await client.create(database('gamma'));
    await ready('gamma');
    const secrets = await operator.manager.cache.list<{ metadata: { name: string; labels?: Record<string, string> } }>(
      SECRET,
    );
    assert.ok(secrets.some((s) => s.metadata.name === 'gamma-credentials'));
    assert.ok(
      secrets.every((s) => s.metadata.labels?.['app.kubernetes.io/managed-by'] === 'database-operator'),
      secrets.map((s) => s.metadata.name).join(','),
    );
    const configMaps = await operator.manager.cache.list<{ metadata: { name: string } }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
    });
    assert.ok(!configMaps.some((c) => c.metadata.name === 'tenant-config' || c.metadata.name === 'kube-root-ca.crt'));
    const names = operator.manager.informers
      .list()
      .map((i) => i.name)
      .filter((n) => /Secret|ConfigMap|Service|StatefulSet/.test(n));
    assert.ok(
      names.length >= 4 && names.every((n) => n.includes('labels=app.kubernetes.io/managed-by=database-operator')),
      names.join('; '),
    );
  });
});
