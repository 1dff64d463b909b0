import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { createServer, type Server } from 'node:net';
import type { Client } from '../client/client.js';
import { kind } from '../client/kind.js';
import { whenAborted } from '../core/abort.js';
import { FakeClock } from '../core/fake-clock.js';
import type { KubeObject } from '../core/object-key.js';
import { freePort } from '../testing/control-plane/free-port.js';
import { deny } from '../webhook/handlers.js';
import { Manager } from './manager.js';
import { quietClient } from './testing/quiet-client.js';

const WIDGET = kind<KubeObject>('example.com/v1', 'Widget');

/** Whether the webhook server answers a review of a Widget (with an answer, allowed or not). */
function answers(port: number, ca: string): Promise<boolean> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u',
      kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
      resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
      operation: 'CREATE',
      userInfo: {},
      object: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } },
    },
  });
  return new Promise((resolve) => {
    const options = {
      host: '127.0.0.1',
      port,
      path: '/validate-example-com-v1-widget',
      method: 'POST',
      ca,
      agent: false,
      headers: { 'content-type': 'application/json' },
    };
    const req = request(options, (res) => {
      res.resume().on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false)).end(body);
  });
}

function listening(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

test('a server that cannot listen makes start() reject, and the servers already listening are closed again', async () => {
  const busy = await listening(0);
  const busyPort = (busy.address() as { port: number }).port;
  const consolePort = await freePort();
  try {
    const manager = new Manager({
      client: {} as Client,
      clock: new FakeClock(0),
      bindHost: '127.0.0.1',
      console: { port: consolePort, host: '127.0.0.1' },
      metricsPort: busyPort,
      healthPort: 0,
    });
    await assert.rejects(manager.start(new AbortController().signal), { code: 'EADDRINUSE' });
    // The console listened before the metrics server failed; it used to stay bound until the process exited.
    const again = await listening(consolePort);
    await close(again);
  } finally {
    await close(busy);
  }
});

test('while the manager stops, its webhook server answers until every runnable has stopped', async () => {
  const manager = new Manager({
    client: quietClient(),
    bindHost: '127.0.0.1',
    metricsPort: 0,
    healthPort: 0,
    webhook: { port: 0 },
  });
  manager.webhooks.validate(WIDGET, () => deny('no'));
  const answeredWhileStopping: boolean[] = [];
  manager.add({
    async start(signal) {
      await whenAborted(signal);
      answeredWhileStopping.push(
        await answers(manager.endpoints.webhookPort!, manager.endpoints.webhookCertificatePem!),
      );
    },
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  while (manager.endpoints.webhookPort === undefined) await new Promise((r) => setImmediate(r));
  stop.abort();
  await running;
  assert.deepEqual(answeredWhileStopping, [true]);
  assert.equal(manager.endpoints.webhookPort, undefined, 'closed once everything else stopped');
});
