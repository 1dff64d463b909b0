import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TaggedOutputRules, iptablesAvailable, outputRules, removeStaleChaosRules } from './iptables.js';

const usable = process.getuid?.() === 0 && (await iptablesAvailable());

// Harmless rules: user nobody, to an unused loopback address and port.
const RULE = { uid: 65534, destination: '127.0.0.99', destinationPort: 9 } as const;

describe('iptables rules tagged per owner', { skip: !usable && 'needs root and iptables' }, () => {
  test("removeAll deletes exactly the owner's rules and leaves another owner's in place", async () => {
    const mine = new TaggedOutputRules(`test-mine-${process.pid}`);
    const theirs = new TaggedOutputRules(`test-theirs-${process.pid}`);
    try {
      await mine.block(RULE);
      await mine.block({ uid: 65534, sourcePort: 9, action: 'reset' });
      await theirs.block(RULE);
      assert.equal((await mine.list()).length, 2);
      assert.equal(await mine.removeAll(), 2);
      assert.deepEqual(await mine.list(), []);
      assert.equal((await theirs.list()).length, 1, "the other owner's identical rule survives");
    } finally {
      await mine.removeAll();
      await theirs.removeAll();
    }
    assert.deepEqual(
      (await outputRules()).filter((r) => r.includes(`-${process.pid} `) || r.endsWith(`-${process.pid}`)),
      [],
    );
  });

  test('removeStaleChaosRules deletes only the owners it is told are stale', async () => {
    const stale = new TaggedOutputRules(`test-stale-${process.pid}`);
    const live = new TaggedOutputRules(`test-live-${process.pid}`);
    try {
      await stale.block(RULE);
      await live.block(RULE);
      const removed = await removeStaleChaosRules((id) => id === `test-stale-${process.pid}`);
      assert.equal(removed, 1);
      assert.deepEqual(await stale.list(), []);
      assert.equal((await live.list()).length, 1);
    } finally {
      await stale.removeAll();
      await live.removeAll();
    }
  });

  test('removeAllSync in an exit hook deletes the rules of a process that exits without healing', async () => {
    const { execFileSync } = await import('node:child_process');
    const id = `test-exit-${process.pid}`;
    const script = `
      import { TaggedOutputRules } from ${JSON.stringify(new URL('./iptables.ts', import.meta.url).href)};
      const rules = new TaggedOutputRules(${JSON.stringify(id)});
      await rules.block(${JSON.stringify(RULE)});
      process.once('exit', () => rules.removeAllSync());
      process.stdout.write(String((await rules.list()).length));
      process.exit(0);
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    assert.equal(out, '1', 'the child had its rule in place');
    assert.deepEqual(await new TaggedOutputRules(id).list(), []);
  });

  test('an owner id that could break out of the comment is refused', () => {
    assert.throws(
      () => new TaggedOutputRules('x --comment y'),
      (err: unknown) => (err as { code?: string }).code === 'ERR_TEST_ENV_IPTABLES',
    );
  });
});
