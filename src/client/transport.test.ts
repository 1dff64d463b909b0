import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import http from 'node:http';
import https from 'node:https';
import net, { createServer } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Registry } from 'prom-client';
import { FakeClock } from '../core/fake-clock.js';
import { AbortedError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { ApiError, isInvalid, isTooManyRequests } from './api-error.js';
import { promClientMetrics } from './client-metrics.js';
import { StaticTokenCredential, TokenFileCredential, type Credential } from './credentials.js';
import type { ClusterConfig } from './kubeconfig.js';
import { makeTlsConfig } from './tls-config.js';
import { Transport, TransportError, type TransportOptions } from './transport.js';
import { parseRetryAfter, isRetryableNetworkError, isRetryableStatus } from './retry-policy.js';
import { FakeApiServer, sendJson, sendStatus, untilTimerPending } from './testing/fake-api-server.js';

const TOKEN = 'tkn-SECRET-value';
let server: FakeApiServer;

before(async () => {
  server = await FakeApiServer.start();
});
after(async () => {
  await server.close();
});

function cfg(over: Partial<ClusterConfig> = {}, url = server.url): ClusterConfig {
  return {
    server: url,
    tls: makeTlsConfig({ rejectUnauthorized: true }),
    credential: new StaticTokenCredential(TOKEN),
    namespace: 'default',
    ...over,
  };
}

/**
 * No overall deadline unless a test sets one: `drive` fires every pending timer, and the deadline's
 * would otherwise fire while a retry test's request is at the server.
 */
function transport(opts: TransportOptions = {}, config: Partial<ClusterConfig> = {}): Transport {
  return new Transport(cfg(config), { random: () => 0.5, requestDeadlineMs: Infinity, ...opts });
}

function reset(handler: Parameters<FakeApiServer['handle']>[0]): void {
  server.requests.length = 0;
  server.handle(handler);
}

/** Drives the fake clock until `p` settles, firing each sleep the code under test starts. */
async function drive<T>(clock: FakeClock, p: Promise<T>): Promise<{ value?: T; error?: unknown; delays: number[] }> {
  let settled = false;
  const out: { value?: T; error?: unknown; delays: number[] } = { delays: [] };
  const done = p.then(
    (v) => ((out.value = v), (settled = true)),
    (e: unknown) => ((out.error = e), (settled = true)),
  );
  while (!settled) {
    await new Promise((r) => setImmediate(r));
    const next = clock.nextTimerInMs();
    if (next !== undefined) {
      out.delays.push(next);
      await clock.advance(next);
    }
  }
  await done;
  return out;
}

function recordingLogger(lines: string[]): Logger {
  const log = (obj: Record<string, unknown>, msg?: string): void =>
    void lines.push(JSON.stringify(obj) + ' ' + (msg ?? ''));
  const l: Logger = { debug: log, info: log, warn: log, error: log, child: () => l };
  return l;
}

test('requests carry the bearer token, a user agent, impersonation headers and the server path prefix', async () => {
  reset((_req, res) => sendJson(res, 200, { ok: true }));
  const t = new Transport(cfg({ impersonate: { user: 'bob', groups: ['g1', 'g2'] } }, `${server.url}/prefix/`));
  const res = await t.request<{ ok: boolean }>({ method: 'GET', path: '/api/v1/namespaces' });
  assert.deepEqual(res.body, { ok: true });
  const r = server.requests[0]!;
  assert.equal(r.url, '/prefix/api/v1/namespaces');
  assert.equal(r.headers.authorization, `Bearer ${TOKEN}`);
  assert.equal(r.headers['impersonate-user'], 'bob');
  assert.equal(r.headers['impersonate-group'], 'g1, g2');
  assert.match(r.headers['user-agent'] ?? '', /operator-runtime/);
  await t.close();
});

test('a GET answered 429 waits the Retry-After seconds on the clock, then succeeds', async () => {
  let n = 0;
  reset((_req, res) =>
    n++ === 0
      ? sendStatus(res, 429, 'TooManyRequests', 'slow down', {}, { 'retry-after': '2' })
      : sendJson(res, 200, { second: true }),
  );
  const clock = new FakeClock();
  const t = transport({ clock });
  const { value, delays } = await drive(clock, t.request({ method: 'GET', path: '/x' }));
  assert.deepEqual(value?.body, { second: true });
  assert.deepEqual(delays, [2000]);
  assert.equal(server.requests.length, 2);
  await t.close();
});

test('Retry-After as an HTTP date is honoured, and a huge one is capped', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  assert.equal(parseRetryAfter(new Date(Date.UTC(2026, 0, 1, 0, 0, 7)).toUTCString(), clock.now()), 7000);
  assert.equal(parseRetryAfter('soon', 0), undefined);
  let n = 0;
  reset((_req, res) =>
    n++ === 0 ? sendStatus(res, 429, 'TooManyRequests', 'x', {}, { 'retry-after': '3600' }) : sendJson(res, 200, {}),
  );
  const t = transport({ clock, maxRetryAfterMs: 5000 });
  const { delays } = await drive(clock, t.request({ method: 'GET', path: '/x' }));
  assert.deepEqual(delays, [5000]);
  await t.close();
});

test('a POST answered 429 is retried, since the server rejected it before running it', async () => {
  let n = 0;
  reset((_req, res) =>
    n++ === 0 ? sendStatus(res, 429, 'TooManyRequests', 'x', {}, { 'retry-after': '1' }) : sendJson(res, 201, {}),
  );
  const clock = new FakeClock();
  const t = transport({ clock });
  const { value } = await drive(clock, t.request({ method: 'POST', path: '/x', body: '{}' }));
  assert.equal(value?.status, 201);
  assert.equal(server.requests.length, 2);
  assert.equal(server.requests[1]!.body, '{}', 'the body is sent again');
  await t.close();
});

test('a GET answered 503 is retried with exponential backoff; after backoff.maxAttempts the ApiError is thrown', async () => {
  reset((_req, res) => sendStatus(res, 503, 'ServiceUnavailable', 'down'));
  const clock = new FakeClock();
  const t = transport({ clock, backoff: { maxAttempts: 4, initialMs: 100 }, random: () => 0.999 });
  const { error, delays } = await drive(clock, t.request({ method: 'GET', path: '/x' }));
  assert.ok(error instanceof ApiError && error.status === 503);
  assert.deepEqual(delays, [99, 199, 399]);
  assert.equal(server.requests.length, 4);
  await t.close();
});

test('a POST or PATCH answered 503 is not retried: it may have been applied', async () => {
  reset((_req, res) => sendStatus(res, 503, 'ServiceUnavailable', 'down'));
  const t = transport({ clock: new FakeClock() });
  for (const method of ['POST', 'PATCH']) {
    await assert.rejects(
      t.request({ method, path: '/x', body: '{}' }),
      (e: unknown) => e instanceof ApiError && e.status === 503,
    );
  }
  assert.equal(server.requests.length, 2);
  await t.close();
});

test('a connection reset mid-request is retried for GET but not for PATCH', async () => {
  let n = 0;
  const handler = (_r: unknown, res: { socket: { destroy(): void } | null }): void =>
    void (n++ === 0 ? res.socket?.destroy() : sendJson(res as never, 200, { ok: 1 }));
  reset(handler as never);
  const clock = new FakeClock();
  const t = transport({ clock });
  const { value } = await drive(clock, t.request({ method: 'GET', path: '/x' }));
  assert.deepEqual(value?.body, { ok: 1 });
  n = 0;
  reset(handler as never);
  await assert.rejects(
    t.request({ method: 'PATCH', path: '/x', body: '[]' }),
    (e: unknown) => e instanceof TransportError && e.code === 'ERR_TRANSPORT',
  );
  assert.equal(server.requests.length, 1);
  await t.close();
});

test('a refused connection is retried for any method (nothing was sent) and finally throws TransportError', async () => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const clock = new FakeClock();
  const t = new Transport(cfg({}, `http://127.0.0.1:${port}`), {
    clock,
    backoff: { maxAttempts: 3 },
    random: () => 0.5,
  });
  const { error, delays } = await drive(clock, t.request({ method: 'POST', path: '/x', body: '{}' }));
  assert.ok(error instanceof TransportError, String(error));
  assert.match(error.message, /ECONNREFUSED/);
  assert.equal(delays.length, 2);
  assert.ok(isRetryableNetworkError({ code: 'ECONNREFUSED' }, 'POST'));
  assert.ok(!isRetryableNetworkError({ code: 'ECONNRESET' }, 'POST'));
  assert.ok(isRetryableStatus(429, 'POST') && !isRetryableStatus(503, 'POST') && isRetryableStatus(503, 'DELETE'));
  await t.close();
});

test('a 401 refreshes a rotating credential and retries once; a second 401 is thrown', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'tr-'));
  const file = path.join(dir, 'token');
  await writeFile(file, 'old');
  reset((req, res) =>
    req.headers.authorization === 'Bearer new'
      ? sendJson(res, 200, { ok: true })
      : sendStatus(res, 401, 'Unauthorized', 'Unauthorized'),
  );
  const credential = new TokenFileCredential(file);
  const t = transport({}, { credential });
  await credential.get();
  await writeFile(file, 'new');
  assert.deepEqual((await t.request({ method: 'POST', path: '/x', body: '{}' })).body, { ok: true });
  assert.equal(server.requests.length, 2);
  await writeFile(file, 'newer');
  credential.invalidate();
  server.requests.length = 0;
  await assert.rejects(
    t.request({ method: 'GET', path: '/x' }),
    (e: unknown) => e instanceof ApiError && e.status === 401,
  );
  assert.equal(server.requests.length, 2, 'one refresh, one retry, no loop');
  await t.close();
});

test('a 422 Status maps to an ApiError with reason and field causes; a non-JSON error body keeps its status', async () => {
  const causes = [{ type: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' }];
  reset((req, res) =>
    req.url === '/invalid'
      ? sendStatus(res, 422, 'Invalid', 'Pod "p" is invalid', { details: { name: 'p', kind: 'Pod', causes } })
      : void res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>'),
  );
  const t = transport({ backoff: { maxAttempts: 1 } });
  await assert.rejects(t.request({ method: 'POST', path: '/invalid', body: '{}' }), (e: unknown) => {
    assert.ok(e instanceof ApiError && isInvalid(e));
    assert.equal(e.reason, 'Invalid');
    assert.deepEqual(e.details?.causes, causes);
    assert.equal(e.method, 'POST');
    return true;
  });
  await assert.rejects(
    t.request({ method: 'GET', path: '/html' }),
    (e: unknown) => e instanceof ApiError && e.status === 502 && /bad gateway/.test(e.message),
  );
  await t.close();
});

test('no thrown error and no log line ever contains the credential', async () => {
  const lines: string[] = [];
  reset((_req, res) => sendStatus(res, 429, 'TooManyRequests', 'x', {}, { 'retry-after': '0' }));
  const clock = new FakeClock();
  const t = transport({ clock, backoff: { maxAttempts: 2 }, logger: recordingLogger(lines) });
  const { error } = await drive(clock, t.request({ method: 'GET', path: '/x' }));
  assert.ok(isTooManyRequests(error));
  const closed = new Transport(cfg({}, 'http://127.0.0.1:1'), {
    clock,
    backoff: { maxAttempts: 1 },
    logger: recordingLogger(lines),
  });
  const { error: netErr } = await drive(clock, closed.request({ method: 'GET', path: '/y' }));
  assert.ok(netErr instanceof TransportError);
  assert.ok(lines.length > 0, 'retries were logged');
  for (const text of [
    inspect(error, { depth: 20, showHidden: true }),
    inspect(netErr, { depth: 20, showHidden: true }),
    ...lines,
    inspect(t, { depth: 6 }),
  ]) {
    assert.ok(!text.includes(TOKEN), text.slice(0, 500));
  }
  await t.close();
  await closed.close();
});

test('an already-aborted signal sends nothing; an abort during a retry wait rejects with AbortedError', async () => {
  reset((_req, res) => sendStatus(res, 503, 'ServiceUnavailable', 'x'));
  const t = transport({ clock: new FakeClock() });
  await assert.rejects(t.request({ method: 'GET', path: '/x', signal: AbortSignal.abort() }), AbortedError);
  assert.equal(server.requests.length, 0);
  const clock = new FakeClock();
  const t2 = transport({ clock });
  const ac = new AbortController();
  const p = t2.request({ method: 'GET', path: '/x', signal: ac.signal });
  await untilTimerPending(clock);
  ac.abort();
  await assert.rejects(p, AbortedError);
  assert.equal(clock.pendingTimers, 0);
  await t.close();
  await t2.close();
});

test('an abort while the server is still thinking rejects with AbortedError', async () => {
  reset(() => {
    /* never answers */
  });
  const t = transport();
  const ac = new AbortController();
  const p = t.request({ method: 'GET', path: '/slow', signal: ac.signal });
  while (server.requests.length === 0) await new Promise((r) => setImmediate(r));
  ac.abort();
  await assert.rejects(p, AbortedError);
  await t.close();
});

test('request metrics land on the registry the caller passes, with code, method and host', async () => {
  reset((req, res) => (req.url === '/missing' ? sendStatus(res, 404, 'NotFound', 'x') : sendJson(res, 200, {})));
  const registry = new Registry();
  const t = transport({ metrics: promClientMetrics(registry) });
  await t.request({ method: 'GET', path: '/a' });
  await t.request({ method: 'GET', path: '/a' });
  await assert.rejects(t.request({ method: 'GET', path: '/missing' }));
  const host = new URL(server.url).host;
  const text = await registry.metrics();
  assert.match(text, new RegExp(`rest_client_requests_total\\{code="200",method="GET",host="${host}"\\} 2`));
  assert.match(text, new RegExp(`rest_client_requests_total\\{code="404",method="GET",host="${host}"\\} 1`));
  assert.match(text, new RegExp(`rest_client_request_duration_seconds_count\\{method="GET",host="${host}"\\} 3`));
  // A second client on the same registry shares the series instead of failing to register.
  assert.doesNotThrow(() => promClientMetrics(registry));
  await t.close();
});

test('the client-side rate limit is off by default and, when set, spaces requests by 1/qps after the burst', async () => {
  reset((_req, res) => sendJson(res, 200, {}));
  const clock = new FakeClock();
  const t = transport({ clock, rateLimit: { qps: 10, burst: 2 } });
  await t.request({ method: 'GET', path: '/1' });
  await t.request({ method: 'GET', path: '/2' });
  const { delays } = await drive(clock, t.request({ method: 'GET', path: '/3' }));
  assert.deepEqual(delays, [100]);
  const unlimited = transport({ clock });
  await Promise.all(Array.from({ length: 20 }, () => unlimited.request({ method: 'GET', path: '/u' })));
  assert.equal(clock.pendingTimers, 0);
  await t.close();
  await unlimited.close();
});

test('open watches never starve ordinary requests: they use their own dispatcher', async () => {
  reset((req, res) => {
    if (req.url.startsWith('/watch')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('');
      return; // held open
    }
    sendJson(res, 200, { ok: true });
  });
  const t = transport({ connections: 1 });
  const ac = new AbortController();
  const w1 = await t.stream({ method: 'GET', path: '/watch1', signal: ac.signal, bodyTimeoutMs: 0 });
  const w2 = await t.stream({ method: 'GET', path: '/watch2', signal: ac.signal, bodyTimeoutMs: 0 });
  const res = await t.request({ method: 'GET', path: '/get', signal: AbortSignal.timeout(5000) });
  assert.deepEqual(res.body, { ok: true });
  w1.destroy();
  w2.destroy();
  ac.abort();
  await t.close();
});

test('a stream answered with an error status throws the ApiError', async () => {
  reset((_req, res) => sendStatus(res, 410, 'Expired', 'too old resource version'));
  const t = transport();
  await assert.rejects(
    t.stream({ method: 'GET', path: '/w', bodyTimeoutMs: 0 }),
    (e: unknown) => e instanceof ApiError && e.status === 410,
  );
  await t.close();
});

const run = promisify(execFile);

test('TLS is verified against the configured CA and tls-server-name; insecure-skip-tls-verify turns it off', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'tls-'));
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    path.join(dir, 'k'),
    '-out',
    path.join(dir, 'c'),
    '-days',
    '1',
    '-subj',
    '/CN=kubernetes',
    '-addext',
    'subjectAltName=DNS:kubernetes',
  ]);
  const cert = await readFile(path.join(dir, 'c'), 'utf8');
  const key = await readFile(path.join(dir, 'k'), 'utf8');
  const tlsServer = await FakeApiServer.start({ cert, key });
  tlsServer.handle((_req, res) => sendJson(res, 200, { secure: true }));
  const call = async (tls: Parameters<typeof makeTlsConfig>[0], credential?: Credential): Promise<unknown> => {
    const t = new Transport(cfg({ tls: makeTlsConfig(tls), ...(credential ? { credential } : {}) }, tlsServer.url), {
      backoff: { maxAttempts: 1 },
    });
    try {
      return (await t.request({ method: 'GET', path: '/' })).body;
    } finally {
      await t.close();
    }
  };
  assert.deepEqual(await call({ ca: cert, servername: 'kubernetes', rejectUnauthorized: true }), { secure: true });
  await assert.rejects(call({ rejectUnauthorized: true, servername: 'kubernetes' }), TransportError, 'unknown CA');
  await assert.rejects(
    call({ ca: cert, rejectUnauthorized: true }),
    TransportError,
    '127.0.0.1 is not in the certificate',
  );
  assert.deepEqual(await call({ rejectUnauthorized: false }), { secure: true });
  await tlsServer.close();
});

test('a client certificate from the credential is presented, and a new one gets a fresh pool; keys never print', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'mtls-'));
  const make = async (name: string, cn: string, san?: string): Promise<{ cert: string; key: string }> => {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      path.join(dir, `${name}.key`),
      '-out',
      path.join(dir, `${name}.crt`),
      '-days',
      '1',
      '-subj',
      `/CN=${cn}`,
      ...(san ? ['-addext', `subjectAltName=${san}`] : []),
    ]);
    return {
      cert: await readFile(path.join(dir, `${name}.crt`), 'utf8'),
      key: await readFile(path.join(dir, `${name}.key`), 'utf8'),
    };
  };
  const srv = await make('server', 'kubernetes', 'IP:127.0.0.1');
  const alice = await make('alice', 'alice');
  const bob = await make('bob', 'bob');
  const server = https.createServer(
    { ...srv, ca: [alice.cert, bob.cert], requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      sendJson(res, 200, { user: peer.subject.CN });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  let current = alice;
  const credential: Credential = {
    kind: 'exec',
    get: () => Promise.resolve({ clientCert: current }),
    invalidate: () => ((current = bob), true),
  };
  const t = new Transport(cfg({ tls: makeTlsConfig({ ca: srv.cert, rejectUnauthorized: true }), credential }, url));
  assert.deepEqual((await t.request({ method: 'GET', path: '/' })).body, { user: 'alice' });
  credential.invalidate();
  assert.deepEqual((await t.request({ method: 'GET', path: '/' })).body, { user: 'bob' });
  for (const text of [
    inspect(t, { depth: 20 }),
    inspect(
      new Transport(cfg({ tls: makeTlsConfig({ cert: alice.cert, key: alice.key, rejectUnauthorized: true }) }, url)),
      { depth: 20 },
    ),
  ]) {
    assert.ok(!text.includes('PRIVATE KEY'), text.slice(0, 300));
  }
  await t.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

test('a credential that cannot be obtained surfaces as its own CredentialError, not a network error', async () => {
  reset((_req, res) => sendJson(res, 200, {}));
  const t = transport({}, { credential: new TokenFileCredential('/nonexistent/token') });
  await assert.rejects(
    t.request({ method: 'GET', path: '/x' }),
    (e: unknown) => (e as { code?: string }).code === 'ERR_CREDENTIAL',
  );
  assert.equal(server.requests.length, 0);
  await t.close();
});

test('with a proxy-url, requests and watches tunnel through the proxy, which gets its own credentials', async () => {
  const tunnels: string[] = [];
  const auths: (string | undefined)[] = [];
  const proxy = http.createServer((_req, res) => void res.writeHead(405).end());
  proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    auths.push(req.headers['proxy-authorization']);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  const proxyUrl = `http://pu:pp-SECRET@127.0.0.1:${(proxy.address() as { port: number }).port}`;
  reset((req, res) =>
    req.url.startsWith('/watch')
      ? void res.writeHead(200).end('{"type":"ADDED","object":{}}\n')
      : sendJson(res, 200, { via: 'proxy' }),
  );
  const t = new Transport({ ...cfg(), proxyUrl });
  assert.deepEqual((await t.request({ method: 'GET', path: '/x' })).body, { via: 'proxy' });
  const w = await t.stream({ method: 'GET', path: '/watch', bodyTimeoutMs: 0 });
  let text = '';
  for await (const chunk of w.body) text += Buffer.from(chunk).toString();
  assert.match(text, /ADDED/);
  assert.ok(tunnels.length >= 2, 'the request pool and the watch dispatcher both tunnel');
  assert.ok(tunnels.every((u) => u === new URL(server.url).host));
  assert.ok(auths.every((a) => a === `Basic ${Buffer.from('pu:pp-SECRET').toString('base64')}`));
  assert.ok(!inspect(t, { depth: 20 }).includes('SECRET'));
  await t.close();
  proxy.closeAllConnections();
  await new Promise<void>((r) => proxy.close(() => r()));
});
