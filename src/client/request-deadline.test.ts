/**
 * One overall deadline per client call (issue 35): a server that accepts a write and never answers
 * used to hold the caller for 6 attempts × 60 s (367 s measured against a silent member).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedError, InvalidOptionError } from '../core/errors.js';
import { FakeClock } from '../core/fake-clock.js';
import { StaticTokenCredential } from './credentials.js';
import { KubeClient } from './kube-client.js';
import type { ClusterConfig } from './kubeconfig.js';
import { makeTlsConfig } from './tls-config.js';
import {
  DEFAULT_REQUEST_DEADLINE_MS,
  RequestTimeoutError,
  Transport,
  TransportError,
  type TransportOptions,
} from './transport.js';
import { FakeApiServer, sendJson } from './testing/fake-api-server.js';

const TOKEN = 'tkn-DEADLINE-secret';
const STATUS_PATH = '/api/v1/namespaces/ns/configmaps/cm/status';
let server: FakeApiServer;

before(async () => {
  server = await FakeApiServer.start();
  server.handle((req, res) => {
    if (req.url === '/api/v1')
      return sendJson(res, 200, {
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: [
          { name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'update'] },
          { name: 'configmaps/status', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'update'] },
        ],
      });
    if (req.method === 'GET' && req.url.startsWith('/watch')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('');
      return; // a quiet watch: headers, then nothing
    }
    if (req.method === 'GET') return sendJson(res, 200, { kind: 'ConfigMap' });
    // Writes are held open forever: the silent member of issue 35.
  });
});
after(async () => {
  await server.close();
});

function config(): ClusterConfig {
  return {
    server: server.url,
    tls: makeTlsConfig({ rejectUnauthorized: true }),
    credential: new StaticTokenCredential(TOKEN),
    namespace: 'default',
  };
}

function transport(options: TransportOptions): Transport {
  return new Transport(config(), { random: () => 0.5, ...options });
}

async function whenSettled(p: Promise<unknown>): Promise<{ settled: boolean; error?: unknown }> {
  const out: { settled: boolean; error?: unknown } = { settled: false };
  p.then(
    () => (out.settled = true),
    (e: unknown) => ((out.settled = true), (out.error = e)),
  );
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  return out;
}

async function untilRequests(n: number): Promise<void> {
  const until = Date.now() + 5000;
  while (server.requests.filter((r) => r.method !== 'GET').length < n) {
    if (Date.now() > until) assert.fail(`the server never saw ${n} writes`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a write to a server that never answers ends at the default deadline, on the clock, with an error naming the method and resource and no credential', async () => {
  server.requests.length = 0;
  const clock = new FakeClock(0);
  const t = transport({ clock });
  const started = Date.now();
  const call = t.request({ method: 'PUT', path: STATUS_PATH, body: '{}', contentType: 'application/json' });
  await untilRequests(1);
  clock.step(DEFAULT_REQUEST_DEADLINE_MS - 1);
  assert.equal((await whenSettled(call)).settled, false, 'not a millisecond early');
  clock.step(1);
  const outcome = await whenSettled(call);
  assert.equal(outcome.settled, true);
  const err = outcome.error;
  assert.ok(err instanceof RequestTimeoutError, String(err));
  assert.equal(err.code, 'ERR_REQUEST_TIMEOUT');
  assert.equal(err.method, 'PUT');
  assert.equal(err.path, STATUS_PATH);
  assert.equal(err.deadlineMs, 120_000);
  assert.equal(err.attempts, 1);
  assert.equal(err.message, `PUT ${STATUS_PATH}: no answer within the 120000 ms request deadline (1 attempt)`);
  assert.ok(!JSON.stringify({ m: err.message, s: err.stack }).includes(TOKEN));
  assert.ok(Date.now() - started < 5000, 'the fake clock ended it, not a real 120 s');
  await t.close();
});

test('the deadline bounds the whole call, retries included: not backoff.maxAttempts × requestTimeoutMs (regression: 6 × 60 s)', async () => {
  server.requests.length = 0;
  // Scaled down 200×: 300 ms per attempt, as 60 s; PUT is idempotent, so each timed-out attempt is retried.
  const t = transport({ requestTimeoutMs: 300, requestDeadlineMs: 1_000 });
  const started = performance.now();
  const err = await t.request({ method: 'PUT', path: STATUS_PATH, body: '{}', contentType: 'application/json' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  const tookMs = performance.now() - started;
  assert.ok(err instanceof RequestTimeoutError, `got ${String(err)}`);
  assert.ok(tookMs >= 990 && tookMs < 1_500, `ended after ${Math.round(tookMs)} ms`);
  // How many attempts fit depends on undici's coarse timers (it may fire a 300 ms headers timeout late).
  assert.ok(err.attempts >= 1 && err.attempts < 6, `${err.attempts} attempts`);
  assert.ok(err.cause instanceof AbortedError || err.cause instanceof TransportError);
  await t.close();
});

test("the caller's signal still ends a call sooner, as an abort and not a timeout", async () => {
  const t = transport({ requestDeadlineMs: 60_000 });
  const abort = new AbortController();
  const call = t.request({ method: 'PUT', path: STATUS_PATH, body: '{}', signal: abort.signal });
  setTimeout(() => abort.abort(), 100);
  await assert.rejects(call, (e: unknown) => e instanceof AbortedError);
  await t.close();
});

test('watches are exempt: a quiet watch stays open past the deadline', async () => {
  const t = transport({ requestDeadlineMs: 100 });
  const abort = new AbortController();
  const watch = await t.stream({ method: 'GET', path: '/watch/cm', signal: abort.signal, bodyTimeoutMs: 0 });
  const next = watch.body[Symbol.asyncIterator]().next();
  const outcome = await Promise.race([
    next.then(
      () => 'ended',
      () => 'failed',
    ),
    new Promise((r) => setTimeout(() => r('still open'), 400)),
  ]);
  assert.equal(outcome, 'still open');
  watch.destroy();
  abort.abort();
  await next.catch(() => undefined);
  await t.close();
});

test('KubeClient passes requestDeadlineMs on: updateStatus to a silent server ends with RequestTimeoutError naming PUT and the status path', async () => {
  server.requests.length = 0;
  const client = new KubeClient(config(), { requestTimeoutMs: 300, requestDeadlineMs: 500 });
  const err = await client
    .updateStatus(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns', resourceVersion: '1' } },
      {},
    )
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  assert.ok(err instanceof RequestTimeoutError, `got ${String(err)}`);
  assert.match(err.message, /^PUT \/api\/v1\/namespaces\/ns\/configmaps\/cm\/status: no answer within the 500 ms/);
  await client.close();
});

test('requestDeadlineMs must be > 0 (Infinity: none)', () => {
  for (const bad of [0, -1, Number.NaN])
    assert.throws(
      () => transport({ requestDeadlineMs: bad }),
      (e: unknown) => e instanceof InvalidOptionError && e.option === 'requestDeadlineMs',
    );
  assert.doesNotThrow(() => transport({ requestDeadlineMs: Infinity }));
});
