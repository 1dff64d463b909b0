/**
 * The shipped rules against a real Prometheus scraping the reference Database operator on a real
 * control plane: the recording rules produce series from the operator's own /metrics, and
 * OperatorReconcileErrors fires once a Database is made to fail (its backup before delete fails
 * while the backup service is down). The rule file is rendered from the same source as the
 * shipped one, with every `for` shortened to seconds and a 1 s scrape/evaluation interval.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, createLogger, createMetricsRegistry, type Kubeconfig } from 'operator-runtime';
import { TestEnv, eventually, freePort, readManifests } from 'operator-runtime/testing';
import { BackupService } from '../examples/database-operator/testing/backup-service.js';
import { DATABASE, FINALIZER, type Database } from '../examples/database-operator/src/database.js';
import { createDatabaseOperator, type DatabaseOperator } from '../examples/database-operator/src/operator.js';
import { PrometheusServer, type PromAlert } from './prometheus-server.js';
import { renderRuleFile } from './render.js';
import { RECORD } from './rules-source.js';

const NS = 'default';
const JOB = 'database-operator';
const CONTROLLER = 'database';

function database(name: string): Database {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Database',
    metadata: { name, namespace: NS },
    spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
  } as Database;
}

describe('the shipped Prometheus rules against a real Prometheus scraping the Database operator', () => {
  let env: TestEnv;
  let client: KubeClient;
  let operatorClient: KubeClient;
  let backups: BackupService;
  let operator: DatabaseOperator;
  let prometheus: PrometheusServer;
  const stop = new AbortController();
  let running: Promise<void> | undefined;

  before(async () => {
    env = await TestEnv.start({
      crds: await readManifests(new URL('../examples/database-operator/config/crd.yaml', import.meta.url)),
    });
    backups = new BackupService({ backupDurationMs: 200 });
    await backups.start();
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    const registry = createMetricsRegistry({ defaultMetrics: true });
    operatorClient = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig, registry });
    const metricsPort = await freePort();
    operator = createDatabaseOperator({
      client: operatorClient,
      registry,
      logger: createLogger({ level: 'silent' }),
      backupEndpoint: backups.url,
      // Leader election on, so leader_election_master_status is scraped too (short timings: a test).
      leaderElectionNamespace: NS,
      identity: 'replica-0',
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 1000,
      metricsPort,
      healthPort: 0,
      bindHost: '127.0.0.1',
      backupPollMs: 200,
    });
    running = operator.manager.start(stop.signal);
    prometheus = await PrometheusServer.start({
      scrapeTargets: { [JOB]: [`127.0.0.1:${metricsPort}`] },
      rules: renderRuleFile({ forOverride: '5s' }),
    });
  });

  after(async () => {
    stop.abort();
    await running;
    await prometheus?.stop();
    await operator?.close();
    await operatorClient?.close();
    await client?.close();
    await backups?.stop();
    await env?.stop();
  });

  /** The value of the first sample of a query, or undefined while it has none. */
  const scalar = async (promql: string): Promise<number | undefined> => {
    const [sample] = await prometheus.query(promql);
    return sample ? Number(sample.value[1]) : undefined;
  };
  const firing = async (alertname: string): Promise<PromAlert | undefined> =>
    (await prometheus.alerts()).find((a) => a.labels.alertname === alertname && a.state === 'firing');

  test('Prometheus scrapes the operator, and the recording rules produce series from its metrics', async () => {
    await eventually(
      'the operator target up',
      async () => (await prometheus.targets()).some((t) => t.labels.job === JOB && t.health === 'up'),
      { timeoutMs: 60_000 },
    );
    await client.create(database('steady'));
    await eventually('steady reconciled (finalizer added)', async () =>
      (await client.get<Database>(DATABASE, 'steady', { namespace: NS })).metadata.finalizers?.includes(FINALIZER),
    );

    const mustHaveSeries = [
      RECORD.reconcileRate,
      RECORD.reconcileErrorRate,
      RECORD.reconcileErrorRatio,
      RECORD.reconcileP50,
      RECORD.reconcileP99,
      RECORD.workqueueDepth,
      RECORD.workqueueAddRate,
      RECORD.workqueueWaitP99,
    ];
    for (const record of mustHaveSeries) {
      const samples = await eventually(
        `series for ${record}`,
        async () => {
          const s = await prometheus.query(`${record}{job="${JOB}", controller="${CONTROLLER}"}`);
          return s.length > 0 ? s : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      assert.ok(
        samples.every((s) => Number.isFinite(Number(s.value[1]))),
        `${record}: ${JSON.stringify(samples)}`,
      );
    }
    assert.ok(
      (await scalar(`${RECORD.reconcileRate}{job="${JOB}", controller="${CONTROLLER}", result="success"}`))! > 0,
      'successful reconciles are counted',
    );
    // One replica, leading: the recorded number of leaders is 1 (and OperatorNoLeader stays quiet).
    assert.equal(
      await eventually(
        'one leader recorded',
        () => scalar(`${RECORD.leaders}{job="${JOB}", name="database-operator"}`),
        { timeoutMs: 30_000 },
      ),
      1,
    );
    assert.equal(await firing('OperatorNoLeader'), undefined);
    assert.equal(await firing('OperatorCacheNotSynced'), undefined, 'every cache synced');
  });

  test('OperatorReconcileErrors fires when a Database fails, with its controller and job', async () => {
    // Negative control: nothing had failed, so nothing fires (checked only if no error happened by chance).
    const errorsSoFar = (await scalar(`sum(controller_runtime_reconcile_errors_total{job="${JOB}"})`)) ?? 0;
    if (errorsSoFar === 0) assert.equal(await firing('OperatorReconcileErrors'), undefined, 'no error yet, no alert');

    await client.create(database('doomed'));
    await eventually('doomed reconciled (finalizer added)', async () =>
      (await client.get<Database>(DATABASE, 'doomed', { namespace: NS })).metadata.finalizers?.includes(FINALIZER),
    );
    // Its backup before delete now fails on every attempt: the finalizer stays and the workqueue backs off.
    backups.setFaults({ down: true });
    await client.delete(DATABASE, 'doomed', { namespace: NS });

    const alert = await eventually('OperatorReconcileErrors firing', () => firing('OperatorReconcileErrors'), {
      timeoutMs: 90_000,
      intervalMs: 500,
    }).catch(async (err: unknown) => {
      const ratio = await prometheus.query(RECORD.reconcileErrorRatio);
      throw new Error(
        `no alert; error ratio ${JSON.stringify(ratio)}; alerts ${JSON.stringify(await prometheus.alerts())}; prometheus log: ${prometheus.log()}`,
        { cause: err },
      );
    });
    assert.equal(alert.labels.controller, CONTROLLER);
    assert.equal(alert.labels.job, JOB);
    assert.equal(alert.labels.severity, 'warning');
    assert.match(alert.annotations.summary ?? '', /Controller database fails more than 10% of its reconciles/);
    assert.ok(
      (await scalar(`sum(controller_runtime_reconcile_errors_total{job="${JOB}"})`))! > errorsSoFar,
      "the errors are the operator's own count",
    );
    const doomed = await client.get<Database>(DATABASE, 'doomed', { namespace: NS });
    assert.deepEqual(doomed.metadata.finalizers, [FINALIZER], 'the Database is stuck, as the alert says');

    backups.setFaults({});
  });
});
