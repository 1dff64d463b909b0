import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../core/logger.js';
import type { AddOptions } from '../workqueue/workqueue.js';
import { pumpTriggers, type TriggerKey } from './trigger-source.js';

test('a trigger key may carry a priority; one that is not an integer is logged and skipped', async () => {
  const added: [string, number | undefined][] = [];
  const sink = { add: (key: string, options?: AddOptions) => void added.push([key, options?.priority]) };
  async function* keys(): AsyncIterable<TriggerKey> {
    yield 'ns/plain';
    yield { key: 'ns/urgent', priority: 10 };
    yield { key: { namespace: 'ns', name: 'ref' }, priority: -100 };
    yield { key: 'ns/bad', priority: 0.5 };
  }
  await pumpTriggers(keys(), sink, new AbortController().signal, silentLogger);
  assert.deepEqual(added, [
    ['ns/plain', undefined],
    ['ns/urgent', 10],
    ['ns/ref', -100],
  ]);
});
