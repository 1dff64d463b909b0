import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as undici from 'undici';
import { Agent, dispatcherRequest, Pool, proxyAgentClass, requestUrl } from './undici-parts.js';

async function withServer(run: (origin: string) => Promise<void>): Promise<void> {
  const server: Server = createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`${req.method} ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('the classes loaded from undici files are the ones its index exports (a new undici layout fails here)', () => {
  assert.equal(Pool, undici.Pool);
  assert.equal(Agent, undici.Agent);
  assert.equal(proxyAgentClass(), undici.ProxyAgent);
});

test('dispatcherRequest sends a request on a Pool and reads its answer', async () => {
  await withServer(async (origin) => {
    const pool = new Pool(origin, { connections: 1 });
    try {
      const res = await dispatcherRequest(pool, { origin, path: '/a?b=1', method: 'GET' });
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'GET /a?b=1');
    } finally {
      await pool.close();
    }
  });
});

test('requestUrl sends path and query as undici.request does', async () => {
  await withServer(async (origin) => {
    const agent = new Agent();
    try {
      const ours = await requestUrl(new URL('/x/y?z=2', origin), { method: 'POST', body: 'b', dispatcher: agent });
      const theirs = await undici.request(new URL('/x/y?z=2', origin), {
        method: 'POST',
        body: 'b',
        dispatcher: agent,
      });
      assert.equal(await ours.body.text(), 'POST /x/y?z=2');
      assert.equal(await theirs.body.text(), 'POST /x/y?z=2');
    } finally {
      await agent.close();
    }
  });
});

test('requestUrl refuses a URL undici refuses, with the same error', async () => {
  const agent = new Agent();
  try {
    const url = new URL('ftp://127.0.0.1/file');
    // Both throw at the call, before any promise.
    let theirs: unknown;
    assert.throws(
      () => undici.request(url, { method: 'GET', dispatcher: agent }),
      (error) => ((theirs = error), true),
    );
    assert.ok(theirs instanceof undici.errors.InvalidArgumentError);
    const message = theirs.message;
    assert.throws(
      () => requestUrl(url, { method: 'GET', dispatcher: agent }),
      (error: unknown) => error instanceof undici.errors.InvalidArgumentError && error.message === message,
    );
  } finally {
    await agent.close();
  }
});
