import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TaggedOutputRules, iptablesAvailable, outputRules, removeStaleChaosRules } from './iptables.js';

const usable = process.getuid?.() === 0 && (await iptablesAvailable());

// Harmless rules: user nobody, to an unused loopback address and port.
const RULE = { uid: 65534, destination: '127.0.0.99', destinationPort: 9 } as const;

describe('iptables rules tagged per owner', { skip: !usable && 'needs root and iptables' }, () => {
  test('removeAll deletes exactly the owner\'s rules and leaves another owner\'s in place', async () => {
    const mine = new TaggedOutputRules(`test-mine-${process.pid}`);
    const theirs = new TaggedOutputRules(`test-theirs-${process.pid}`);
    try {
      await mine.drop(RULE);
      await mine.drop({ uid: 65534, sourcePort: 9 });
      await theirs.drop(RULE);
      assert.equal((await mine.list()).length, 2);
      assert.equal(await mine.removeAll(), 2);
      assert.deepEqual(await mine.list(), []);
      assert.equal((await theirs.list()).length, 1, 'the other owner\'s identical rule survives');
    } finally {
      await mine.removeAll();
      await theirs.removeAll();
    }
    assert.deepEqual((await outputRules()).filter((r) => r.includes(`-${process.pid} `) || r.endsWith(`-${process.pid}`)), []);
  });

  test('removeStaleChaosRules deletes only the owners it is told are stale', async () => {
    const stale = new TaggedOutputRules(`test-stale-${process.pid}`);
    const live = new TaggedOutputRules(`test-live-${process.pid}`);
    try {
      await stale.drop(RULE);
      await live.drop(RULE);
      const removed = await removeStaleChaosRules((id) => id === `test-stale-${process.pid}`);
      assert.equal(removed, 1);
      assert.deepEqual(await stale.list(), []);
      assert.equal((await live.list()).length, 1);
    } finally {
      await stale.removeAll();
      await live.removeAll();
    }
  });

  test('an owner id that could break out of the comment is refused', () => {
    assert.throws(() => new TaggedOutputRules('x --comment y'), (err: unknown) => (err as { code?: string }).code === 'ERR_TEST_ENV_IPTABLES');
  });
});
