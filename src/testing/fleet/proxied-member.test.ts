import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { FaultProxyUpstream } from '../chaos/fault-proxy.js';
import { ProxiedMember } from './proxied-member.js';

/** An upstream nothing connects to: these tests stay at the TCP level of the link. */
const UPSTREAM: FaultProxyUpstream = {
  server: 'https://127.0.0.1:1',
  caPem: '',
  kubeconfig: {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
    users: [{ name: 'u', user: { token: 'not-a-real-token' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  },
};

/** 'open' once a connection through the link stays up a moment, 'reset' when the link resets it. */
async function probe(port: number): Promise<'open' | 'reset'> {
  const s: Socket = connect({ host: '127.0.0.1', port });
  s.on('error', () => {});
  try {
    await once(s, 'connect');
  } catch {
    return 'reset';
  }
  const outcome = await Promise.race([
    once(s, 'close').then(() => 'reset' as const),
    delay(150).then(() => 'open' as const),
  ]);
  s.destroy();
  return outcome;
}

describe('ProxiedMember', () => {
  let member: ProxiedMember;
  let port: number;

  before(async () => {
    member = await ProxiedMember.start('east', UPSTREAM);
    port = Number(new URL(member.kubeconfig.clusters[0]!.cluster.server as string).port);
  });
  after(async () => {
    await member?.close();
  });

  test('its kubeconfig names the member and points at its link, with the upstream token', () => {
    const kc = member.kubeconfig;
    assert.equal(kc['current-context'], 'east');
    assert.deepEqual(
      kc.clusters.map((c) => c.name),
      ['east'],
    );
    assert.notEqual(Number(new URL(member.proxy.url).port), port, 'clients go through the link, not the proxy');
    assert.equal((kc.users[0]!.user as { token?: string }).token, 'not-a-real-token');
  });

  test('flap() takes the link down and up until stopped, and leaves it up', async () => {
    assert.equal(await probe(port), 'open');
    const flap = member.flap({ downMs: 400, upMs: 600 });
    try {
      assert.equal(member.cut, 'reset');
      assert.equal(await probe(port), 'reset', 'down: a new connection is reset');
      await delay(450);
      assert.equal(member.cut, undefined);
      assert.equal(await probe(port), 'open', 'up again');
      await delay(500);
      assert.ok(flap.cuts >= 2, `went down ${flap.cuts} times`);
    } finally {
      flap.stop();
    }
    assert.equal(member.cut, undefined);
    const cuts = flap.cuts;
    await delay(900);
    assert.equal(flap.cuts, cuts, 'no cut after stop()');
    assert.equal(await probe(port), 'open');
  });
});
