import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from './kube-client.js';
import { StaticTokenCredential } from './credentials.js';
import { makeTlsConfig } from './tls-config.js';
import { hasLongDigitRun, parseJson, stringifyJson } from './lossless-json.js';
import { FakeApiServer, sendJson } from './testing/fake-api-server.js';

const BIG = ['9007199254740993', '1733079000123456789', '9223372036854775807', '-9223372036854775808'];

test('integers beyond 2^53 are parsed exactly, as bigint, and written back byte for byte', () => {
  const text = `{"spec":{"a":${BIG[0]},"b":[${BIG[1]},${BIG[2]}],"c":${BIG[3]}}}`;
  const parsed = parseJson(text) as { spec: { a: unknown; b: unknown[]; c: unknown } };
  assert.equal(parsed.spec.a, 9007199254740993n);
  assert.deepEqual(parsed.spec.b, [1733079000123456789n, 9223372036854775807n]);
  assert.equal(parsed.spec.c, -9223372036854775808n);
  assert.equal(stringifyJson(parsed), text);
});

test('safe integers, floats and digits inside strings stay as JSON.parse reads them', () => {
  const text = String.raw`{"n":9007199254740991,"m":-9007199254740991,"f":12345678901234567890.5,"e":1234567890123456789e2,"s":"12345678901234567890","q":"a\"12345678901234567890","rv":"9223372036854775807"}`;
  assert.deepEqual(parseJson(text), JSON.parse(text));
  assert.throws(() => parseJson('{"a":01234567890123456789}'), SyntaxError);
  assert.throws(() => parseJson('{"a":12345678901234567890'), SyntaxError);
});

test('a bigint set by the caller is written as digits, never as a string; a cycle still throws', () => {
  assert.equal(
    stringifyJson({ a: 12345678901234567890n, b: [-5n], c: 'x' }),
    '{"a":12345678901234567890,"b":[-5],"c":"x"}',
  );
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.throws(() => stringifyJson(cyclic), TypeError);
});

test('the fast check finds a run of 16 digits wherever it starts, and nothing shorter', () => {
  for (let len = 0; len < 70; len++) {
    for (let at = 0; at + 15 <= len; at++) {
      for (const run of [15, 16, 17]) {
        if (at + run > len) continue;
        const text = 'x'.repeat(at) + '7'.repeat(run) + 'y'.repeat(len - at - run);
        assert.equal(hasLongDigitRun(text), run >= 16, `len ${len} at ${at} run ${run}`);
      }
    }
  }
});

let server: FakeApiServer;
before(async () => {
  server = await FakeApiServer.start();
});
after(async () => {
  await server.close();
});

test('regression: a read-modify-write through the client keeps an int64 beyond 2^53 (was rounded to 9223372036854776000)', async () => {
  const object = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big","namespace":"a","resourceVersion":"5"},"spec":{"nanos":9223372036854775807}}`;
  server.handle((req, res) => {
    if (req.url === '/api/v1') {
      return sendJson(res, 200, {
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: [
          { name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'list', 'watch', 'update'] },
        ],
      });
    }
    if (req.url.includes('watch=true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"type":"MODIFIED","object":${object}}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.method === 'PUT' ? req.body : object);
  });
  const client = new KubeClient(
    {
      server: server.url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'a',
    },
    { backoff: { maxAttempts: 1 } },
  );
  try {
    const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
    const got = await client.get<{
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace: string; resourceVersion: string };
      spec: { nanos: unknown };
    }>(CM, 'big', { namespace: 'a' });
    assert.equal(got.spec.nanos, 9223372036854775807n);
    await client.update(got);
    const put = server.requests.find((r) => r.method === 'PUT')!;
    assert.match(put.body, /"nanos":9223372036854775807[,}]/);
    for await (const e of client.watch(CM, { namespace: 'a' })) {
      assert.equal((e.object as { spec: { nanos: unknown } }).spec.nanos, 9223372036854775807n);
      break;
    }
  } finally {
    await client.close();
  }
});
