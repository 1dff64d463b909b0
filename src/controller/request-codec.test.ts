import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../core/fake-clock.js';
import { createLogger } from '../logging/create-logger.js';
import { Controller, objectRequestCodec, type RequestCodec } from './controller.js';
import type { ReconcileRequest } from './reconciler.js';

/** Runs one key through a controller with `requests`; returns the request and the reconcile's log line. */
async function reconcileOne(key: string, requests?: RequestCodec) {
  const raw: string[] = [];
  const logger = createLogger({ name: 'op', destination: { write: (line: string) => void raw.push(line) } });
  const clock = new FakeClock(0);
  const seen: ReconcileRequest[] = [];
  const controller = new Controller({
    name: 'c',
    clock,
    logger,
    ...(requests ? { requests } : {}),
    reconciler: {
      reconcile: async (request, { log }) => {
        seen.push(request);
        log.info({}, 'reconciling');
      },
    },
  });
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  controller.queue.add(key);
  await clock.advance(1);
  stop.abort();
  await running;
  const line = raw.find((l) => l.includes('"reconciling"'));
  assert.ok(line, 'the reconciler logged');
  return { request: seen[0], line };
}

test('without a codec a key is namespace/name and the log line binds namespace, name, reconcileID in that order', async () => {
  const { request, line } = await reconcileOne('ns/a');
  assert.deepEqual(request, { namespace: 'ns', name: 'a' });
  assert.match(line, /"controller":"c","namespace":"ns","name":"a","reconcileID":"[0-9a-f-]{36}"/);
  assert.deepEqual(objectRequestCodec.parse('ns/a'), { namespace: 'ns', name: 'a' });
});

test("a codec decides the reconciler's request and the fields bound before reconcileID", async () => {
  const codec: RequestCodec = {
    parse: (key) => {
      const [cluster, namespace, name] = key.split('/');
      return { cluster, namespace, name } as ReconcileRequest;
    },
    logFields: (r) => ({
      cluster: (r as unknown as { cluster: string }).cluster,
      namespace: r.namespace ?? '',
      name: r.name,
    }),
  };
  const { request, line } = await reconcileOne('east/ns/a', codec);
  assert.deepEqual(request, { cluster: 'east', namespace: 'ns', name: 'a' });
  assert.match(line, /"cluster":"east","namespace":"ns","name":"a","reconcileID":"[0-9a-f-]{36}"/);
});
