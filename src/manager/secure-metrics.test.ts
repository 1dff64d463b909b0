import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '../client/client.js';
import { FakeClock } from '../core/fake-clock.js';
import { freePort } from '../testing/control-plane/free-port.js';
import { Manager } from './manager.js';
import { defaultBindHost } from './secure-metrics.js';
import { quietClient } from './testing/quiet-client.js';

/** Empty lists, idle watches, and reviews that know one allowed and one denied token. */
function client(): Client & { reviews: number } {
  const extra = {
    reviews: 0,
    create: async (obj: { kind: string; spec: { token?: string; user?: string } }) => {
      extra.reviews++;
      if (obj.kind === 'TokenReview') {
        const user = obj.spec.token === 'good' ? 'scraper' : obj.spec.token === 'other' ? 'tenant' : undefined;
        return { status: user ? { authenticated: true, user: { username: user } } : { authenticated: false } };
      }
      return { status: { allowed: obj.spec.user === 'scraper' } };
    },
  };
  return quietClient({ extra });
}

function get(
  scheme: 'http' | 'https',
  port: number,
  path: string,
  token?: string,
): Promise<{ status: number; body: string }> {
  const request = scheme === 'https' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        rejectUnauthorized: false,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (body += d))
          .on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject).end();
  });
}

async function running(manager: Manager, body: () => Promise<void>): Promise<void> {
  const synced = new Promise<void>((resolve) =>
    manager.add({ start: async () => resolve() }, { needLeaderElection: false }),
  );
  const stop = new AbortController();
  const run = manager.start(stop.signal);
  try {
    await synced;
    await body();
  } finally {
    stop.abort();
    await run;
  }
}

test('the default bind address is loopback outside a cluster and every interface inside one', () => {
  assert.equal(defaultBindHost({}), '127.0.0.1');
  assert.equal(defaultBindHost({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }), '0.0.0.0');
});

test('a manager outside a cluster listens on loopback only unless told otherwise', async () => {
  const saved = process.env.KUBERNETES_SERVICE_HOST;
  delete process.env.KUBERNETES_SERVICE_HOST;
  try {
    const manager = new Manager({
      client: client(),
      clock: new FakeClock(0),
      metricsPort: await freePort(),
      healthPort: await freePort(),
    });
    await running(manager, async () => {
      // White-box: which address the socket is bound to cannot be seen from a loopback client.
      const servers = manager as unknown as {
        metricsServer: { server: { address(): AddressInfo } };
        healthServer: { server: { address(): AddressInfo } };
      };
      assert.equal(servers.metricsServer.server.address().address, '127.0.0.1');
      assert.equal(servers.healthServer.server.address().address, '127.0.0.1');
    });
  } finally {
    if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved;
  }
});

test('secure metrics: HTTPS; no token 401, a token without RBAC 403, an allowed token 200; health stays plain HTTP', async () => {
  const c = client();
  const manager = new Manager({
    client: c,
    clock: new FakeClock(0),
    metricsPort: await freePort(),
    healthPort: await freePort(),
    bindHost: '127.0.0.1',
    secureMetrics: {},
  });
  await running(manager, async () => {
    const port = manager.endpoints.metricsPort!;
    assert.equal((await get('https', port, '/metrics')).status, 401);
    assert.equal((await get('https', port, '/metrics', 'forged')).status, 401);
    assert.equal((await get('https', port, '/metrics', 'other')).status, 403);
    const ok = await get('https', port, '/metrics', 'good');
    assert.equal(ok.status, 200);
    assert.match(ok.body, /^# HELP /m);
    await assert.rejects(get('http', port, '/metrics', 'good'), 'plain HTTP is not served on the secure port');
    assert.equal((await get('http', manager.endpoints.healthPort!, '/healthz')).status, 200);
  });
});

test('secure metrics refuse to share the health port, and need certFile and keyFile together', () => {
  assert.throws(() => new Manager({ client: client(), metricsPort: 9443, healthPort: 9443, secureMetrics: {} }), {
    code: 'ERR_INVALID_OPTION',
  });
  assert.throws(() => new Manager({ client: client(), secureMetrics: { certFile: '/x.crt' } }), {
    code: 'ERR_INVALID_OPTION',
  });
});
