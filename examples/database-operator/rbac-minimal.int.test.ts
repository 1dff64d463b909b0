/**
 * Minimality: with any one generated rule — or any one verb of a rule — removed, the operator's
 * scenario fails with a 403 naming that rule's resource. One control plane; the role is swapped
 * between runs, and each run stops at its first 403.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readManifests } from 'operator-runtime/testing';
import {
  RBAC_FILE,
  RbacHarness,
  ruleRemovals,
  runWithout,
  verbRemovals,
  type OperatorRole,
  type PolicyRule,
  type Removal,
} from './testing/rbac-scenario.js';
import { OPERATOR_NAME } from './src/manifest-manager.js';

// The removals are tests of their own, so they are known before the control plane starts.
const roles: OperatorRole[] = (await readManifests(RBAC_FILE))
  .filter(
    (o) => (o.kind === 'Role' || o.kind === 'ClusterRole') && (o.metadata as { name: string }).name === OPERATOR_NAME,
  )
  .map((o) => ({
    kind: o.kind as 'Role' | 'ClusterRole',
    name: OPERATOR_NAME,
    namespace: (o.metadata as { namespace?: string }).namespace,
    rules: o.rules as PolicyRule[],
  }));

/**
 * The 403 names the resource as the authorizer writes it (`resource "databases/status"`). The one
 * exception is kube-apiserver 1.20's OwnerReferencesPermissionEnforcement, whose message names
 * the object written and "finalizers" but not the owner's resource.
 */
function namesResource(removal: Removal, message: string): boolean {
  if (message.includes(`resource "${removal.resource}"`)) return true;
  return (
    removal.resource.endsWith('/finalizers') &&
    /cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on/.test(message)
  );
}

function expectForbidden(removal: Removal, forbidden: string | undefined): void {
  assert.ok(forbidden, `the scenario passed without ${removal.title}: it is not needed`);
  assert.ok(namesResource(removal, forbidden), `the 403 names ${removal.resource}: ${forbidden}`);
}

describe('every generated rule, and every verb, is needed: without it the operator meets a 403 naming its resource', () => {
  let harness: RbacHarness;

  before(async () => {
    harness = await RbacHarness.start();
    // Otherwise a failing run below would prove nothing.
    const baseline = await harness.runScenario();
    assert.equal(baseline.forbidden, undefined, `with every rule the scenario passes (got ${baseline.forbidden})`);
  });

  after(async () => {
    await harness?.stop();
  });

  test('the rules under test are the committed ones', () => {
    assert.deepEqual(harness.roles, roles);
    assert.ok(ruleRemovals(roles).length >= 10, `${ruleRemovals(roles).length} rules`);
  });

  for (const removal of ruleRemovals(roles)) {
    test(`without the rule ${removal.title}`, async () =>
      expectForbidden(removal, (await runWithout(harness, removal)).forbidden));
  }

  for (const removal of verbRemovals(roles)) {
    test(`without the verb ${removal.title}`, async () =>
      expectForbidden(removal, (await runWithout(harness, removal)).forbidden));
  }
});
