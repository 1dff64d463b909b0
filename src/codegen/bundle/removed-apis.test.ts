/**
 * The removed-API table and its check: an API is refused from the release that removed it (the
 * message names the replacement), warned about while deprecated, and silent before its replacement
 * existed; the table itself holds together.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEPRECATED_APIS,
  REMOVED_APIS,
  checkApiVersion,
  parseKubernetesVersion,
  type KubernetesVersion,
} from './removed-apis.js';

const v = (text: string): KubernetesVersion => parseKubernetesVersion(text)!;
const PDB = { apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'db' } };

describe('removed APIs', () => {
  test('a policy/v1beta1 PodDisruptionBudget is refused for every version from 1.25, naming policy/v1', () => {
    for (let minor = 25; minor <= 37; minor++) {
      const finding = checkApiVersion(PDB, { major: 1, minor });
      assert.equal(finding?.severity, 'error', `1.${minor}`);
      assert.equal(
        finding.message,
        `policy/v1beta1 PodDisruptionBudget db: policy/v1beta1 PodDisruptionBudget is not served by Kubernetes 1.${minor} (removed in 1.25); use policy/v1`,
      );
    }
  });

  test('it warns while deprecated (policy/v1 served, 1.21–1.24) and says nothing before', () => {
    for (const minor of [21, 22, 23, 24]) {
      const finding = checkApiVersion(PDB, { major: 1, minor });
      assert.equal(finding?.severity, 'warning', `1.${minor}`);
      assert.match(finding.message, /is deprecated and removed in Kubernetes 1\.25; use policy\/v1$/);
    }
    assert.equal(checkApiVersion(PDB, v('1.20')), undefined);
  });

  test('the examples the deprecation guide names, each refused at its release', () => {
    const cases: [string, string, string, string][] = [
      ['extensions/v1beta1', 'Deployment', '1.16', 'apps/v1'],
      ['apiextensions.k8s.io/v1beta1', 'CustomResourceDefinition', '1.22', 'apiextensions.k8s.io/v1'],
      ['rbac.authorization.k8s.io/v1beta1', 'ClusterRole', '1.22', 'rbac.authorization.k8s.io/v1'],
      ['batch/v1beta1', 'CronJob', '1.25', 'batch/v1'],
      ['policy/v1beta1', 'PodSecurityPolicy', '1.25', 'no replacement'],
      ['autoscaling/v2beta2', 'HorizontalPodAutoscaler', '1.26', 'autoscaling/v2'],
      ['storage.k8s.io/v1beta1', 'CSIStorageCapacity', '1.27', 'storage.k8s.io/v1'],
      ['flowcontrol.apiserver.k8s.io/v1beta2', 'FlowSchema', '1.29', 'flowcontrol.apiserver.k8s.io/v1'],
      ['flowcontrol.apiserver.k8s.io/v1beta3', 'PriorityLevelConfiguration', '1.32', 'flowcontrol.apiserver.k8s.io/v1'],
    ];
    for (const [apiVersion, kind, removedIn, replacement] of cases) {
      const at = checkApiVersion({ apiVersion, kind }, v(removedIn));
      assert.equal(at?.severity, 'error', `${apiVersion} ${kind} at ${removedIn}`);
      assert.ok(at.message.includes(`use ${replacement}`), at.message);
      const before = v(removedIn);
      assert.notEqual(
        checkApiVersion({ apiVersion, kind }, { major: 1, minor: before.minor - 1 })?.severity,
        'error',
        `${apiVersion} ${kind} is still served before ${removedIn}`,
      );
    }
  });

  test('a served, current API has no finding; Endpoints warns from 1.33', () => {
    assert.equal(checkApiVersion({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, v('1.37')), undefined);
    assert.equal(checkApiVersion({ apiVersion: 'apps/v1', kind: 'Deployment' }, v('1.37')), undefined);
    assert.equal(checkApiVersion({ apiVersion: 'v1', kind: 'Endpoints' }, v('1.32')), undefined);
    assert.equal(checkApiVersion({ apiVersion: 'v1', kind: 'Endpoints' }, v('1.33'))?.severity, 'warning');
  });

  test('versions parse as the CLI takes them; anything else is refused', () => {
    assert.deepEqual(parseKubernetesVersion('1.30'), { major: 1, minor: 30 });
    assert.deepEqual(parseKubernetesVersion('v1.30.2'), { major: 1, minor: 30 });
    assert.deepEqual(parseKubernetesVersion('1.31.0-rc.1'), { major: 1, minor: 31 });
    for (const bad of ['1', 'latest', '1.x', ''])
      assert.equal(parseKubernetesVersion(bad), undefined, JSON.stringify(bad));
  });

  test('the table holds together: one row per API, a replacement served before the removal', () => {
    const keys = REMOVED_APIS.map((r) => `${r.apiVersion} ${r.kind}`);
    assert.equal(new Set(keys).size, keys.length, 'no row twice');
    for (const r of REMOVED_APIS) {
      assert.ok(parseKubernetesVersion(r.removedIn), r.removedIn);
      if (r.replacementSince) {
        const since = v(r.replacementSince);
        const removed = v(r.removedIn);
        assert.ok(since.minor <= removed.minor, `${r.apiVersion} ${r.kind}: replacement before removal`);
      }
    }
    for (const d of DEPRECATED_APIS) assert.ok(!keys.includes(`${d.apiVersion} ${d.kind}`));
  });
});
