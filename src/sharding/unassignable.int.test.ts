/**
 * Regression (issue 24, item 6) against a real kube-apiserver 1.20: after a CRD is tightened, an
 * older object fails validation on every update, so the sharder's label patch is refused (422) and
 * no replica ever reconciles it. It must be reported — a Warning Event on the object and the
 * `sharding_unassignable_objects` gauge — retried, and assigned once the object is fixed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { kinds } from '../client/kinds.js';
import { createLogger } from '../logging/create-logger.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { Manager } from '../manager/manager.js';
import { LeaderElector } from '../leader-election/leader-elector.js';
import type { KubeObject } from '../core/object-key.js';
import { shardLabel } from './sharding-options.js';

const GIZMO = { apiVersion: 'example.com/v1', kind: 'Gizmo' };
const RING = 'gizmos';
const NAMESPACE = 'default';
// Spelled out (not imported) so this file also runs against the code before the fix.
const UNASSIGNABLE_EVENT_REASON = 'ShardAssignmentFailed';
const grantLabel = (ring: string): string => `grant.shard.operator-runtime.io/${ring}`;
const TIMINGS = { leaseDurationMs: 8_000, renewDeadlineMs: 6_000, retryPeriodMs: 1_000 };

function gizmoCrd(maximum?: number): KubeObject & Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gizmos.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { size: { type: 'integer', ...(maximum !== undefined ? { maximum } : {}) } },
                },
              },
            },
          },
        },
      ],
    },
  };
}

interface Gizmo extends KubeObject {
  spec: { size: number };
}

describe('an object the API server refuses to relabel (1.20, label mode)', () => {
  let env: TestEnv;
  let admin: KubeClient;
  let client: KubeClient;
  let manager: Manager;
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  const reconciled = new Set<string>();

  before(async () => {
    env = await TestEnv.start({ crds: [gizmoCrd()] });
    admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    await admin.create<Gizmo>({ ...GIZMO, metadata: { name: 'small', namespace: NAMESPACE }, spec: { size: 5 } });
    await admin.create<Gizmo>({ ...GIZMO, metadata: { name: 'big', namespace: NAMESPACE }, spec: { size: 50 } });
    // Tighten the CRD: `big` was valid when created and now fails validation on any update.
    const crd = await admin.get<KubeObject>(
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
      'gizmos.example.com',
    );
    await admin.update({ ...gizmoCrd(10), metadata: { ...crd.metadata } });
    await eventually(
      'the tightened schema enforced',
      async () => {
        try {
          await admin.patch(
            GIZMO,
            'big',
            { metadata: { labels: { probe: 'x' } } },
            { type: 'merge', namespace: NAMESPACE },
          );
          return false;
        } catch (err) {
          return (err as { status?: number }).status === 422;
        }
      },
      { timeoutMs: 30_000 },
    );
  });

  after(async () => {
    stop.abort();
    await running?.catch(() => undefined);
    await client?.close();
    await admin?.close();
    await env?.stop();
  });

  test('it is reported by a Warning Event on it and sharding_unassignable_objects, retried, and assigned once fixed', async () => {
    client = await KubeClient.fromKubeconfig({
      kubeconfig: env.kubeconfig as unknown as Kubeconfig,
      backoff: { maxAttempts: 1 },
    });
    const logger = createLogger({ level: process.env.SHARDING_TEST_LOG ? 'debug' : 'silent' });
    manager = new Manager({
      client,
      metricsPort: 0,
      healthPort: 0,
      logger,
      gracefulShutdownMs: 5_000,
      leaderElection: new LeaderElector({
        client,
        name: `${RING}-sharder`,
        namespace: NAMESPACE,
        identity: 'only',
        ...TIMINGS,
        logger,
      }),
      sharding: { ring: RING, namespace: NAMESPACE, identity: 'only', mode: 'label', ...TIMINGS },
    });
    manager
      .controller('gizmo')
      .for(GIZMO)
      .complete(async (req) => {
        reconciled.add(req.name);
      });
    running = manager.start(stop.signal);
    running.catch(() => undefined);

    const me = () => manager.sharding!.memberId;
    await eventually(
      'the valid Gizmo assigned and reconciled',
      async () =>
        (await admin.get<Gizmo>(GIZMO, 'small', { namespace: NAMESPACE })).metadata?.labels?.[shardLabel(RING)] ===
          me() && reconciled.has('small'),
      { timeoutMs: 30_000 },
    );
    const gauge = async (): Promise<string | undefined> =>
      (await manager.registry.getSingleMetricAsString('sharding_unassignable_objects')).match(
        /sharding_unassignable_objects\{ring="gizmos",kind="Gizmo"\} (\d+)/,
      )?.[1];
    await eventually('the gauge counts the refused Gizmo', async () => (await gauge()) === '1', { timeoutMs: 30_000 });
    const event = await eventually(
      'a Warning Event on the refused Gizmo',
      async () =>
        (await admin.list(kinds.Event, { namespace: NAMESPACE })).items.find(
          (e) => e.reason === UNASSIGNABLE_EVENT_REASON && e.involvedObject?.name === 'big',
        ) ?? false,
      { timeoutMs: 30_000 },
    );
    assert.equal(event.type, 'Warning');
    assert.equal(event.involvedObject?.kind, 'Gizmo');
    assert.match(event.message ?? '', /422|Invalid/);
    assert.match(event.message ?? '', /spec\.size/, 'the Event says what the server rejects');
    const big = await admin.get<Gizmo>(GIZMO, 'big', { namespace: NAMESPACE });
    assert.equal(big.metadata?.labels?.[shardLabel(RING)], undefined, 'never assigned');
    assert.ok(!reconciled.has('big'));

    // What the user does: make the object valid for the current schema. The retry then succeeds.
    await admin.patch(GIZMO, 'big', { spec: { size: 10 } }, { type: 'merge', namespace: NAMESPACE });
    await eventually(
      'the fixed Gizmo assigned and reconciled',
      async () => {
        const labels = (await admin.get<Gizmo>(GIZMO, 'big', { namespace: NAMESPACE })).metadata?.labels;
        return labels?.[shardLabel(RING)] === me() && labels[grantLabel(RING)] === me() && reconciled.has('big');
      },
      { timeoutMs: 30_000 },
    );
    await eventually('the gauge back to 0', async () => (await gauge()) === '0', { timeoutMs: 10_000 });
  });
});
