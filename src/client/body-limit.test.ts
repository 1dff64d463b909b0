import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { Readable } from 'node:stream';
import { ApiError } from './api-error.js';
import { readBodyLimited, readBodyPrefix, ResponseTooLargeError } from './body-limit.js';
import { StaticTokenCredential } from './credentials.js';
import { FakeApiServer } from './testing/fake-api-server.js';
import { KubeClient } from './kube-client.js';
import { makeTlsConfig } from './tls-config.js';
import { DEFAULT_MAX_RESPONSE_BYTES, MAX_ERROR_BODY_BYTES, Transport, type TransportOptions } from './transport.js';
import { InvalidOptionError } from '../core/errors.js';
import { WatchDecodeError } from './watch-decoder.js';

let server: FakeApiServer;
before(async () => {
  server = await FakeApiServer.start();
});
after(async () => {
  await server.close();
});

const config = () => ({
  server: server.url,
  tls: makeTlsConfig({ rejectUnauthorized: true }),
  credential: new StaticTokenCredential('t'),
  namespace: 'd',
});
const transport = (opts: TransportOptions = {}) =>
  new Transport(config(), { random: () => 0, ...opts, backoff: { maxAttempts: 3, ...opts.backoff } });

interface Sent {
  bytes: number;
  finished: boolean;
  closed: Promise<void>;
}

/**
 * Streams `total` bytes of `fill` with backpressure and records how much was handed to the socket
 * and whether the body was sent to its end (a client that stopped reading closes the connection).
 */
function streamBody(
  res: http.ServerResponse,
  status: number,
  total: number,
  fill: Buffer,
  headers: Record<string, string> = {},
): Sent {
  const sent: Sent = { bytes: 0, finished: false, closed: Promise.resolve() };
  sent.closed = new Promise<void>((resolve) => res.on('close', () => resolve()));
  res.on('finish', () => (sent.finished = true));
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  const pump = (): void => {
    while (sent.bytes < total && !res.destroyed) {
      const n = Math.min(fill.length, total - sent.bytes);
      sent.bytes += n;
      if (!res.write(fill.subarray(0, n))) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end();
  };
  pump();
  return sent;
}

const MIB = 1024 * 1024;
const spaces = Buffer.alloc(64 * 1024, ' ');

test('a response body beyond maxResponseBytes is cut off while it streams in, naming the limit and the path but none of the body', async () => {
  let sent: Sent | undefined;
  // 48 MiB of whitespace: without the limit it would be read to its end (and only then judged).
  server.handle((_req, res) => {
    sent = streamBody(res, 200, 48 * MIB, spaces);
  });
  const t = transport({ maxResponseBytes: 256 * 1024 });
  const err = await t.request({ method: 'GET', path: '/api/v1/namespaces/d/configmaps?limit=500' }).then(
    () => assert.fail('the oversized body was accepted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ResponseTooLargeError, String(err));
  assert.equal(err.code, 'ERR_RESPONSE_TOO_LARGE');
  assert.equal(err.limitBytes, 256 * 1024);
  assert.match(
    err.message,
    /GET \/api\/v1\/namespaces\/d\/configmaps\?limit=500: response body exceeds 262144 bytes \(maxResponseBytes\)/,
  );
  await sent!.closed;
  assert.equal(sent!.finished, false, 'the client closed the connection instead of reading to the end');
  assert.ok(sent!.bytes < 40 * MIB, `server wrote ${sent!.bytes} bytes before the client hung up`);
  assert.equal(server.requests.length > 0, true);
  await t.close();
});

test('a too-large answer is not retried, even for a GET', async () => {
  server.requests.length = 0;
  server.handle((_req, res) => void streamBody(res, 200, 2 * MIB, spaces));
  const t = transport({ maxResponseBytes: 64 * 1024 });
  await assert.rejects(t.request({ method: 'GET', path: '/x' }), ResponseTooLargeError);
  assert.equal(server.requests.length, 1);
  await t.close();
});

test('a content-length above the limit fails before the body is read', async () => {
  let sent: Sent | undefined;
  server.handle((_req, res) => {
    sent = streamBody(res, 200, 64 * MIB, spaces, { 'content-length': String(64 * MIB) });
  });
  const t = transport({ maxResponseBytes: MIB });
  await assert.rejects(
    t.request({ method: 'GET', path: '/big' }),
    (e: unknown) => e instanceof ResponseTooLargeError && e.path === '/big',
  );
  await sent!.closed;
  assert.equal(sent!.finished, false);
  await t.close();
});

test('a body at the limit is read and parsed', async () => {
  const doc = Buffer.from(JSON.stringify({ kind: 'ConfigMap', data: { k: 'v'.repeat(1000) } }));
  server.handle((_req, res) => void streamBody(res, 200, doc.length, doc));
  const t = transport({ maxResponseBytes: doc.length });
  const res = await t.request<{ data: { k: string } }>({ method: 'GET', path: '/ok' });
  assert.equal(res.body.data.k.length, 1000);
  await t.close();
});

test('an error answer is read only up to MAX_ERROR_BODY_BYTES, then the connection is closed', async () => {
  let sent: Sent | undefined;
  server.handle((_req, res) => {
    sent = streamBody(res, 404, 200 * MIB, Buffer.alloc(64 * 1024, 'x'), { 'content-type': 'text/plain' });
  });
  const t = transport();
  const err = await t.request({ method: 'GET', path: '/api/v1/namespaces/d/configmaps/huge' }).then(
    () => assert.fail('a 404 resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError && err.status === 404, String(err));
  await sent!.closed;
  assert.equal(sent!.finished, false, 'the 200 MiB error body was not read to its end');
  assert.ok(sent!.bytes < 100 * MIB, `server wrote ${sent!.bytes} bytes`);
  assert.ok(err.message.length < 1000, 'the message carries a short excerpt at most');
  await t.close();
});

test('a watch answered with a huge error body throws the ApiError without reading it all', async () => {
  let sent: Sent | undefined;
  server.handle((_req, res) => {
    sent = streamBody(res, 500, 200 * MIB, Buffer.alloc(64 * 1024, 'y'), { 'content-type': 'text/plain' });
  });
  const t = transport();
  await assert.rejects(
    t.stream({ method: 'GET', path: '/w', bodyTimeoutMs: 0 }),
    (e: unknown) => e instanceof ApiError && e.status === 500,
  );
  await sent!.closed;
  assert.equal(sent!.finished, false);
  await t.close();
});

test('maxResponseBytes and maxWatchLineBytes must be positive integers; the defaults are 32 MiB and 16 MiB', () => {
  assert.equal(DEFAULT_MAX_RESPONSE_BYTES, 32 * MIB);
  assert.equal(MAX_ERROR_BODY_BYTES, 64 * 1024);
  assert.throws(() => transport({ maxResponseBytes: 0 }), InvalidOptionError);
  assert.throws(() => transport({ maxResponseBytes: Number.NaN }), InvalidOptionError);
  assert.throws(() => new KubeClient(config(), { maxWatchLineBytes: -1 }), InvalidOptionError);
});

test('the watch line limit is set from KubeClient options: a longer line ends the watch with WatchDecodeError', async () => {
  server.handle((req, res) => {
    if (req.url === '/api/v1') {
      res.setHeader('content-type', 'application/json');
      return void res.end(
        JSON.stringify({
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['watch'] }],
        }),
      );
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'small', resourceVersion: '1' } } }) + '\n');
    res.end(
      JSON.stringify({
        type: 'ADDED',
        object: { metadata: { name: 'big', resourceVersion: '2' }, data: { k: 'v'.repeat(8192) } },
      }) + '\n',
    );
  });
  const client = new KubeClient(config(), { maxWatchLineBytes: 4096 });
  const names: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of client.watch<{ metadata: { name: string } }>({ apiVersion: 'v1', kind: 'ConfigMap' }))
        names.push(e.object.metadata.name);
    })(),
    (e: unknown) => e instanceof WatchDecodeError && /exceeds 4096 bytes/.test(e.message),
  );
  assert.deepEqual(names, ['small'], 'the event before the long line was delivered');
  await client.close();
});

test('readBodyLimited: a stream cut at the limit is destroyed; readBodyPrefix keeps the first bytes and never throws', async () => {
  const chunks = () => [Buffer.from('abc'), Buffer.from('def'), Buffer.from('ghi')];
  const s1 = Readable.from(chunks());
  await assert.rejects(
    readBodyLimited(s1, 5, undefined, () => new ResponseTooLargeError('GET', '/p', 5)),
    ResponseTooLargeError,
  );
  assert.equal(s1.destroyed, true);
  assert.equal(await readBodyLimited(Readable.from(chunks()), 9, undefined, () => new Error('x')), 'abcdefghi');
  assert.equal(await readBodyLimited(Readable.from(chunks()), 9, '9', () => new Error('x')), 'abcdefghi');
  await assert.rejects(
    readBodyLimited(Readable.from(chunks()), 8, '9', () => new ResponseTooLargeError('GET', '/p', 8)),
    ResponseTooLargeError,
  );
  // A multi-byte character cut between chunks is decoded whole.
  const euro = Buffer.from('€');
  assert.equal(
    await readBodyLimited(Readable.from([euro.subarray(0, 1), euro.subarray(1)]), 9, undefined, () => new Error('x')),
    '€',
  );
  const s2 = Readable.from(chunks());
  assert.deepEqual(await readBodyPrefix(s2, 4), { text: 'abcd', truncated: true });
  assert.equal(s2.destroyed, true);
  assert.deepEqual(await readBodyPrefix(Readable.from(chunks()), 9), { text: 'abcdefghi', truncated: false });
  const failing = new Readable({
    read() {
      this.push('par');
      this.destroy(new Error('reset'));
    },
  });
  assert.deepEqual(await readBodyPrefix(failing, 100), { text: 'par', truncated: false });
});

test('readBodyLimited: a body in one chunk decodes as the same bytes in pieces do (BOM dropped, bad bytes replaced)', async () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"€"}'), Buffer.from([0xff])]);
  const read = (chunks: Buffer[]) => readBodyLimited(Readable.from(chunks), 100, undefined, () => new Error('x'));
  const whole = await read([bytes]);
  assert.equal(whole, '{"a":"€"}\ufffd');
  for (let cut = 1; cut < bytes.length; cut++)
    assert.equal(await read([bytes.subarray(0, cut), bytes.subarray(cut)]), whole, `cut at ${cut}`);
  assert.equal(await read([bytes.subarray(0, 2), bytes.subarray(2, 7), bytes.subarray(7)]), whole);
  assert.equal(await read([]), '');
});

test('a body that closes before its end rejects; one that ends and then closes resolves', async () => {
  const cut = new Readable({ read() {} });
  const reading = readBodyLimited(cut, MIB, undefined, () => new Error('too large'));
  cut.push('{"partial":');
  cut.destroy();
  await assert.rejects(reading, /response body closed before its end/);

  const whole = Readable.from([Buffer.from('{"k":'), Buffer.from('"v"}')]);
  assert.equal(await readBodyLimited(whole, MIB, undefined, () => new Error('too large')), '{"k":"v"}');
});
