import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { Registry } from 'prom-client';
import { MockAgent } from 'undici';
import { FakeClock } from '../core/fake-clock.js';
import {
  createHttpClient,
  DEFAULT_HTTP_MAX_METRIC_HOSTS,
  HttpRequestError,
  type HttpClientOptions,
} from './http-client.js';

const ORIGIN = 'http://svc.test';
const ATTEMPT_TIMEOUT_MS = 1e8;

function setup(options: Partial<HttpClientOptions> = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const registry = new Registry();
  const http = createHttpClient({
    clock,
    registry,
    dispatcher: agent,
    random: () => 0.5,
    attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
    ...options,
  });
  return { agent, pool, clock, registry, http };
}

/**
 * Settles `p`, moving the fake clock only across backoff sleeps: while a request is in flight the
 * only timer is its (far-off) attempt timeout, and we wait for the mock's I/O instead.
 */
async function drive<T>(clock: FakeClock, p: Promise<T>, { fireTimeouts = false } = {}): Promise<T> {
  let settled = false;
  const tracked = p.finally(() => (settled = true));
  tracked.catch(() => {});
  for (let spins = 0; !settled; spins++) {
    const next = clock.nextTimerInMs();
    if (next !== undefined && (next < ATTEMPT_TIMEOUT_MS / 2 || (fireTimeouts && spins > 20))) {
      await clock.advance(next);
      spins = 0;
    } else {
      await new Promise((r) => setImmediate(r));
    }
  }
  return tracked;
}

const asHttpError = (err: unknown): HttpRequestError => {
  assert.ok(err instanceof HttpRequestError, `expected HttpRequestError, got ${inspect(err)}`);
  return err;
};

test('a 200 on the first attempt is returned with its body', async () => {
  const { pool, clock, http } = setup();
  pool.intercept({ path: '/x', method: 'GET' }).reply(200, { ok: true });
  const res = await drive(clock, http.request(`${ORIGIN}/x`));
  assert.equal(res.status, 200);
  assert.deepEqual(res.json(), { ok: true });
  assert.deepEqual(
    res.attempts.map((a) => a.status),
    [200],
  );
});

test('5xx is retried with exponential backoff and full jitter until it succeeds', async () => {
  const { pool, clock, http } = setup({ backoff: { initialMs: 100 } });
  pool.intercept({ path: '/x', method: 'GET' }).reply(503, 'busy').times(2);
  pool.intercept({ path: '/x', method: 'GET' }).reply(200, 'fine');
  const start = clock.monotonicNow();
  const res = await drive(clock, http.request(`${ORIGIN}/x`));
  assert.equal(res.text(), 'fine');
  // Full jitter with random() = 0.5: half of 100, then half of 200.
  assert.deepEqual(
    res.attempts.map((a) => [a.status, a.delayMs]),
    [
      [503, 50],
      [503, 100],
      [200, undefined],
    ],
  );
  assert.equal(clock.monotonicNow() - start, 150);
});

test('full jitter draws each delay from [0, base * 2^n), capped by backoff.maxMs', async () => {
  const { pool, clock, http } = setup({ backoff: { initialMs: 100, maxMs: 300, maxAttempts: 5 }, random: () => 0.999 });
  pool.intercept({ path: '/x', method: 'GET' }).reply(500, '').times(5);
  const err = asHttpError(await drive(clock, http.request(`${ORIGIN}/x`)).catch((e: unknown) => e));
  assert.deepEqual(
    err.attempts.map((a) => a.delayMs),
    [99, 199, 299, 299, undefined],
  );
});

test('Retry-After in seconds is honoured exactly', async () => {
  const { pool, clock, http } = setup();
  pool.intercept({ path: '/x', method: 'GET' }).reply(429, '', { headers: { 'retry-after': '3' } });
  pool.intercept({ path: '/x', method: 'GET' }).reply(200, '');
  const start = clock.monotonicNow();
  const res = await drive(clock, http.request(`${ORIGIN}/x`));
  assert.equal(res.attempts[0]!.delayMs, 3_000);
  assert.equal(clock.monotonicNow() - start, 3_000);
});

test('Retry-After as an HTTP date is honoured', async () => {
  const { pool, clock, http } = setup();
  const at = new Date(clock.now() + 7_000).toUTCString();
  pool.intercept({ path: '/x', method: 'GET' }).reply(503, '', { headers: { 'retry-after': at } });
  pool.intercept({ path: '/x', method: 'GET' }).reply(200, '');
  const res = await drive(clock, http.request(`${ORIGIN}/x`));
  assert.equal(res.attempts[0]!.delayMs, 7_000);
});

test('a Retry-After longer than maxRetryAfterMs ends the call at once instead of holding the worker', async () => {
  const { pool, clock, http } = setup({ maxRetryAfterMs: 10_000 });
  pool.intercept({ path: '/x', method: 'GET' }).reply(503, '', { headers: { 'retry-after': '3600' } });
  const err = asHttpError(await drive(clock, http.request(`${ORIGIN}/x`)).catch((e: unknown) => e));
  assert.equal(err.reason, 'retryAfterTooLong');
  assert.equal(err.attempts.length, 1);
});

test('after the last retry the error lists every attempt, and never the headers, body or query', async () => {
  const { pool, clock, http } = setup({ backoff: { maxAttempts: 3 } });
  pool.intercept({ path: '/x?token=s3cr3t-query', method: 'PUT' }).reply(500, 'oops').times(2);
  pool
    .intercept({ path: '/x?token=s3cr3t-query', method: 'PUT' })
    .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
  const p = http.request(`${ORIGIN}/x?token=s3cr3t-query`, {
    method: 'PUT',
    headers: { authorization: 'Bearer s3cr3t-token' },
    body: '{"password":"s3cr3t-body"}',
  });
  const err = asHttpError(await drive(clock, p).catch((e: unknown) => e));
  assert.equal(err.code, 'ERR_HTTP_REQUEST');
  assert.equal(err.reason, 'retriesExhausted');
  assert.deepEqual(
    err.attempts.map((a) => a.status ?? a.error),
    [500, 500, 'ECONNRESET'],
  );
  assert.ok(err.attempts.every((a) => typeof a.durationMs === 'number'));
  assert.equal(err.url, `${ORIGIN}/x`);
  assert.match(
    err.message,
    /PUT http:\/\/svc\.test\/x failed \(retriesExhausted\) after 3 attempt\(s\): 500, 500, ECONNRESET/,
  );
  const everything = `${err.message} ${err.stack} ${inspect(err, { depth: 10 })} ${JSON.stringify(err)}`;
  assert.doesNotMatch(everything, /s3cr3t/);
});

test('a 4xx other than 429 is returned to the caller, not retried', async () => {
  const { pool, clock, http } = setup();
  pool.intercept({ path: '/x', method: 'GET' }).reply(404, 'nope');
  const res = await drive(clock, http.request(`${ORIGIN}/x`));
  assert.equal(res.status, 404);
  assert.equal(res.attempts.length, 1);
});

test('a POST is not retried after a 5xx or a reset: it may have been applied', async () => {
  const { pool, clock, http } = setup();
  pool.intercept({ path: '/orders', method: 'POST' }).reply(502, '');
  const err = asHttpError(
    await drive(clock, http.request(`${ORIGIN}/orders`, { method: 'POST', body: '{}' })).catch((e: unknown) => e),
  );
  assert.equal(err.reason, 'notRetryable');
  pool
    .intercept({ path: '/orders', method: 'POST' })
    .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
  const err2 = asHttpError(
    await drive(clock, http.request(`${ORIGIN}/orders`, { method: 'POST', body: '{}' })).catch((e: unknown) => e),
  );
  assert.equal(err2.reason, 'notRetryable');
  assert.equal(err2.attempts.length, 1);
});

test('a POST with an idempotency key is retried and carries the key on every attempt', async () => {
  const { pool, clock, http } = setup();
  const keyed = { path: '/orders', method: 'POST', headers: { 'idempotency-key': 'order-42' } };
  pool.intercept(keyed).reply(503, '');
  pool.intercept(keyed).reply(201, 'created');
  const res = await drive(
    clock,
    http.request(`${ORIGIN}/orders`, { method: 'POST', body: '{}', idempotencyKey: 'order-42' }),
  );
  assert.equal(res.status, 201);
  assert.equal(res.attempts.length, 2);
});

test('a POST whose connection was refused is retried: nothing was sent', async () => {
  const { pool, clock, http } = setup();
  pool
    .intercept({ path: '/orders', method: 'POST' })
    .replyWithError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
  pool.intercept({ path: '/orders', method: 'POST' }).reply(201, '');
  const res = await drive(clock, http.request(`${ORIGIN}/orders`, { method: 'POST', body: '{}' }));
  assert.deepEqual(
    res.attempts.map((a) => a.status ?? a.error),
    ['ECONNREFUSED', 201],
  );
});

test('an abort during a backoff wait ends the call at once with the attempts so far', async () => {
  const { pool, clock, http } = setup({ backoff: { initialMs: 10_000, maxMs: 60_000 }, random: () => 0.9 });
  pool.intercept({ path: '/x', method: 'GET' }).reply(503, '').times(5);
  const ac = new AbortController();
  const p = http.request(`${ORIGIN}/x`, { signal: ac.signal });
  p.catch(() => {});
  while (clock.nextTimerInMs() === undefined || clock.nextTimerInMs()! > ATTEMPT_TIMEOUT_MS / 2)
    await new Promise((r) => setImmediate(r));
  assert.equal(clock.nextTimerInMs(), 9_000);
  await clock.advance(1_000);
  ac.abort(new Error('reconcile deadline'));
  const err = asHttpError(await p.catch((e: unknown) => e));
  assert.equal(err.reason, 'aborted');
  assert.equal(err.attempts.length, 1);
  assert.equal(clock.pendingTimers, 0);
});

test('an already-aborted signal sends nothing', async () => {
  const { clock, http } = setup();
  const err = asHttpError(
    await drive(clock, http.request(`${ORIGIN}/x`, { signal: AbortSignal.abort() })).catch((e: unknown) => e),
  );
  assert.equal(err.reason, 'aborted');
  assert.equal(err.attempts.length, 0);
});

test('an attempt that outlives attemptTimeoutMs is abandoned and retried', async () => {
  const { pool, clock, http } = setup({ attemptTimeoutMs: 2 * ATTEMPT_TIMEOUT_MS });
  pool.intercept({ path: '/slow', method: 'GET' }).reply(200, 'late').delay(60_000);
  pool.intercept({ path: '/slow', method: 'GET' }).reply(200, 'quick');
  const res = await drive(clock, http.request(`${ORIGIN}/slow`), { fireTimeouts: true });
  assert.equal(res.text(), 'quick');
  assert.deepEqual(
    res.attempts.map((a) => a.status ?? a.error),
    ['ERR_ATTEMPT_TIMEOUT', 200],
  );
});

test('every attempt is counted in operator_http_client_requests_total{host,method,code}, with latency', async () => {
  const { pool, clock, http, registry } = setup();
  pool.intercept({ path: '/x', method: 'GET' }).reply(503, '');
  pool
    .intercept({ path: '/x', method: 'GET' })
    .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
  pool.intercept({ path: '/x', method: 'GET' }).reply(200, '');
  await drive(clock, http.request(`${ORIGIN}/x`));
  const text = await registry.metrics();
  assert.match(text, /operator_http_client_requests_total\{host="svc\.test",method="GET",code="503"\} 1/);
  assert.match(text, /operator_http_client_requests_total\{host="svc\.test",method="GET",code="<error>"\} 1/);
  assert.match(text, /operator_http_client_requests_total\{host="svc\.test",method="GET",code="200"\} 1/);
  assert.match(text, /operator_http_client_request_duration_seconds_count\{host="svc\.test",method="GET"\} 3/);
});

test('a response larger than maxResponseBytes ends the call instead of filling memory', async () => {
  const { pool, clock, http } = setup({ maxResponseBytes: 1024 });
  pool.intercept({ path: '/big', method: 'GET' }).reply(200, 'x'.repeat(4096));
  const err = asHttpError(await drive(clock, http.request(`${ORIGIN}/big`)).catch((e: unknown) => e));
  assert.equal(err.reason, 'responseTooLarge');
  assert.equal(err.attempts.length, 1);
  pool.intercept({ path: '/small', method: 'GET' }).reply(200, 'x'.repeat(1024));
  assert.equal((await drive(clock, http.request(`${ORIGIN}/small`))).body.length, 1024);
});

test('two clients on one registry share the metrics without a registration error', () => {
  const registry = new Registry();
  createHttpClient({ registry });
  assert.doesNotThrow(() => createHttpClient({ registry }));
});

test('invalid options are refused', () => {
  assert.throws(() => createHttpClient({ backoff: { maxAttempts: 0 } }), {
    code: 'ERR_INVALID_OPTION',
    option: 'backoff.maxAttempts',
  });
  assert.throws(() => createHttpClient({ attemptTimeoutMs: 0 }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => createHttpClient({ backoff: { initialMs: 100, maxMs: 10 } }), {
    code: 'ERR_INVALID_OPTION',
    option: 'backoff.maxMs',
  });
});

test('an unparsable URL fails as HttpRequestError without repeating the input, whose password must not reach a log', async () => {
  const { http } = setup();
  const logged: unknown[] = [];
  for (const input of ['http://admin:hunter2-secret@[bad-host/x', 'not a url hunter2-secret']) {
    const err = await http.request(input).catch((e: unknown) => e);
    const e = asHttpError(err);
    assert.equal(e.reason, 'invalidUrl');
    assert.equal(e.attempts.length, 0);
    logged.push(inspect(err, { depth: 10 }), JSON.stringify(err), String(err));
  }
  for (const text of logged) assert.doesNotMatch(String(text), /hunter2/);
});

test('the host label is bounded by metricHosts: a host outside it is counted as "other"', async () => {
  const { agent, clock, http, registry } = setup({ metricHosts: ['svc.test'] });
  agent.get(ORIGIN).intercept({ path: '/x', method: 'GET' }).reply(200, '');
  for (let i = 0; i < 3; i++)
    agent.get(`http://tenant-${i}.evil`).intercept({ path: '/x', method: 'GET' }).reply(200, '');
  await drive(clock, http.request(`${ORIGIN}/x`));
  for (let i = 0; i < 3; i++) await drive(clock, http.request(`http://tenant-${i}.evil/x`));
  const text = await registry.metrics();
  assert.match(text, /operator_http_client_requests_total\{host="svc\.test",method="GET",code="200"\} 1/);
  assert.match(text, /operator_http_client_requests_total\{host="other",method="GET",code="200"\} 3/);
  assert.doesNotMatch(text, /evil/);
});

test('without metricHosts the host label still has a bounded number of values', async () => {
  const { agent, clock, http, registry } = setup();
  const hosts = DEFAULT_HTTP_MAX_METRIC_HOSTS + 5;
  for (let i = 0; i < hosts; i++)
    agent.get(`http://h${i}.test`).intercept({ path: '/x', method: 'GET' }).reply(200, '');
  for (let i = 0; i < hosts; i++) await drive(clock, http.request(`http://h${i}.test/x`));
  const text = await registry.metrics();
  const values = new Set([...text.matchAll(/operator_http_client_requests_total\{host="([^"]+)"/g)].map((m) => m[1]));
  assert.equal(values.size, DEFAULT_HTTP_MAX_METRIC_HOSTS + 1);
  assert.ok(values.has('h0.test'));
  assert.match(text, /operator_http_client_requests_total\{host="other",method="GET",code="200"\} 5/);
});
