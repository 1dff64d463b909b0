/**
 * Plan mode against a real control plane (issue 38): Databases converged by the operator, then the
 * cluster made to hold what a previous version of it wrote (another engine config in every
 * Database's ConfigMap); the operator run with `plan` lists the changes an upgrade would make —
 * one ConfigMap patch per Database, as a diff — and etcd's own history shows it persisted nothing
 * (no PUT or DELETE under the test's namespace); a real run afterwards makes exactly the writes the
 * plan listed. `PLAN_DATABASES` sets how many (10 here; `npm run test:plan` runs 100).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, createLogger, createMetricsRegistry, type Kubeconfig } from 'operator-runtime';
import type { ObjectTimeline, PlanLine, PlanWriteLine } from 'operator-runtime/manager';
import { TestEnv, eventually, readManifests } from 'operator-runtime/testing';
import { readEtcdHistory } from 'operator-runtime/testing/chaos';
import { DATABASE, type Database } from './src/database.js';
import { CONTROLLER_NAME } from './src/database-reconciler.js';
import { createDatabaseOperator, type DatabaseOperatorOptions } from './src/operator.js';
import { CONFIG_MAP, desiredConfigMap, names } from './src/resources.js';

/** One object's timeline from the console's HTTP API (`api/history`). */
async function timelineOf(consoleUrl: string, controller: string, key: string): Promise<ObjectTimeline> {
  const res = await fetch(`${consoleUrl}api/history?${new URLSearchParams({ controller, key })}`);
  if (!res.ok) throw new Error(`api/history answered ${res.status}`);
  return (await res.json()) as ObjectTimeline;
}

const COUNT = Number(process.env.PLAN_DATABASES ?? 10);
const NS = 'plan';
const OLD_CONFIG = { 'postgresql.conf': "listen_addresses = '*'\nmax_connections = 20\n" };

/** What a write was, comparable across a plan and a real run (Events have generated names: left out). */
const describeWrite = (w: {
  verb: string;
  subresource?: string;
  kind: string;
  namespace?: string;
  name: string;
  diff: unknown;
}): string =>
  `${w.verb}${w.subresource ? `/${w.subresource}` : ''} ${w.kind} ${w.namespace}/${w.name} ${JSON.stringify(w.diff)}`;

describe(`plan mode on ${COUNT} Databases after a spec-affecting operator change`, () => {
  let env: TestEnv;
  let client: KubeClient;
  const dbNames = Array.from({ length: COUNT }, (_, i) => `db-${String(i).padStart(3, '0')}`);

  /** Runs the operator until `until` holds (or, in plan mode, until it ends by itself); returns it. */
  async function runOperator(
    extra: Partial<DatabaseOperatorOptions>,
    until?: (operator: ReturnType<typeof createDatabaseOperator>) => Promise<unknown>,
  ): Promise<ReturnType<typeof createDatabaseOperator>> {
    const registry = createMetricsRegistry();
    const operatorClient = await KubeClient.fromKubeconfig({
      kubeconfig: env.kubeconfig as unknown as Kubeconfig,
      registry,
    });
    const operator = createDatabaseOperator({
      client: operatorClient,
      registry,
      logger: createLogger({ level: 'silent' }),
      backupEndpoint: 'http://127.0.0.1:9/',
      metricsPort: 0,
      healthPort: 0,
      maxConcurrentReconciles: 8,
      ...extra,
    });
    const stop = new AbortController();
    const running = operator.manager.start(stop.signal);
    try {
      if (until) await until(operator);
      else await running;
    } finally {
      stop.abort();
      await running;
      await operator.close();
      await operatorClient.close();
    }
    return operator;
  }

  const configOf = async (name: string): Promise<Record<string, string> | undefined> =>
    (await client.get(CONFIG_MAP, names.configMap({ metadata: { name } } as Database), { namespace: NS })).data;

  before(async () => {
    env = await TestEnv.start({ crds: await readManifests(new URL('./config/crd.yaml', import.meta.url)) });
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const name of dbNames)
      await client.create({
        apiVersion: 'example.com/v1',
        kind: 'Database',
        metadata: { name, namespace: NS },
        spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
      });
    // Converged by the operator: every Database's status written for its generation.
    await runOperator({}, () =>
      eventually('every Database reconciled', async () => {
        const { items } = await client.list<Database>(DATABASE, { namespace: NS });
        return items.length === COUNT && items.every((db) => db.status?.observedGeneration === db.metadata.generation)
          ? true
          : undefined;
      }),
    );
    // What the previous version of the operator wrote: another engine config.
    for (const name of dbNames)
      await client.patch(
        CONFIG_MAP,
        `${name}-config`,
        { data: { ...OLD_CONFIG, 'postgresql.conf': OLD_CONFIG['postgresql.conf'] } },
        {
          namespace: NS,
          type: 'merge',
        },
      );
  });

  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('the plan lists the changes, nothing is persisted, and a real run makes the same writes', async () => {
    const startRevision = (await env.etcdRevision()) + 1;
    const lines: PlanLine[] = [];
    const started = performance.now();
    await runOperator({ plan: { output: (line) => lines.push(line), quietMs: 500 }, consolePort: 0 });
    const planMs = performance.now() - started;

    // The report: one reconcile per Database, one ConfigMap patch each, as a diff, as a dry run.
    const reconciled = lines.filter((l) => l.plan === 'reconcile');
    assert.deepEqual(new Set(reconciled.map((l) => l.key)), new Set(dbNames.map((n) => `${NS}/${n}`)));
    assert.equal(reconciled.length, COUNT, 'each key once');
    const writes = lines.filter((l): l is PlanWriteLine => l.plan === 'write' && l.kind !== 'Event');
    assert.equal(writes.length, COUNT, writes.map(describeWrite).join('\n'));
    for (const w of writes) {
      assert.equal(w.verb, 'patch');
      assert.equal(w.kind, 'ConfigMap');
      assert.equal(w.dryRun, true);
      assert.equal(w.controller, CONTROLLER_NAME);
      const db = { metadata: { name: w.key.split('/')[1]!, namespace: NS }, spec: { engine: 'postgres', replicas: 1 } };
      assert.deepEqual(w.diff, { data: desiredConfigMap(db as Database).data });
    }
    const summary = lines.at(-1)!;
    assert.equal(summary.plan, 'summary');

    // etcd's own history: nothing under the namespace changed while the plan ran.
    const { events } = await readEtcdHistory({ endpoints: env.etcdEndpoints, prefix: '/registry/', startRevision });
    const persisted = events.filter((e) => e.kv.key.includes(`/${NS}/`));
    assert.deepEqual(
      persisted.map((e) => `${e.type} ${e.kv.key}`),
      [],
      'the plan persisted no write',
    );
    for (const name of dbNames) assert.deepEqual(await configOf(name), OLD_CONFIG, 'still the old config');

    // A real run makes the writes the plan listed (its history records them the same way).
    // The timelines are read over the console's API while the operator still serves it.
    let timelines: ObjectTimeline[] = [];
    await runOperator({ consolePort: 0 }, async (operator) => {
      await eventually('every ConfigMap updated', async () => {
        for (const name of dbNames)
          if ((await configOf(name))?.['postgresql.conf'] === OLD_CONFIG['postgresql.conf']) return undefined;
        return true;
      });
      const consoleUrl = operator.manager.endpoints.consoleUrl!;
      timelines = await Promise.all(dbNames.map((name) => timelineOf(consoleUrl, CONTROLLER_NAME, `${NS}/${name}`)));
    });
    const real = timelines.flatMap((t) => t.reconciles.flatMap((r) => r.writes.filter((w) => w.kind !== 'Event')));
    assert.ok(real.every((w) => !w.dryRun));
    // The same audit does see a run that persists: the check above can fail.
    const afterReal = await readEtcdHistory({ endpoints: env.etcdEndpoints, prefix: '/registry/', startRevision });
    assert.ok(afterReal.events.filter((e) => e.kv.key.includes(`/${NS}/`)).length >= COUNT);
    assert.deepEqual(real.map(describeWrite).sort(), writes.map(describeWrite).sort());
    console.log(
      `# plan of ${COUNT} Databases: ${planMs.toFixed(0)} ms, ${writes.length} writes planned, ${events.length} etcd events in the window (none in ${NS})`,
    );
  });
});
