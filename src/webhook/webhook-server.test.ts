import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kind } from '../client/kind.js';
import { realClock } from '../core/clock.js';
import { recordingLogger } from '../logging/recording-logger.js';
import type { KubeObject } from '../core/object-key.js';
import { createSelfSignedCertificate } from './self-signed-certificate.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { deny, spoke } from './handlers.js';
import { WebhookServer } from './webhook-server.js';
import { Webhooks } from './webhooks.js';

interface Res {
  status: number;
  body: string;
  headers: Record<string, unknown>;
}

/** POST over HTTPS trusting only `ca` (the certificate pinned). */
function post(
  port: number,
  ca: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  method = 'POST',
): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, ca, headers, agent: false }, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => (text += d))
        .on('end', () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
    });
    req.on('error', reject).end(body);
  });
}

const WIDGET = kind<KubeObject & { spec: { size: number } }>('example.com/v1', 'Widget');
const review = (size: number, uid = 'u1') =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size } },
    },
  });

describe('webhook server (HTTPS, real sockets)', () => {
  let dir: string;
  let server: WebhookServer;
  let ca: string;
  const registry = createMetricsRegistry();
  const log = recordingLogger();
  let release: (() => void) | undefined;
  let entered: (() => void) | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webhook-server-'));
    const pair = createSelfSignedCertificate({ hosts: ['127.0.0.1'] });
    ca = pair.cert;
    await writeFile(join(dir, 'tls.crt'), pair.cert);
    await writeFile(join(dir, 'tls.key'), pair.key);
    const webhooks = new Webhooks();
    webhooks.validate(WIDGET, async (obj) => {
      if (obj.spec.size === 99) {
        // Held until the test releases it: an in-flight review during stop.
        entered?.();
        await new Promise<void>((r) => (release = r));
      }
      return obj.spec.size > 10 ? deny('size must be at most 10') : undefined;
    });
    webhooks.convert(WIDGET, {
      hub: WIDGET,
      spokes: [
        spoke(kind<KubeObject & { spec: { size: number } }>('example.com/v0', 'Widget'), {
          toHub: (o) => o,
          fromHub: (h) => h,
        }),
      ],
    });
    server = new WebhookServer(
      webhooks,
      { port: 0, certDir: dir, maxRequestBytes: 64 * 1024, certPollIntervalMs: 200, drainMs: 5_000 },
      { registry, logger: log, clock: realClock, defaultHost: '127.0.0.1' },
    );
    await server.listen();
  });

  after(async () => {
    release?.();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("answers an AdmissionReview v1 at its path with the handler's decision", async () => {
    const res = await post(server.port!, ca, '/validate-example-com-v1-widget', review(11));
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u1', allowed: false, status: { code: 403, message: 'size must be at most 10' } },
    });
    assert.equal(
      JSON.parse((await post(server.port!, ca, '/validate-example-com-v1-widget', review(3))).body).response.allowed,
      true,
    );
  });

  test('answers a ConversionReview v1 at /convert', async () => {
    const body = JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: 'c1',
        desiredAPIVersion: 'example.com/v0',
        objects: [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } }],
      },
    });
    const res = await post(server.port!, ca, '/convert', body);
    assert.deepEqual(JSON.parse(res.body).response, {
      uid: 'c1',
      convertedObjects: [{ apiVersion: 'example.com/v0', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } }],
      result: { status: 'Success' },
    });
  });

  test('refuses what is not a review: unknown path 404, GET 405, other content type 415, not JSON 400, v1beta1 400', async () => {
    const path = '/validate-example-com-v1-widget';
    assert.equal((await post(server.port!, ca, '/nope', review(1))).status, 404);
    assert.equal((await post(server.port!, ca, path, '', {}, 'GET')).status, 405);
    assert.equal((await post(server.port!, ca, path, review(1), { 'content-type': 'text/plain' })).status, 415);
    assert.equal((await post(server.port!, ca, path, '{nope')).status, 400);
    assert.equal(
      (await post(server.port!, ca, path, review(1).replace('admission.k8s.io/v1', 'admission.k8s.io/v1beta1'))).status,
      400,
    );
  });

  test('a body over maxRequestBytes gets 413, declared or streamed, without being read whole', async () => {
    const big = Buffer.alloc(100 * 1024, 'x');
    assert.equal((await post(server.port!, ca, '/validate-example-com-v1-widget', big)).status, 413);
    // Chunked: no content-length to refuse up front.
    const res = await post(server.port!, ca, '/validate-example-com-v1-widget', big, {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    assert.equal(res.status, 413);
  });

  test('counts requests by webhook and code, observes latency, and in-flight returns to 0 (controller-runtime names)', async () => {
    const text = await registry.metrics();
    assert.match(
      text,
      /controller_runtime_webhook_requests_total\{webhook="\/validate-example-com-v1-widget",code="200"\} [1-9]/,
    );
    assert.match(
      text,
      /controller_runtime_webhook_requests_total\{webhook="\/validate-example-com-v1-widget",code="413"\} 2/,
    );
    assert.match(text, /controller_runtime_webhook_latency_seconds_count\{webhook="\/convert"\} 1/);
    assert.match(text, /controller_runtime_webhook_requests_in_flight\{webhook="\/validate-example-com-v1-widget"\} 0/);
  });

  test('a rotated certificate is served to new connections without a restart; a broken pair is ignored', async () => {
    const next = createSelfSignedCertificate({ hosts: ['127.0.0.1'] });
    // A key that does not match: kept out, the old pair still serves.
    await writeFile(join(dir, 'tls.crt'), next.cert);
    await eventually('the mismatched pair to be read and refused', () =>
      log.entries.some((e) => e.msg === 'serving certificate does not load; keeping the previous one'),
    );
    assert.equal(server.certificatePem, ca);
    assert.equal(
      (await post(server.port!, ca, '/validate-example-com-v1-widget', review(1))).status,
      200,
      'the previous pair still serves',
    );
    // Atomic replace of the key, as a Secret volume's symlink swap is.
    await writeFile(join(dir, 'tls.key.tmp'), next.key);
    await rename(join(dir, 'tls.key.tmp'), join(dir, 'tls.key'));
    const res = await eventually(
      'the new certificate to be served',
      async () => {
        const r = await post(server.port!, next.cert, '/validate-example-com-v1-widget', review(1)).catch(
          () => undefined,
        );
        return r?.status === 200 ? r : undefined;
      },
      { timeoutMs: 10_000 },
    );
    assert.equal(res.status, 200);
    assert.equal(server.certificatePem, next.cert);
    await assert.rejects(
      post(server.port!, ca, '/validate-example-com-v1-widget', review(1)),
      /self[- ]signed|unable to verify|certificate/i,
      'a client pinning the old certificate no longer connects',
    );
    ca = next.cert;
  });

  test('stopping lets an in-flight review finish, then closes', async () => {
    const inHandler = new Promise<void>((r) => (entered = r));
    const pending = post(server.port!, ca, '/validate-example-com-v1-widget', review(99, 'slow'));
    await inHandler;
    assert.equal(server.serving, true);
    const closing = server.close();
    assert.equal(server.serving, false, '/readyz fails as soon as stopping begins');
    let closed = false;
    void closing.then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(closed, false, 'waits for the review in flight');
    release!();
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).response.uid, 'slow');
    await closing;
    await assert.rejects(post(server.port ?? 1, ca, '/validate-example-com-v1-widget', review(1)), /ECONNREFUSED|port/);
  });
});
