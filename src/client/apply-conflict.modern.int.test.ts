/**
 * A server-side apply conflict with kubectl as the other field manager, diagnosed field by field,
 * on both API servers of one env: Kubernetes 1.36 (CRD-only, a Widget) and the 1.20
 * kube-apiserver beside it (its `authDelegate`, a Deployment).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { silentLogger } from '../core/logger.js';
import { EventRecorder } from '../controller/event-recorder.js';
import { APPLY_CONFLICT_EVENT_REASON, applyOwned } from '../helpers/apply-owned.js';
import { kubectl } from '../testing/control-plane/kubectl.js';
import { readManifests } from '../testing/control-plane/manifests.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { isApplyConflict, type ApplyConflictError } from './apply-conflict-error.js';
import { kind } from './kind.js';
import { kinds } from './kinds.js';
import { KubeClient } from './kube-client.js';

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: { size: number; color?: 'red' | 'green' | 'blue' };
}
const WIDGET = kind<Widget>('example.com/v1', 'Widget');
const crdFile = new URL('../../examples/quickstart/widget-crd.yaml', import.meta.url);
const NS = 'apply-conflict';

function conflictOf(err: unknown): ApplyConflictError {
  assert.ok(isApplyConflict(err), `expected an apply conflict, got ${String(err)}`);
  return err;
}

describe('an apply conflict with kubectl as the other field manager', () => {
  let env: TestEnv;
  let modern: KubeClient;
  let legacy: KubeClient;
  let legacyKubeconfig: string;

  before(async () => {
    env = await TestEnv.start({ server: 'modern', crds: await readManifests(crdFile) });
    modern = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    legacyKubeconfig = env.authDelegate!.kubeconfigPath;
    legacy = await KubeClient.fromKubeconfig({ path: legacyKubeconfig });
    await legacy.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  after(async () => {
    await modern?.close();
    await legacy?.close();
    await env?.stop();
  });

  test('Kubernetes 1.36: the error names the field and kubectl as its owner; force takes it', async () => {
    const widget = { ...WIDGET, metadata: { name: 'w', namespace: NS }, spec: { size: 2, color: 'red' } };
    await kubectl(
      env.kubeconfigPath,
      ['apply', '--server-side', '--field-manager=other', '-f', '-'],
      JSON.stringify(widget),
    );
    const err = await modern
      .apply(
        WIDGET,
        { metadata: { name: 'w', namespace: NS }, spec: { size: 3, color: 'red' } },
        { fieldManager: 'widget-operator' },
      )
      .catch((e: unknown) => e);
    const conflict = conflictOf(err);
    assert.deepEqual(
      conflict.conflicts.map((c) => [c.field, c.manager, c.operation]),
      [['.spec.size', 'other', 'Apply']],
    );
    assert.match(conflict.message, /apply of Widget apply-conflict\/w as "widget-operator" conflicts with 1 field/);
    assert.match(conflict.message, /\.spec\.size \(owned by "other", by apply\)/);
    assert.match(conflict.message, /stop applying it .* or apply with force: true to take it over/);
    const forced = await modern.apply(
      WIDGET,
      { metadata: { name: 'w', namespace: NS }, spec: { size: 3 } },
      { fieldManager: 'widget-operator', force: true },
    );
    assert.equal(forced.spec?.size, 3);
  });

  test('Kubernetes 1.20: a Deployment whose replicas kubectl owns; applyOwned logs it and records a Warning Event', async () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } },
      },
    };
    await kubectl(
      legacyKubeconfig,
      ['apply', '--server-side', '--field-manager=other', '-f', '-'],
      JSON.stringify(deployment),
    );
    // The typed form on the client: the conflict, read back field by field.
    const direct = await legacy
      .apply(
        kinds.Deployment,
        { metadata: { name: 'web', namespace: NS }, spec: { replicas: 5 } },
        { fieldManager: 'web-operator' },
      )
      .catch((e: unknown) => e);
    assert.deepEqual(
      conflictOf(direct).conflicts.map((c) => [c.field, c.manager]),
      [['.spec.replicas', 'other']],
    );
    // Through applyOwned: logged, recorded as an Event on the Deployment, rethrown.
    const warnings: string[] = [];
    const recorder = new EventRecorder({ client: legacy, component: 'web-operator', host: 'test' });
    const err = await applyOwned(
      legacy,
      kinds.Deployment,
      { metadata: { name: 'web', namespace: NS }, spec: { replicas: 5 } },
      {
        fieldManager: 'web-operator',
        force: false,
        specHash: false,
        events: recorder,
        logger: { ...silentLogger, warn: (_obj: unknown, msg?: string) => warnings.push(msg ?? '') },
      },
    ).catch((e: unknown) => e);
    conflictOf(err);
    assert.equal(warnings.length, 1);
    await recorder.flush();
    const events = JSON.parse(
      await kubectl(legacyKubeconfig, [
        'get',
        'events',
        '-n',
        NS,
        '--field-selector',
        `reason=${APPLY_CONFLICT_EVENT_REASON}`,
        '-o',
        'json',
      ]),
    ) as { items: { message?: string; note?: string; involvedObject?: { name?: string; kind?: string } }[] };
    assert.equal(events.items.length, 1);
    assert.deepEqual(
      [events.items[0]!.involvedObject?.kind, events.items[0]!.involvedObject?.name],
      ['Deployment', 'web'],
    );
    assert.match(events.items[0]!.message ?? '', /\.spec\.replicas \(owned by "other", by apply\)/);
  });
});
