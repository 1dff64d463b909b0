import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import type { Client } from '../client/client.js';
import { FakeClock } from '../core/fake-clock.js';
import { freePort } from '../testing/free-port.js';
import { Manager } from './manager.js';

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
