import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from '../core/logger.js';
import { recordingLogger } from './recording-logger.js';

test('the recording logger keeps level, merged bindings, a copy of the object and the message', () => {
  const root = recordingLogger({ app: 'op' });
  const log: Logger = root.child({ controller: 'widgets' }).child({ reconcileID: 'r-1', controller: 'gadgets' });
  const obj: Record<string, unknown> = { attempt: 1 };
  log.error(obj, 'failed');
  obj.attempt = 2;
  root.debug({}, undefined);
  assert.deepEqual(root.entries, [
    {
      level: 'error',
      bindings: { app: 'op', controller: 'gadgets', reconcileID: 'r-1' },
      obj: { attempt: 1 },
      msg: 'failed',
    },
    { level: 'debug', bindings: { app: 'op' }, obj: {}, msg: undefined },
  ]);
});

test("a child shares its parent's entries, and clear empties them for both", () => {
  const root = recordingLogger();
  const child = root.child({ a: 1 });
  child.info({}, 'one');
  root.warn({}, 'two');
  assert.equal(child.entries.length, 2);
  child.clear();
  assert.equal(root.entries.length, 0);
});
