import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isApplyConflict } from '../client/apply-conflict-error.js';
import { kinds } from '../client/kinds.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { KubeObject } from '../core/object-key.js';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { APPLY_CONFLICT_EVENT_REASON, applyOwned } from './apply-owned.js';

const web = { name: 'web', namespace: 'ns' };

test('applyOwned takes an apply configuration typed from the kind', async () => {
  const fake = new FakeClient();
  const res = await applyOwned(
    fake,
    kinds.ConfigMap,
    { metadata: web, data: { color: 'red' } },
    { fieldManager: 'op' },
  );
  const color: string | undefined = res.object.data?.color;
  assert.deepEqual([res.operation, color], ['applied', 'red']);
  // @ts-expect-error a ConfigMap's data holds strings
  await applyOwned(fake, kinds.ConfigMap, { metadata: web, data: { color: 1 } }, { fieldManager: 'op' }).catch(
    () => {},
  );
  const unchanged = await applyOwned(
    fake,
    kinds.ConfigMap,
    { metadata: web, data: { color: 'red' } },
    { fieldManager: 'op', current: res.object },
  );
  assert.equal(unchanged.operation, 'unchanged');
});

test('an apply conflict is logged and recorded as a Warning Event on the given object, then rethrown', async () => {
  const fake = new FakeClient();
  await fake.apply(kinds.ConfigMap, { metadata: web, data: { color: 'blue' } }, { fieldManager: 'kubectl' });
  const warnings: { obj: Record<string, unknown>; msg: string | undefined }[] = [];
  const log: Logger = { ...silentLogger, warn: (obj, msg) => warnings.push({ obj, msg }) };
  const events: { obj: KubeObject; type: string; reason: string; message: string }[] = [];
  const primary: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { ...web, uid: 'u1' } };
  const err = await applyOwned(
    fake,
    kinds.ConfigMap,
    { metadata: web, data: { color: 'red' } },
    {
      fieldManager: 'widget-controller',
      force: false,
      logger: log,
      events: { event: (obj, type, reason, message) => events.push({ obj, type, reason, message }) },
      eventObject: primary,
    },
  ).catch((e: unknown) => e);
  assert.ok(isApplyConflict(err));
  assert.equal(warnings.length, 1);
  assert.deepEqual(warnings[0]!.obj.conflicts, [{ field: '.data.color', manager: 'kubectl' }]);
  assert.match(warnings[0]!.msg ?? '', /\.data\.color \(owned by "kubectl", by apply\)/);
  assert.equal(events.length, 1);
  assert.deepEqual(
    [events[0]!.obj, events[0]!.type, events[0]!.reason],
    [primary, 'Warning', APPLY_CONFLICT_EVENT_REASON],
  );
  assert.match(events[0]!.message, /force: true/);
});
