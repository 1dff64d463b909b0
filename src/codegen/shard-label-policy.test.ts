/**
 * With sharding, `generate manifests` writes sharding.yaml: a ValidatingAdmissionPolicy (and its
 * binding) letting only the operator's ServiceAccount write the ring's assignment labels.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { kinds } from '../client/kinds.js';
import { defineCustomKind, Type } from '../crd/index.js';
import { Manager } from '../manager/manager.js';
import { offlineClient } from '../rbac/offline-client.js';
import { defineConfig, type OperatorProjectConfig } from './config.js';
import { generateManifests, KUSTOMIZATION_FILE, SHARDING_FILE } from './generate.js';

const GADGET = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Gadget', plural: 'gadgets' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ size: Type.Integer() }) } }],
});

function project(sharded: boolean): OperatorProjectConfig {
  return defineConfig({
    name: 'gadget-operator',
    namespace: 'gadget-system',
    image: 'example.com/gadget-operator:1.0.0',
    kinds: [GADGET],
    manager: () => {
      const manager = new Manager({
        client: offlineClient(),
        ...(sharded ? { sharding: { ring: 'gadgets', namespace: 'gadget-system', mode: 'label' } } : {}),
      });
      manager
        .controller('gadget')
        .for(GADGET)
        .complete(async () => undefined);
      manager
        .controller('config')
        .for(kinds.ConfigMap)
        .complete(async () => undefined);
      return manager;
    },
  });
}

interface Doc {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
  resources?: string[];
}

test('a sharded manager gets a ValidatingAdmissionPolicy on its sharded kinds, exempting only its ServiceAccount, and a Deny binding', async () => {
  const files = await generateManifests(project(true));
  const file = files.find((f) => f.path === SHARDING_FILE);
  assert.ok(file, 'sharding.yaml written');
  const [policy, binding] = parseAllDocuments(file.content).map((d) => d.toJS() as Doc);
  assert.equal(policy?.kind, 'ValidatingAdmissionPolicy');
  assert.equal(binding?.kind, 'ValidatingAdmissionPolicyBinding');
  assert.deepEqual(binding?.spec, { policyName: policy?.metadata.name, validationActions: ['Deny'] });
  assert.equal(policy?.spec.failurePolicy, 'Fail');
  assert.deepEqual((policy?.spec.matchConstraints as { resourceRules: unknown[] }).resourceRules, [
    { apiGroups: [''], apiVersions: ['*'], resources: ['configmaps'], operations: ['CREATE', 'UPDATE'] },
    { apiGroups: ['example.com'], apiVersions: ['*'], resources: ['gadgets'], operations: ['CREATE', 'UPDATE'] },
  ]);
  const text = JSON.stringify(policy?.spec);
  assert.match(text, /system:serviceaccount:gadget-system:gadget-operator/);
  for (const label of ['shard', 'grant.shard', 'drain.shard', 'released.shard'])
    assert.ok(text.includes(`'${label}.operator-runtime.io/gadgets'`), label);
  const kustomization = parseAllDocuments(files.find((f) => f.path === KUSTOMIZATION_FILE)!.content)[0]!.toJS() as Doc;
  assert.ok(kustomization.resources?.includes(SHARDING_FILE));
});

test('an unsharded manager gets no sharding.yaml', async () => {
  const files = await generateManifests(project(false));
  assert.equal(
    files.find((f) => f.path === SHARDING_FILE),
    undefined,
  );
});
