import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { TcpProxy } from './tcp-proxy.js';

/** An echo server: what a client sends comes back, so a mute proxy shows as silence. */
async function echoServer(): Promise<Server> {
  const server = createServer((s) => s.pipe(s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

async function dial(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  await once(s, 'connect');
  return s;
}

/** The next chunk, or 'silent' if none arrives within `ms`. */
function nextData(s: Socket, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      s.off('data', onData);
      resolve('silent');
    }, ms);
    const onData = (d: Buffer): void => {
      clearTimeout(timer);
      resolve(d.toString());
    };
    s.once('data', onData);
  });
}

test('the proxy forwards both ways, and cut() resets every open connection', async () => {
  const server = await echoServer();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  try {
    const s = await dial(proxy.port);
    s.write('ping');
    assert.equal(await nextData(s, 2000), 'ping');
    s.on('error', () => {}); // the reset surfaces as ECONNRESET
    const closed = new Promise((resolve) => s.once('close', resolve));
    assert.equal(proxy.cut(), 1);
    await closed;
    assert.equal(proxy.connections, 0);
  } finally {
    await proxy.close();
    server.close();
  }
});

test('a frozen connection stays open but carries nothing; after thaw, new connections work and the frozen one stays mute', async () => {
  const server = await echoServer();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  try {
    const old = await dial(proxy.port);
    old.write('a');
    assert.equal(await nextData(old, 2000), 'a');
    proxy.freeze();
    old.write('b');
    // Silence is the behaviour under test, so a short wait is the check itself.
    assert.equal(await nextData(old, 300), 'silent');
    assert.equal(old.destroyed, false);
    const during = await dial(proxy.port);
    during.write('c');
    assert.equal(await nextData(during, 300), 'silent', 'a connection made while frozen is held mute too');
    proxy.thaw();
    const fresh = await dial(proxy.port);
    fresh.write('d');
    assert.equal(await nextData(fresh, 2000), 'd');
    old.write('e');
    assert.equal(await nextData(old, 300), 'silent');
    for (const s of [old, during, fresh]) s.on('error', () => {});
  } finally {
    await proxy.close();
    server.close();
  }
});

test('heal() resets the connections frozen by a partition and forwards new ones; a connection made after the heal carries on', async () => {
  const server = await echoServer();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  try {
    const old = await dial(proxy.port);
    old.on('error', () => {}); // the reset surfaces as ECONNRESET
    proxy.freeze();
    const oldClosed = new Promise((resolve) => old.once('close', resolve));
    assert.equal(proxy.heal(), 1);
    await oldClosed;
    const fresh = await dial(proxy.port);
    fresh.write('x');
    assert.equal(await nextData(fresh, 2000), 'x');
    assert.equal(proxy.heal(), 0, 'nothing frozen: nothing reset');
    fresh.write('y');
    assert.equal(await nextData(fresh, 2000), 'y');
    fresh.destroy();
  } finally {
    await proxy.close();
    server.close();
  }
});

test('delay(ms) holds what the server sends for ms, in order, its close included; what the client sends is on time; delay(0) ends it', async () => {
  let received = '';
  const server = createServer((s) => {
    // Echoes, and tells when the request arrived, so the client can see only answers are late.
    s.on('data', (d: Buffer) => {
      received += d.toString();
      s.write(d);
      if (d.toString().includes('bye')) s.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: (server.address() as AddressInfo).port });
  try {
    const s = await dial(proxy.port);
    s.write('on-time');
    assert.equal(await nextData(s, 2000), 'on-time', 'no delay until asked');
    proxy.delay(400);
    let answers = '';
    s.on('data', (d: Buffer) => (answers += d.toString()));
    const sentAt = performance.now();
    s.write('a');
    await new Promise((r) => setTimeout(r, 50));
    s.write('b');
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(received, 'on-timeab', 'the server got both at once');
    assert.equal(answers, '', 'the answers are held');
    const closed = once(s, 'end');
    s.write('bye');
    await closed;
    assert.ok(performance.now() - sentAt >= 400, 'the close came after the delay');
    assert.equal(answers, 'abbye', 'in order, the close behind the data');
    proxy.delay(0);
    const fresh = await dial(proxy.port);
    fresh.write('now');
    assert.equal(await nextData(fresh, 300), 'now', 'delay(0): forwarded at once');
    fresh.destroy();
    s.destroy();
    assert.throws(() => proxy.delay(-1), { code: 'ERR_INVALID_OPTION' });
  } finally {
    await proxy.close();
    server.close();
  }
});
