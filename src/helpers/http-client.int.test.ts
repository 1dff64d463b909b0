import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { createHttpClient, HttpRequestError, type HttpClient } from './http-client.js';

interface Seen {
  readonly at: number;
  readonly method: string;
  readonly url: string;
  readonly idempotencyKey: string | undefined;
}

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** A local HTTP server whose behaviour each test scripts: answer n (from 1) is `handler(req, res, n)`. */
describe('the resilient HTTP client against a flaky local server', () => {
  let server: Server;
  let base: string;
  let handler: Handler = (_q, res) => res.end();
  let seen: Seen[] = [];
  let http: HttpClient;
  let registry: Registry;

  before(async () => {
    server = createServer((req, res) => {
      seen.push({
        at: performance.now(),
        method: req.method ?? '',
        url: req.url ?? '',
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      });
      req.resume();
      req.on('end', () => handler(req, res, seen.length));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await http?.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  function reset(h: Handler, options: Parameters<typeof createHttpClient>[0] = {}): void {
    handler = h;
    seen = [];
    registry = new Registry();
    void http?.close();
    http = createHttpClient({
      attemptTimeoutMs: 2_000,
      registry,
      ...options,
      backoff: { initialMs: 20, maxMs: 100, ...options.backoff },
    });
  }

  const failures =
    (n: number, status = 503, headers: Record<string, string> = {}): Handler =>
    (_req, res, i) => {
      if (i <= n) res.writeHead(status, headers).end('try later');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ attempt: i }));
    };

  test('a server that fails 3 times and then answers is retried until it answers', async () => {
    reset(failures(3));
    const res = await http.request(`${base}/data`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { attempt: 4 });
    assert.deepEqual(
      res.attempts.map((a) => a.status),
      [503, 503, 503, 200],
    );
    assert.equal(seen.length, 4);
    const text = await registry.metrics();
    assert.match(text, /operator_http_client_requests_total\{host="127\.0\.0\.1:\d+",method="GET",code="503"\} 3/);
    assert.match(text, /operator_http_client_requests_total\{host="127\.0\.0\.1:\d+",method="GET",code="200"\} 1/);
  });

  test('Retry-After is respected: the next attempt comes no sooner than asked', async () => {
    reset(failures(1, 429, { 'retry-after': '1' }));
    const res = await http.request(`${base}/data`);
    assert.equal(res.status, 200);
    const gap = seen[1]!.at - seen[0]!.at;
    assert.ok(gap >= 990, `second attempt after ${gap.toFixed(0)} ms, asked 1000`);
    assert.equal(res.attempts[0]!.delayMs, 1_000);
  });

  test('gives up at the deadline of the caller signal, even while the server asks to wait longer', async () => {
    reset(failures(Infinity, 503, { 'retry-after': '10' }));
    const start = performance.now();
    const err = await http.request(`${base}/data`, { signal: AbortSignal.timeout(300) }).catch((e: unknown) => e);
    const took = performance.now() - start;
    assert.ok(err instanceof HttpRequestError);
    assert.equal(err.reason, 'aborted');
    assert.equal(err.attempts.length, 1);
    assert.ok(took >= 280 && took < 1_500, `gave up after ${took.toFixed(0)} ms`);
  });

  test('a server that never answers: each attempt times out, and the call ends at the signal', async () => {
    reset(() => {}, { attemptTimeoutMs: 150, backoff: { maxAttempts: 101 } });
    const start = performance.now();
    const err = await http.request(`${base}/hang`, { signal: AbortSignal.timeout(1_000) }).catch((e: unknown) => e);
    const took = performance.now() - start;
    assert.ok(err instanceof HttpRequestError);
    assert.equal(err.reason, 'aborted');
    assert.ok(err.attempts.length >= 3, `${err.attempts.length} attempts`);
    assert.ok(err.attempts.slice(0, -1).every((a) => a.error === 'ERR_ATTEMPT_TIMEOUT' && a.durationMs >= 140));
    assert.ok(took >= 980 && took < 2_000, `gave up after ${took.toFixed(0)} ms`);
  });

  test('with no signal, it gives up after the last retry and reports each attempt', async () => {
    reset(failures(Infinity, 500), { backoff: { maxAttempts: 3 } });
    const err = await http
      .request(`${base}/data?api_key=hunter2`, { headers: { authorization: 'Bearer hunter2' } })
      .catch((e: unknown) => e);
    assert.ok(err instanceof HttpRequestError);
    assert.equal(err.reason, 'retriesExhausted');
    assert.deepEqual(
      err.attempts.map((a) => a.status),
      [500, 500, 500],
    );
    assert.equal(err.status, 500);
    assert.doesNotMatch(`${err.message} ${JSON.stringify(err)}`, /hunter2/);
    assert.equal(seen.length, 3);
  });

  test('a dropped connection is retried for GET', async () => {
    reset((req, res, i) => (i <= 2 ? req.socket.destroy() : res.end('ok')));
    const res = await http.request(`${base}/data`);
    assert.equal(res.text(), 'ok');
    assert.equal(res.attempts.length, 3);
    assert.ok(res.attempts[0]!.error, 'the first attempt ended in a network error');
  });

  test('a POST after a dropped connection is not sent twice, unless it carries an idempotency key', async () => {
    reset((req, res, i) => (i === 1 ? req.socket.destroy() : res.writeHead(201).end('made')));
    const err = await http.request(`${base}/orders`, { method: 'POST', body: '{"item":1}' }).catch((e: unknown) => e);
    assert.ok(err instanceof HttpRequestError);
    assert.equal(err.reason, 'notRetryable');
    assert.equal(seen.length, 1);

    reset((req, res, i) => (i === 1 ? req.socket.destroy() : res.writeHead(201).end('made')));
    const res = await http.request(`${base}/orders`, { method: 'POST', body: '{"item":1}', idempotencyKey: 'order-7' });
    assert.equal(res.status, 201);
    assert.deepEqual(
      seen.map((s) => s.idempotencyKey),
      ['order-7', 'order-7'],
    );
  });
});
