import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RbacHarness } from './testing/rbac-scenario.js';

describe('the operator runs under a ServiceAccount bound to exactly the generated config/rbac.yaml', () => {
  let harness: RbacHarness;

  before(async () => {
    harness = await RbacHarness.start();
  });

  after(async () => {
    await harness?.stop();
  });

  test('the whole scenario passes with no 403: provision, drift, secure metrics, events, finalizer, leader election', async () => {
    const outcome = await harness.runScenario();
    assert.equal(outcome.forbidden, undefined, `the operator met a 403: ${outcome.forbidden}`);
  });

  test('the roles hold only what the code does: Secrets are created, never patched; no role reads objects one by one', () => {
    const rules = harness.roles.flatMap((r) => r.rules);
    assert.deepEqual(rules.find((r) => r.resources?.includes('secrets'))?.verbs, ['list', 'watch', 'create']);
    // Reads come from the informers' cache; only the Lease is read by name.
    assert.deepEqual(
      rules.filter((r) => r.verbs.includes('get')).map((r) => `${r.resources?.join()} ${r.resourceNames?.join()}`),
      ['leases database-operator'],
    );
    assert.ok(rules.every((r) => !r.verbs.includes('*') && !r.resources?.includes('*')));
  });
});
