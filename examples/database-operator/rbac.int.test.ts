import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { KubeClient, createMetricsRegistry, type Kubeconfig } from 'operator-runtime';
import { TestEnv, eventually, freePort, kubectl, readManifests, recordingLogger } from 'operator-runtime/testing';
import { fileURLToPath } from 'node:url';
import { BackupService } from './src/backup-service.js';
import { DATABASE, type Database } from './src/database.js';
import { createDatabaseOperator, type DatabaseOperator, type DatabaseOperatorOptions } from './src/operator.js';

const crdFile = new URL('./config/crd.yaml', import.meta.url);
const rbacFile = fileURLToPath(new URL('./config/rbac.yaml', import.meta.url));
const OPERATOR_NS = 'database-operator-system';

describe('the operator runs with only the permissions config/rbac.yaml grants', () => {
  let env: TestEnv;
  let admin: KubeClient;
  let backups: BackupService;
  let saKubeconfig: Kubeconfig;

  before(async () => {
    env = await TestEnv.start({ crds: await readManifests(crdFile), controllerManager: true, simulatePods: { readyDelayMs: 100 } });
    await kubectl(env.kubeconfigPath, ['apply', '-f', rbacFile]);
    const token = await env.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${OPERATOR_NS}/serviceaccounts/database-operator/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    });
    assert.equal(token.status, 201, JSON.stringify(token.body));
    const kc = structuredClone(env.kubeconfig) as unknown as { users: { user: Record<string, unknown> }[] };
    kc.users[0]!.user = { token: token.body.status.token };
    saKubeconfig = kc as unknown as Kubeconfig;
    admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    backups = new BackupService({ backupDurationMs: 200 });
    await backups.start();
  });

  after(async () => {
    await admin?.close();
    await backups?.stop();
    await env?.stop();
  });

  async function runOperator<T>(body: (log: ReturnType<typeof recordingLogger>, operator: DatabaseOperator) => Promise<T>, extra: Partial<DatabaseOperatorOptions> = {}): Promise<T> {
    const client = await KubeClient.fromKubeconfig({ kubeconfig: saKubeconfig });
    const log = recordingLogger();
    const operator = createDatabaseOperator({
      client,
      registry: createMetricsRegistry(),
      logger: log,
      backupEndpoint: backups.url,
      leaderElectionNamespace: OPERATOR_NS,
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      metricsPort: 0,
      healthPort: 0,
      backupPollMs: 200,
      ...extra,
    });
    const stop = new AbortController();
    const running = operator.manager.start(stop.signal);
    try {
      return await body(log, operator);
    } finally {
      stop.abort();
      await running.catch(() => undefined);
      await operator.close();
      await client.close();
    }
  }

  test('with the manifest roles the operator elects itself, provisions and finalizes a Database', async () => {
    await runOperator(async () => {
      await admin.create({ apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'rbac-db', namespace: 'default' }, spec: { engine: 'mysql', version: '8.0', replicas: 1, storage: '1Gi' } });
      await eventually('rbac-db Ready', async () => (await admin.get<Database>(DATABASE, 'rbac-db', { namespace: 'default' })).status?.phase === 'Ready');
      const lease = await admin.get<{ spec: { holderIdentity: string } }>({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' }, 'database-operator', { namespace: OPERATOR_NS });
      assert.ok(lease.spec.holderIdentity);
      await admin.delete(DATABASE, 'rbac-db', { namespace: 'default' });
      await eventually('rbac-db gone', async () => admin.get(DATABASE, 'rbac-db', { namespace: 'default' }).then(() => false, (e: { status?: number }) => e.status === 404));
    });
  });

  test('with secure metrics the operator\'s own roles suffice to review scrapers: the metrics-reader binding gets 200, anyone else 403', async () => {
    await kubectl(env.kubeconfigPath, ['create', 'serviceaccount', 'scraper', '-n', OPERATOR_NS]);
    await kubectl(env.kubeconfigPath, ['create', 'clusterrolebinding', 'scraper-metrics', '--clusterrole=database-operator-metrics-reader', `--serviceaccount=${OPERATOR_NS}:scraper`]);
    const tokenOf = async (sa: string) => {
      const res = await env.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${OPERATOR_NS}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } });
      assert.equal(res.status, 201);
      return res.body.status.token;
    };
    const scrape = (port: number, token: string) => new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/metrics', rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      }).on('error', reject).end();
    });
    const port = await freePort();
    await runOperator(async (_log, operator) => {
      await eventually('metrics listening', async () => operator.manager.metricsPort === port);
      assert.equal(await scrape(port, await tokenOf('scraper')), 200);
      assert.equal(await scrape(port, await tokenOf('database-operator')), 403, 'the operator itself is not a metrics reader');
    }, { metricsPort: port, healthPort: 0, secureMetrics: {} });
  });

  test('removing one rule (create statefulsets) makes the operator fail with a clear Forbidden', async () => {
    const role = await admin.get<{ rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }>({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }, 'database-operator');
    const rules = role.rules.map((r) => (r.resources.includes('statefulsets') ? { ...r, verbs: r.verbs.filter((v) => v !== 'create') } : r));
    await admin.patch({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' }, 'database-operator', { rules }, { type: 'merge' });
    await runOperator(async (log) => {
      await admin.create({ apiVersion: 'example.com/v1', kind: 'Database', metadata: { name: 'forbidden-db', namespace: 'default' }, spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' } });
      const entry = await eventually('a Forbidden reconcile error', async () => log.entries.find((e) => e.level === 'error' && /forbidden/i.test(String((e.obj.err as Error | undefined)?.message)) && /statefulsets/.test(String((e.obj.err as Error | undefined)?.message))));
      assert.match(String((entry.obj.err as Error).message), /403 Forbidden/);
    });
  });
});
