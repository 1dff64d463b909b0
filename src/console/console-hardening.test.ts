/**
 * Issue 24 item 10: bound to a non-loopback address the console skipped its Host check
 * (`Host: evil.com` got 200: DNS rebinding from a local browser), and every poll sorted every key
 * in backoff (100,000 keys: 72 ms a poll, per open tab).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { FakeClock } from '../core/fake-clock.js';
import { Workqueue } from '../workqueue/workqueue.js';
import { SmallestK } from '../workqueue/smallest-k.js';
import { ConsoleServer, DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS } from './console-server.js';
import { ConsoleState, type ConsoleSnapshot } from './console-state.js';

function get(port: number, host: string, connectTo = '127.0.0.1'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: connectTo, port, path: '/api/state', headers: { host } }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => (body += c))
        .on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject).end();
  });
}

const empty = (): ConsoleSnapshot => new ConsoleState({ clock: new FakeClock() }).snapshot();

test('regression: bound to every interface, the console still refuses a foreign Host (DNS rebinding)', async () => {
  const server = new ConsoleServer(empty, { port: 0, host: '0.0.0.0', allowedHosts: ['console.ops.svc'] });
  await server.listen();
  try {
    const port = server.boundPort!;
    assert.equal((await get(port, 'evil.example')).status, 421);
    assert.equal((await get(port, `evil.example:${port}`)).status, 421);
    assert.equal((await get(port, `localhost:${port}`)).status, 200);
    assert.equal((await get(port, `127.0.0.1:${port}`)).status, 200, 'the address the connection arrived on');
    assert.equal((await get(port, `CONSOLE.ops.svc:${port}`)).status, 200, 'a configured name, any case');
    const external = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    if (external)
      assert.equal(
        (await get(port, `${external.address}:${port}`, external.address)).status,
        200,
        'the interface address it was reached on',
      );
  } finally {
    await server.close();
  }
});

test('bound to a specific address, that address is allowed and other names are not', async () => {
  const server = new ConsoleServer(empty, { port: 0, host: '127.0.0.1' });
  await server.listen();
  try {
    const port = server.boundPort!;
    assert.equal((await get(port, `127.0.0.1:${port}`)).status, 200);
    assert.equal((await get(port, 'rebound.example')).status, 421);
    assert.throws(() => new ConsoleServer(empty, { allowedHosts: ['http://x'] }), { code: 'ERR_INVALID_OPTION' });
  } finally {
    await server.close();
  }
});

test('regression: many polls within a second build one snapshot; the next second builds a new one', async () => {
  const clock = new FakeClock(0);
  let builds = 0;
  const server = new ConsoleServer(
    () => {
      builds++;
      return { ...empty(), generatedAtMs: clock.now() };
    },
    { port: 0, clock },
  );
  await server.listen();
  try {
    const port = server.boundPort!;
    const bodies = await Promise.all(Array.from({ length: 20 }, () => get(port, 'localhost')));
    assert.equal(builds, 1, 'twenty polls, one build');
    assert.equal(new Set(bodies.map((b) => b.body)).size, 1);
    clock.step(DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS - 1);
    await get(port, 'localhost');
    assert.equal(builds, 1);
    clock.step(1);
    const fresh = JSON.parse((await get(port, 'localhost')).body) as { generatedAtMs: number };
    assert.equal(builds, 2);
    assert.equal(fresh.generatedAtMs, DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS);
  } finally {
    await server.close();
  }
});

test('the keys in backoff shown are the soonest, in order, chosen without sorting them all', async () => {
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  const n = 5_000;
  // Distinct failure counts give distinct delays; keys are added in an order unrelated to them.
  for (let i = 0; i < n; i++) {
    const key = `k-${(i * 7919) % n}`;
    const failures = 1 + ((i * 31) % 12);
    for (let f = 0; f < failures; f++) q.addRateLimited(key);
  }
  const { total, keys } = q.backoffKeys(10);
  assert.equal(total, n);
  assert.equal(keys.length, 10);
  for (let i = 1; i < keys.length; i++) assert.ok(keys[i - 1]!.retryInMs <= keys[i]!.retryInMs);
  const all = q.backoffKeys(n).keys.map((k) => k.retryInMs);
  assert.deepEqual(
    keys.map((k) => k.retryInMs),
    all.slice(0, 10),
  );

  // The selection itself: at most k kept, compared O(n log k) times — a full sort would need ~n log n.
  let comparisons = 0;
  const sel = new SmallestK<number>(100, (a, b) => (comparisons++, a - b));
  const values = Array.from({ length: 100_000 }, (_, i) => (i * 2_654_435_761) % 1_000_003);
  for (const v of values) sel.offer(v);
  assert.deepEqual(sel.sorted(), [...values].sort((a, b) => a - b).slice(0, 100));
  assert.equal(sel.total, 100_000);
  assert.ok(comparisons < 100_000 * 3, `${comparisons} comparisons`);
  await q.shutdown();
});
