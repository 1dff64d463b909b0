import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { ConsoleServer } from './console-server.js';
import { ConsoleState } from './console-state.js';
import { FakeClock } from '../core/fake-clock.js';

function call(
  port: number,
  path: string,
  options: { method?: string; host?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.host ? { host: options.host } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('ConsoleServer', () => {
  const state = new ConsoleState({ clock: new FakeClock() });
  state.trackController('db');
  const server = new ConsoleServer(() => state.snapshot(), { port: 0 });
  let port: number;
  before(async () => {
    await server.listen();
    port = server.boundPort!;
  });
  after(() => server.close());

  test('serves the page with a CSP that allows exactly its own inline script and style', async () => {
    const res = await call(port, '/');
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    const script = /<script>([\s\S]*?)<\/script>/.exec(res.body)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.body)![1]!;
    assert.ok(csp.includes(`script-src ${hash(script)}`), csp);
    assert.ok(csp.includes(`style-src ${hash(style)}`), csp);
    assert.ok(csp.includes("default-src 'none'"));
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.ok(
      !/innerHTML|outerHTML|insertAdjacentHTML|document\.write/.test(script),
      'the page never parses data as HTML',
    );
    assert.equal(server.url, `http://127.0.0.1:${port}/`);
  });

  test('serves the snapshot as JSON', async () => {
    const res = await call(port, '/api/state?x=1');
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body) as { controllers: { name: string }[]; leader: { enabled: boolean } };
    assert.deepEqual(
      body.controllers.map((c) => c.name),
      ['db'],
    );
    assert.equal(body.leader.enabled, false);
  });

  test('is read-only: other methods get 405, unknown paths 404', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'])
      assert.equal((await call(port, '/api/state', { method })).status, 405, method);
    assert.equal((await call(port, '/', { method: 'HEAD' })).status, 200);
    assert.equal((await call(port, '/metrics')).status, 404);
  });

  test('bound to loopback, it refuses foreign Host headers (DNS rebinding)', async () => {
    assert.equal((await call(port, '/api/state', { host: 'evil.example:80' })).status, 421);
    assert.equal((await call(port, '/api/state', { host: `localhost:${port}` })).status, 200);
    assert.equal((await call(port, '/api/state', { host: `[::1]:${port}` })).status, 200);
  });

  test('rejects a port out of range', () => {
    assert.throws(() => new ConsoleServer(() => state.snapshot(), { port: 70_000 }), { code: 'ERR_INVALID_OPTION' });
  });
});
