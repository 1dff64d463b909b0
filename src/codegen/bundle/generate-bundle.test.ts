/**
 * `generateBundle` beyond the reference operator: install modes follow the manager's namespaces,
 * a namespaced manager's roles become the CSV's `permissions`, and bad bundle settings are refused
 * naming the field. (The reference operator's bundle — webhooks, conversion, secure metrics — is
 * examples/database-operator/bundle.test.ts.)
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { kinds } from '../../client/kinds.js';
import { defineCustomKind, Type } from '../../crd/index.js';
import { Manager } from '../../manager/manager.js';
import { offlineClient } from '../../rbac/offline-client.js';
import { defineConfig, type OperatorProjectConfig } from '../config.js';
import type { BundleConfig } from './bundle-config.js';
import type { ClusterServiceVersion } from './cluster-service-version.js';
import { generateBundle } from './generate-bundle.js';
import { validateBundle } from './validate-bundle.js';

const GIZMO = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Gizmo', plural: 'gizmos' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ on: Type.Boolean() }) } }],
});

function project(namespaces?: string[], bundle?: BundleConfig): OperatorProjectConfig {
  return defineConfig({
    name: 'gizmo-operator',
    namespace: 'gizmo-system',
    image: 'example.com/gizmo-operator:1.0.0',
    kinds: [GIZMO],
    manager: () => {
      const manager = new Manager({ client: offlineClient(), ...(namespaces ? { namespaces } : {}) });
      manager
        .controller('gizmo')
        .for(GIZMO)
        .writes(kinds.ConfigMap, ['create'])
        .complete(async () => undefined);
      return manager;
    },
    ...(bundle ? { bundle } : {}),
  });
}

async function csvOf(config: OperatorProjectConfig): Promise<{ csv: ClusterServiceVersion; notes: string[] }> {
  const { files, notes } = await generateBundle(config, { version: '1.0.0' });
  const file = files.find((f) => f.path.endsWith('.clusterserviceversion.yaml'))!;
  return { csv: parseAllDocuments(file.content)[0]!.toJS() as ClusterServiceVersion, notes };
}

const supported = (csv: ClusterServiceVersion) => csv.spec.installModes.filter((m) => m.supported).map((m) => m.type);

describe('generateBundle', () => {
  test('a cluster-wide manager supports AllNamespaces only', async () => {
    const { csv, notes } = await csvOf(project());
    assert.deepEqual(supported(csv), ['AllNamespaces']);
    assert.deepEqual(notes, []);
    assert.ok(csv.spec.install.spec.clusterPermissions?.length);
  });

  test('a manager of its own namespace supports OwnNamespace and SingleNamespace, with Role rules as permissions', async () => {
    const { csv, notes } = await csvOf(project(['gizmo-system']));
    assert.deepEqual(supported(csv), ['OwnNamespace', 'SingleNamespace']);
    assert.equal(csv.spec.install.spec.clusterPermissions, undefined);
    assert.ok(
      csv.spec.install.spec.permissions?.[0]?.rules.some((r) => r.resources?.includes('gizmos')),
      'the Role rules of the watched namespace',
    );
    assert.deepEqual(notes, ['the manager is namespaced: OLM v1 installs only bundles that support AllNamespaces']);
  });

  test('a manager of several namespaces supports MultiNamespace; its Roles merge into one rule list', async () => {
    const { csv } = await csvOf(project(['team-a', 'team-b']));
    assert.deepEqual(supported(csv), ['MultiNamespace']);
    const rules = csv.spec.install.spec.permissions![0]!.rules.map((r) => JSON.stringify(r));
    assert.equal(new Set(rules).size, rules.length, 'no rule twice');
  });

  test('a namespaced bundle still validates clean (apart from the missing example)', async () => {
    const { files } = await generateBundle(project(['team-a', 'team-b']), { version: '1.0.0' });
    const result = validateBundle(new Map(files.map((f) => [f.path, f.content])));
    assert.deepEqual(result.errors, []);
  });

  test('bundle settings are checked: package, channels, default channel, version, samples', async () => {
    await assert.rejects(generateBundle(project(undefined, { package: 'Gizmo' }), { version: '1.0.0' }), {
      message: /config\.bundle\.package: must be a DNS label, got "Gizmo"/,
    });
    await assert.rejects(generateBundle(project(undefined, { channels: [] }), { version: '1.0.0' }), {
      message: /config\.bundle\.channels: must name at least one channel/,
    });
    await assert.rejects(
      generateBundle(project(undefined, { channels: ['alpha'], defaultChannel: 'stable' }), { version: '1.0.0' }),
      {
        message: /config\.bundle\.defaultChannel: "stable" is not one of the channels \["alpha"\]/,
      },
    );
    await assert.rejects(generateBundle(project(), {}), {
      message: /config\.bundle\.version: must be a semantic version/,
    });
    await assert.rejects(
      generateBundle(project(), { version: '1.0.0', samples: [{ apiVersion: 'v1', kind: 'ConfigMap' }] }),
      { message: /config\.bundle\.samples\[0\]: v1 ConfigMap is not a kind the operator owns/ },
    );
  });

  test('the catalog text comes from the config; spec descriptors from the schema', async () => {
    const { csv } = await csvOf(
      project(undefined, {
        displayName: 'Gizmos',
        description: 'Keeps gizmos.',
        keywords: ['gizmo'],
        provider: { name: 'Example' },
        replaces: 'gizmo-operator.v0.9.0',
        minKubeVersion: '1.30.0',
      }),
    );
    assert.equal(csv.spec.displayName, 'Gizmos');
    assert.equal(csv.spec.description, 'Keeps gizmos.');
    assert.deepEqual(csv.spec.keywords, ['gizmo']);
    assert.deepEqual(csv.spec.provider, { name: 'Example' });
    assert.equal(csv.spec.replaces, 'gizmo-operator.v0.9.0');
    assert.equal(csv.spec.minKubeVersion, '1.30.0');
    assert.deepEqual(csv.spec.customresourcedefinitions.owned[0]!.specDescriptors, [
      { path: 'on', displayName: 'On', 'x-descriptors': ['urn:alm:descriptor:com.tectonic.ui:booleanSwitch'] },
    ]);
  });
});
