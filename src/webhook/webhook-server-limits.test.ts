import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { kind } from '../client/kind.js';
import { realClock } from '../core/clock.js';
import type { KubeObject } from '../core/object-key.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { createSelfSignedCertificate } from './self-signed-certificate.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { spoke } from './handlers.js';
import { WebhookServer, type WebhookServerOptions } from './webhook-server.js';
import { Webhooks } from './webhooks.js';

interface Res {
  status: number;
  body: string;
}
interface PostOptions {
  readonly headers?: Record<string, string>;
  readonly cert?: { cert: string; key: string };
  /** Send the body in these parts, `gapMs` apart (the last one ends the request). */
  readonly parts?: readonly string[];
  readonly gapMs?: number;
}

function post(port: number, ca: string, path: string, body: string, options: PostOptions = {}): Promise<Res> {
  return new Promise((resolve, reject) => {
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      ...options.headers,
    };
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, headers, agent: false, ...(options.cert ?? {}) },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (text += d))
          .on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    const parts = options.parts ?? [body];
    let i = 0;
    const next = (): void => {
      const part = parts[i++]!;
      if (i === parts.length) return void req.end(part);
      req.write(part);
      setTimeout(next, options.gapMs ?? 0);
    };
    next();
  });
}

const WIDGET = kind<KubeObject & { spec: Record<string, unknown> }>('example.com/v1', 'Widget');
const WIDGET_V2 = kind<KubeObject & { spec: Record<string, unknown> }>('example.com/v2', 'Widget');
const admissionReview = (object: string, uid = 'u1') =>
  `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"operation":"CREATE","userInfo":{"username":"alice"},"object":${object}}}`;
const widget = (spec: string) =>
  `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":${spec}}`;

interface Rig {
  readonly server: WebhookServer;
  readonly port: number;
  readonly ca: string;
  /** Lets every blocked validator answer. */
  release(): void;
  readonly entered: () => number;
}

async function rig(dir: string, options: Partial<WebhookServerOptions> = {}): Promise<Rig> {
  const pair = createSelfSignedCertificate({ hosts: ['127.0.0.1'] });
  const sub = await mkdtemp(join(dir, 'rig-'));
  await writeFile(join(sub, 'tls.crt'), pair.cert);
  await writeFile(join(sub, 'tls.key'), pair.key);
  const webhooks = new Webhooks();
  let releases: Array<() => void> = [];
  let entered = 0;
  webhooks.validate(
    WIDGET,
    async (obj) => {
      if (obj.spec.block) {
        entered++;
        await new Promise<void>((resolve) => releases.push(resolve));
      }
      return undefined;
    },
    { path: '/validate' },
  );
  webhooks.mutate(
    WIDGET,
    (obj) => {
      obj.spec.defaulted = 'yes';
      return obj;
    },
    { path: '/mutate' },
  );
  webhooks.convert(WIDGET, {
    hub: WIDGET,
    spokes: [
      spoke(WIDGET_V2, {
        toHub: (o) => ({ ...o, apiVersion: 'example.com/v1' }),
        fromHub: (h) => ({ ...h, apiVersion: 'example.com/v2' }),
      }),
    ],
  });
  const server = new WebhookServer(
    webhooks,
    { port: 0, host: '127.0.0.1', certDir: sub, ...options },
    { registry: createMetricsRegistry(), logger: recordingLogger(), clock: realClock, defaultHost: '127.0.0.1' },
  );
  await server.listen();
  return {
    server,
    port: server.port!,
    ca: pair.cert,
    release: () => {
      for (const r of releases) r();
      releases = [];
    },
    entered: () => entered,
  };
}

describe('webhook server limits (issue 24)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webhook-limits-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('reviews beyond maxConcurrentReviews are answered 429 at once; the admitted ones still answer', async () => {
    const r = await rig(dir, { maxConcurrentReviews: 2 });
    try {
      const blocked = [
        post(r.port, r.ca, '/validate', admissionReview(widget('{"block":true}'), 'a')),
        post(r.port, r.ca, '/validate', admissionReview(widget('{"block":true}'), 'b')),
      ];
      while (r.entered() < 2) await new Promise((resolve) => setTimeout(resolve, 5));
      const refused = await post(r.port, r.ca, '/validate', admissionReview(widget('{}'), 'c'));
      assert.equal(refused.status, 429);
      r.release();
      assert.deepEqual(
        (await Promise.all(blocked)).map((x) => x.status),
        [200, 200],
      );
      assert.equal(
        (await post(r.port, r.ca, '/validate', admissionReview(widget('{}'), 'd'))).status,
        200,
        'a slot is free again',
      );
    } finally {
      r.release();
      await r.server.close();
    }
  });

  test('connections beyond maxConnections are closed as they arrive; the first ones complete their handshakes', async () => {
    const r = await rig(dir, { maxConnections: 2 });
    const sockets: TLSSocket[] = [];
    try {
      const open = (): Promise<boolean> =>
        new Promise((resolve) => {
          const s = connect({ host: '127.0.0.1', port: r.port, ca: r.ca }, () => resolve(true));
          sockets.push(s);
          s.on('error', () => resolve(false)).on('close', () => resolve(false));
        });
      assert.deepEqual([await open(), await open(), await open()], [true, true, false]);
    } finally {
      for (const s of sockets) s.destroy();
      await r.server.close();
    }
  });

  test('a review that would take more than the in-flight budget to decode is refused 413 before it is decoded', async () => {
    const r = await rig(dir, { maxInFlightBytes: 32 * 1024 * 1024 });
    try {
      // 2 MiB of `{},` decodes to ~70 MiB: more than the budget holds for one review.
      const many = `[${Array.from({ length: 700_000 }, () => '{}').join(',')}]`;
      const res = await post(r.port, r.ca, '/validate', admissionReview(widget(`{"items":${many}}`)));
      assert.equal(res.status, 413);
      assert.match(res.body, /MiB to decode/);
      assert.equal((await post(r.port, r.ca, '/validate', admissionReview(widget('{"items":[{},{}]}')))).status, 200);
    } finally {
      await r.server.close();
    }
  });

  test('a body nested deeper than the limit is refused 400 without being decoded', async () => {
    const r = await rig(dir);
    try {
      const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
      const res = await post(r.port, r.ca, '/mutate', admissionReview(widget(`{"deep":${deep}}`)));
      assert.equal(res.status, 400);
      assert.match(res.body, /nested deeper than 1000/);
    } finally {
      await r.server.close();
    }
  });

  test('a slow body is cut at requestTimeoutMs (408), not held until Node checks its connections (30 s)', async () => {
    const r = await rig(dir, { requestTimeoutMs: 500 });
    try {
      const body = admissionReview(widget('{}'));
      const started = Date.now();
      const res = await post(r.port, r.ca, '/validate', body, {
        parts: [body.slice(0, 10), body.slice(10)],
        gapMs: 5_000,
      }).catch((err: Error) => ({ status: 0, body: err.message }));
      const elapsedMs = Date.now() - started;
      assert.equal(res.status, 408, res.body);
      assert.ok(elapsedMs < 2_000, `answered after ${elapsedMs} ms`);
    } finally {
      await r.server.close();
    }
  });

  test('integers beyond 2^53 survive conversion and admission byte for byte', async () => {
    const r = await rig(dir);
    try {
      const spec =
        '{"a":9007199254740993,"b":1733079000123456789,"c":9223372036854775807,"d":-9223372036854775808,"e":0.10000000000000000555,"f":1.5}';
      const conversion = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"c1","desiredAPIVersion":"example.com/v2","objects":[${widget(spec)}]}}`;
      const converted = await post(r.port, r.ca, '/convert', conversion);
      assert.equal(converted.status, 200);
      assert.ok(converted.body.includes(`"spec":${spec}`), converted.body);
      const mutated = await post(r.port, r.ca, '/mutate', admissionReview(widget(spec)));
      const review = JSON.parse(mutated.body) as { response: { patch: string } };
      assert.equal(
        Buffer.from(review.response.patch, 'base64').toString('utf8'),
        '[{"op":"add","path":"/spec/defaulted","value":"yes"}]',
      );
    } finally {
      await r.server.close();
    }
  });

  test('with clientCAFile, a client without a certificate from that CA is refused in the TLS handshake; one with it is served', async () => {
    const sub = await mkdtemp(join(dir, 'ca-'));
    const run = promisify(execFile);
    const f = (n: string) => join(sub, n);
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      f('ca.key'),
      '-out',
      f('ca.crt'),
      '-days',
      '1',
      '-subj',
      '/CN=test-client-ca',
    ]);
    await run('openssl', [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      f('client.key'),
      '-out',
      f('client.csr'),
      '-subj',
      '/CN=kube-apiserver',
    ]);
    await writeFile(f('ext'), 'extendedKeyUsage=clientAuth\n');
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      f('client.csr'),
      '-CA',
      f('ca.crt'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f('client.crt'),
      '-days',
      '1',
      '-extfile',
      f('ext'),
    ]);
    const r = await rig(dir, { clientCAFile: f('ca.crt') });
    try {
      const client = { cert: await readFile(f('client.crt'), 'utf8'), key: await readFile(f('client.key'), 'utf8') };
      const ok = await post(r.port, r.ca, '/validate', admissionReview(widget('{}')), { cert: client });
      assert.equal(ok.status, 200);
      await assert.rejects(post(r.port, r.ca, '/validate', admissionReview(widget('{}'))), 'no client certificate');
      const stranger = createSelfSignedCertificate({ hosts: ['kube-apiserver'] });
      await assert.rejects(
        post(r.port, r.ca, '/validate', admissionReview(widget('{}')), { cert: stranger }),
        'a certificate from another CA',
      );
    } finally {
      await r.server.close();
    }
  });
});
