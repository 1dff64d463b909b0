/**
 * Issue 23: every reconcile line had two "name" keys, the logger's (pino's `name`) and the
 * request's, and most log pipelines keep only one. The shape is controller-runtime's: `controller`,
 * `namespace`, `name`, `reconcileID`, and the logger's own name under `logger`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { createLogger } from '../logging/create-logger.js';
import { Controller } from './controller.js';

/** The keys of one JSON line in the order written, duplicates kept (JSON.parse would drop them). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && line[j + 1] === ':') keys.push(JSON.parse(line.slice(i, j + 1)) as string);
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

test("a reconcile line has exactly one name (the object's), the logger's own name under logger", async () => {
  const raw: string[] = [];
  const logger = createLogger({
    name: 'cron-job-operator',
    destination: { write: (line: string) => void raw.push(line) },
  });
  const clock = new FakeClock(0);
  const controller = new Controller({
    name: 'cronjob',
    clock,
    logger,
    reconciler: {
      reconcile: async (_request, { log }) => {
        await Promise.resolve();
        log.info({}, 'reconciling');
      },
    },
  });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  controller.enqueue({ namespace: 'default', name: 'every-minute' });
  await clock.advance(1);
  stop.abort();
  await running;
  const line = raw.find((l) => l.includes('"reconciling"'));
  assert.ok(line, 'the reconciler logged');
  const keys = topLevelKeys(line);
  assert.equal(keys.filter((k) => k === 'name').length, 1, `one name key in ${line}`);
  const parsed = JSON.parse(line) as Record<string, unknown>;
  assert.equal(parsed.name, 'every-minute');
  assert.equal(parsed.namespace, 'default');
  assert.equal(parsed.controller, 'cronjob');
  assert.equal(parsed.logger, 'cron-job-operator');
  assert.match(String(parsed.reconcileID), /^[0-9a-f-]{36}$/);
});
