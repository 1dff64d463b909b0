import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../core/object-key.js';
import { LOW_PRIORITY, type AddOptions } from '../workqueue/workqueue.js';
import { enqueueHandler, mapToSelf } from './enqueue-handlers.js';

const obj = (name: string, resourceVersion: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion },
});

test('keys of objects nothing changed for (a listed add, a resync) go in at low priority; watch events at the default', () => {
  const added: { key: string; priority: number | undefined }[] = [];
  const sink = { add: (key: string, options?: AddOptions) => void added.push({ key, priority: options?.priority }) };
  const h = enqueueHandler(sink, mapToSelf);
  h.add(obj('listed', '1'), { isInInitialList: true });
  h.add(obj('created', '2'), { isInInitialList: false });
  h.add(obj('no-info', '3'));
  h.update(obj('resynced', '4'), obj('resynced', '4'));
  h.update(obj('edited', '5'), obj('edited', '6'));
  h.delete(obj('deleted', '7'));
  assert.deepEqual(added, [
    { key: 'ns/listed', priority: LOW_PRIORITY },
    { key: 'ns/created', priority: undefined },
    { key: 'ns/no-info', priority: undefined },
    { key: 'ns/resynced', priority: LOW_PRIORITY },
    { key: 'ns/edited', priority: undefined },
    { key: 'ns/deleted', priority: undefined },
  ]);
});
