/**
 * The generated GitOps health checks (config/health/, from `npm run generate:example`) judged by
 * evaluation on real Databases read back from the API server: each row's status is written the
 * way the reconciler writes it (setKstatusConditions + patchStatus through /status), then the
 * Flux CEL (evaluated in Flux's order by a CEL implementation), the Argo CD Lua (run by Lua 5.1)
 * and the kstatus rules must agree; `kubectl wait --for=condition=Ready` returns for the converged
 * Database and times out for the stalled one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { KubeClient, type Kubeconfig } from 'operator-runtime';
import {
  computeKstatus,
  patchStatus,
  setKstatusConditions,
  type KstatusProgress,
  type KstatusStatus,
} from 'operator-runtime/helpers';
import type { FluxHealthCheckExpr } from 'operator-runtime/codegen';
import { TestEnv, kubectl, readManifests } from 'operator-runtime/testing';
import {
  evaluateArgoCdHealthLua,
  evaluateFluxHealthCheck,
  type FluxStatus,
} from '../../src/codegen/testing/health-check-evaluators.js';
import { DATABASE, type Database } from './src/database.js';

const NS = 'default';
/** A finalizer of the test's own, so a deleted row stays (deleting) while the checks read it. */
const HOLD = 'example.com/test-hold';
const crdFile = new URL('./config/crd.yaml', import.meta.url);
const fluxFile = new URL('./config/health/flux-health-checks.yaml', import.meta.url);
const argoFile = new URL('./config/health/argocd-cm.yaml', import.meta.url);

const FLUX_FOR: Record<KstatusStatus, FluxStatus> = {
  Terminating: 'InProgress',
  InProgress: 'InProgress',
  Failed: 'Failed',
  Current: 'Current',
};
const ARGO_FOR: Record<KstatusStatus, string> = {
  Terminating: 'Progressing',
  InProgress: 'Progressing',
  Failed: 'Degraded',
  Current: 'Healthy',
};

interface Row {
  readonly name: string;
  /** The state the reconciler would write, if any. */
  readonly progress?: KstatusProgress;
  /** What happens after the status write. */
  readonly then?: 'change spec' | 'delete';
  readonly kstatus: KstatusStatus;
  /** Flux's verdict when it differs from FLUX_FOR (an object without status: CEL errors, Flux waits). */
  readonly flux?: FluxStatus;
}

const ROWS: readonly Row[] = [
  { name: 'fresh', kstatus: 'InProgress', flux: 'Unknown' },
  {
    name: 'in-progress',
    progress: { state: 'Reconciling', reason: 'ReplicasNotReady', message: '0/1 replicas ready' },
    kstatus: 'InProgress',
  },
  {
    name: 'ready',
    progress: { state: 'Ready', reason: 'ReplicasReady', message: '1/1 replicas ready' },
    kstatus: 'Current',
  },
  {
    name: 'stalled',
    progress: { state: 'Stalled', reason: 'UnsupportedVersion', message: 'postgres 9 is not supported' },
    kstatus: 'Failed',
  },
  {
    name: 'old-generation',
    progress: { state: 'Ready', reason: 'ReplicasReady', message: '1/1 replicas ready' },
    then: 'change spec',
    kstatus: 'InProgress',
  },
  {
    name: 'deleting',
    progress: { state: 'Ready', reason: 'ReplicasReady', message: '1/1 replicas ready' },
    then: 'delete',
    kstatus: 'Terminating',
  },
];

describe('generated Flux and Argo CD health checks on real Databases', () => {
  let env: TestEnv;
  let client: KubeClient;
  const objects = new Map<string, Database>();

  before(async () => {
    env = await TestEnv.start({ crds: await readManifests(crdFile) });
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    await Promise.all(
      ROWS.map(async (row) => {
        const db = await client.create<Database>({
          apiVersion: 'example.com/v1',
          kind: 'Database',
          metadata: { name: row.name, namespace: NS, ...(row.then === 'delete' ? { finalizers: [HOLD] } : {}) },
          spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
        } as Database);
        if (row.progress) {
          const generation = db.metadata.generation!;
          const conditions = setKstatusConditions(db.status?.conditions, row.progress, {
            observedGeneration: generation,
          });
          await patchStatus(client, db, { ...db.status, conditions });
        }
        if (row.then === 'change spec')
          await client.patch(DATABASE, row.name, { spec: { replicas: 2 } }, { namespace: NS, type: 'merge' });
        if (row.then === 'delete') await client.delete(DATABASE, row.name, { namespace: NS });
        // As Flux and Argo CD see it: read back from the server.
        objects.set(row.name, await client.get(DATABASE, row.name, { namespace: NS }));
      }),
    );
  });

  after(async () => {
    if (objects.has('deleting'))
      await client
        .patch(DATABASE, 'deleting', { metadata: { finalizers: null } }, { namespace: NS, type: 'merge' })
        .catch(() => undefined);
    await client?.close();
    await env?.stop();
  });

  test('the rows are what they claim to be on the server', () => {
    const oldGeneration = objects.get('old-generation')!;
    assert.equal(oldGeneration.metadata.generation, 2);
    assert.equal(oldGeneration.status?.observedGeneration, 1);
    assert.ok(objects.get('deleting')!.metadata.deletionTimestamp);
    assert.equal(objects.get('fresh')!.status, undefined, 'no controller wrote it: no status');
    for (const row of ROWS)
      assert.equal(computeKstatus(objects.get(row.name)!).status, row.kstatus, `${row.name}: the kstatus rules`);
  });

  test('Flux healthCheckExprs, evaluated in Flux order, agree with the kstatus rules on every row', async () => {
    const { healthCheckExprs } = parse(await readFile(fluxFile, 'utf8')) as { healthCheckExprs: FluxHealthCheckExpr[] };
    const check = healthCheckExprs.find((c) => c.kind === 'Database' && c.apiVersion.startsWith('example.com/'));
    assert.ok(check, 'a Database entry');
    for (const row of ROWS) {
      const verdict = evaluateFluxHealthCheck(check, objects.get(row.name)! as unknown as Record<string, unknown>);
      assert.equal(verdict.status, row.flux ?? FLUX_FOR[row.kstatus], `${row.name} (${verdict.decidedBy})`);
    }
  });

  test('the Argo CD Lua health check, run by Lua 5.1, agrees with the kstatus rules on every row', async () => {
    const configMap = parse(await readFile(argoFile, 'utf8')) as { data: Record<string, string> };
    const script = configMap.data['resource.customizations.health.example.com_Database'];
    assert.ok(script, 'a Database entry in argocd-cm');
    const verdicts = await evaluateArgoCdHealthLua(
      script,
      ROWS.map((row) => objects.get(row.name)! as unknown as Record<string, unknown>),
    );
    assert.deepEqual(
      verdicts.map((v, i) => `${ROWS[i]!.name}: ${v.status}`),
      ROWS.map((row) => `${row.name}: ${ARGO_FOR[row.kstatus]}`),
    );
    assert.equal(
      verdicts[ROWS.findIndex((r) => r.name === 'stalled')]!.message,
      'UnsupportedVersion: postgres 9 is not supported',
    );
  });

  test('kubectl wait --for=condition=Ready returns for the converged Database and times out for the stalled one', async () => {
    const wait = (name: string, timeout: string) =>
      kubectl(env.kubeconfigPath, [
        'wait',
        '-n',
        NS,
        '--for=condition=Ready',
        `databases.example.com/${name}`,
        `--timeout=${timeout}`,
      ]);
    assert.match(await wait('ready', '20s'), /condition met/);
    const startedMs = Date.now();
    await assert.rejects(wait('stalled', '2s'), /timed out waiting for the condition/);
    assert.ok(Date.now() - startedMs >= 1900, 'it waited for its timeout');
  });
});
