import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse as parseYaml } from 'yaml';
import type { KubeconfigObject } from '../control-plane/test-env.js';
import {
  DEFAULT_MEMBER_SECRET_KEY,
  FLEET_MEMBER_LABEL,
  MEMBER_CLUSTER_NAME_ANNOTATION,
  memberSecretManifest,
} from './member-secret.js';
import { TestFleet } from './test-fleet.js';

const kubeconfig: KubeconfigObject = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'east', cluster: { server: 'https://127.0.0.1:1' } }],
  users: [{ name: 'east-admin', user: { token: 'not-a-real-token' } }],
  contexts: [{ name: 'east', context: { cluster: 'east', user: 'east-admin' } }],
  'current-context': 'east',
};

test("a member Secret carries the kubeconfig under the provider's default key, labelled and annotated with the cluster's name", () => {
  const secret = memberSecretManifest('east', kubeconfig, { namespace: 'fleet' });
  assert.equal(FLEET_MEMBER_LABEL, 'operator-runtime.io/fleet-member');
  assert.equal(DEFAULT_MEMBER_SECRET_KEY, 'kubeconfig');
  assert.deepEqual(secret.metadata, {
    name: 'east-kubeconfig',
    namespace: 'fleet',
    labels: { [FLEET_MEMBER_LABEL]: 'true' },
    annotations: { [MEMBER_CLUSTER_NAME_ANNOTATION]: 'east' },
  });
  assert.deepEqual(parseYaml(Buffer.from(secret.data.kubeconfig!, 'base64').toString('utf8')), kubeconfig);
});

test('name, extra labels and the data key can be chosen; a given label overrides the member label', () => {
  const secret = memberSecretManifest('east', kubeconfig, {
    namespace: 'fleet',
    name: 'east.example.com',
    labels: { tier: 'gold', [FLEET_MEMBER_LABEL]: 'false' },
    key: 'value',
  });
  assert.equal(secret.metadata.name, 'east.example.com');
  assert.deepEqual(secret.metadata.labels, { [FLEET_MEMBER_LABEL]: 'false', tier: 'gold' });
  assert.deepEqual(Object.keys(secret.data), ['value']);
  assert.equal(secret.metadata.annotations[MEMBER_CLUSTER_NAME_ANNOTATION], 'east');
});

test('TestFleet.start refuses bad member lists before starting anything', async () => {
  for (const [members, message] of [
    [0, /positive integer/],
    [[], /at least one/],
    [['a', 'a'], /named twice/],
    [['Not_A_Label'], /DNS label/],
  ] as const) {
    await assert.rejects(TestFleet.start({ members }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'ERR_TEST_FLEET');
      assert.match(err.message, message);
      return true;
    });
  }
});
