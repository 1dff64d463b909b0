import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { get } from 'node:http';
import type { Client } from '../client/contracts.js';
import { kind } from '../client/kind.js';
import { InvalidOptionError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import { Manager } from '../manager/manager.js';
import { freePort } from '../testing/control-plane/free-port.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { deny } from './handlers.js';
import { quietClient } from '../manager/testing/quiet-client.js';

const WIDGET = kind<KubeObject & { spec: { size: number } }>('example.com/v1', 'Widget');

const gatedClient = (gate: Promise<void>): Client => quietClient({ gate });

function readyz(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/readyz' }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => (body += d))
        .on('end', () => resolve({ status: res.statusCode!, body }));
    }).on('error', reject);
  });
}

function review(port: number, ca: string): Promise<{ allowed: boolean; message?: string }> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u',
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      userInfo: {},
      object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 50 } },
    },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate-example-com-v1-widget',
        method: 'POST',
        ca,
        headers: { 'content-type': 'application/json' },
        agent: false,
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (text += d))
          .on('end', () => {
            const r = JSON.parse(text).response;
            resolve({ allowed: r.allowed, message: r.status?.message });
          });
      },
    );
    req.on('error', reject).end(body);
  });
}

test('the manager serves webhooks before its caches list, and /readyz reports the webhook server', async () => {
  let openGate!: () => void;
  const gate = new Promise<void>((r) => (openGate = r));
  const manager = new Manager({ client: gatedClient(gate), metricsPort: 0, healthPort: 0, webhook: { port: 0 } });
  manager.webhooks.validate(WIDGET, (obj) => (obj.spec.size > 10 ? deny('too big') : undefined));
  // A controller's informer: its first list waits on the gate.
  manager.informers.informerFor(WIDGET);
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  // Reachable while the cache is still listing (the API server may call it as soon as it lists).
  while (manager.endpoints.webhookPort === undefined) await new Promise((r) => setImmediate(r));
  assert.deepEqual(await review(manager.endpoints.webhookPort, manager.endpoints.webhookCertificatePem!), {
    allowed: false,
    message: 'too big',
  });
  openGate();
  await eventually('caches synced', () => manager.informers.hasSynced());
  stop.abort();
  await running;
  assert.equal(manager.endpoints.webhookPort, undefined, 'closed on stop');
});

test('/readyz lists the webhook server among its checks', async () => {
  const healthPort = await freePort();
  const manager = new Manager({
    client: gatedClient(Promise.resolve()),
    metricsPort: 0,
    healthPort,
    webhook: { port: 0 },
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  const ready = await eventually('ready', async () => {
    const r = await readyz(healthPort).catch(() => undefined);
    return r?.status === 200 ? r : undefined;
  });
  assert.match(ready.body, /\[\+\]webhook ok/);
  stop.abort();
  await running;
});

test('handlers without webhook server options fail the start with a clear error', async () => {
  const manager = new Manager({ client: gatedClient(Promise.resolve()), metricsPort: 0, healthPort: 0 });
  manager.webhooks.validate(WIDGET, () => undefined);
  await assert.rejects(
    manager.start(new AbortController().signal),
    (err: unknown) => err instanceof InvalidOptionError && /no webhook server options/.test(err.message),
  );
  assert.throws(
    () => new Manager({ client: gatedClient(Promise.resolve()), webhook: { certFile: '/x' } }),
    /certFile and keyFile go together/,
  );
});
