import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { MemberLink } from './member-link.js';

/** An echo server standing in for the fault proxy. */
async function echoServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

async function open(port: number): Promise<Socket> {
  const s = connect({ host: '127.0.0.1', port });
  await once(s, 'connect');
  return s;
}

/** Resolves when the socket closes, whatever error came first (`once` would reject on an 'error'). */
function closed(s: Socket): Promise<void> {
  s.on('error', () => {});
  return new Promise((resolve) => s.once('close', () => resolve()));
}

/** The next chunk the socket receives, as text. */
async function nextData(s: Socket): Promise<string> {
  const [chunk] = (await once(s, 'data')) as [Buffer];
  return chunk.toString();
}

/** Resolves 'data' or 'closed' for the first of them, or 'silent' once the echo of a probe through `control` came back. */
async function silentWhile(s: Socket, control: Socket): Promise<'data' | 'closed' | 'silent'> {
  return new Promise((resolve) => {
    s.once('data', () => resolve('data'));
    s.once('close', () => resolve('closed'));
    // A round trip on another open connection of the same link bounds the wait without a timer.
    control.once('data', () => setImmediate(() => resolve('silent')));
    control.write('probe');
  });
}

describe('MemberLink', () => {
  let upstream: { server: Server; port: number };
  let link: MemberLink;

  before(async () => {
    upstream = await echoServer();
  });
  after(async () => {
    await link?.close();
    upstream.server.close();
  });

  test('relays bytes both ways while up', async () => {
    link = await MemberLink.start({ host: '127.0.0.1', port: upstream.port });
    const s = await open(link.port);
    s.write('hello');
    assert.equal(await nextData(s), 'hello');
    assert.equal(link.connections, 1);
    s.destroy();
    await link.close();
  });

  test('blackhole: an open connection falls silent and a new one is held unanswered; heal delivers both', async () => {
    link = await MemberLink.start({ host: '127.0.0.1', port: upstream.port });
    const open1 = await open(link.port);
    open1.write('a');
    assert.equal(await nextData(open1), 'a');
    link.cutOff('blackhole');
    assert.equal(link.cut, 'blackhole');
    const held = await open(link.port); // accepted, as a route that drops packets still lets SYNs be retried
    held.write('held');
    open1.write('b');
    // Nothing comes back on either: a fresh, uncut echo server round trip bounds the wait.
    const control = await open(upstream.port);
    assert.equal(await silentWhile(open1, control), 'silent');
    assert.equal(await silentWhile(held, control), 'silent');
    const bothBack = Promise.all([nextData(open1), nextData(held)]);
    link.heal();
    assert.deepEqual(await bothBack, ['b', 'held']);
    for (const s of [open1, held, control]) s.destroy();
    await link.close();
  });

  test('reset: open connections are reset and new ones refused at once; heal relays again', async () => {
    link = await MemberLink.start({ host: '127.0.0.1', port: upstream.port });
    const s = await open(link.port);
    const reset = closed(s);
    link.cutOff('reset');
    await reset;
    await closed(connect({ host: '127.0.0.1', port: link.port }));
    link.heal();
    const again = await open(link.port);
    again.write('x');
    assert.equal(await nextData(again), 'x');
    again.destroy();
    await link.close();
  });

  test('close() ends every connection, held ones included, and stops listening', async () => {
    link = await MemberLink.start({ host: '127.0.0.1', port: upstream.port });
    link.cutOff();
    const held = await open(link.port);
    const ended = closed(held);
    await link.close();
    await ended;
    const refused = connect({ host: '127.0.0.1', port: link.port });
    const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    assert.equal(err.code, 'ECONNREFUSED');
  });
});
