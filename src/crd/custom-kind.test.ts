import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import type { ObjectOf } from '../client/kind.js';
import { InvalidOptionError } from '../core/errors.js';
import { defineCustomKind, type NewObjectOf } from './custom-kind.js';
import type { CustomKindDefinition, CustomKindVersionDefinition } from './custom-kind-definition.js';
import { UnsupportedSchemaError } from './errors.js';
import { k8s } from './k8s.js';
import { GADGET } from './testing/gadget-kind.js';

const Spec = Type.Object({
  size: Type.Integer(),
  mode: Type.Union([Type.Literal('a'), Type.Literal('b')]),
  note: Type.Optional(Type.String()),
});
const Status = Type.Object({ ready: Type.Optional(Type.Boolean()) });
const v1: CustomKindVersionDefinition = {
  name: 'v1',
  served: true,
  storage: true,
  schema: { spec: Spec, status: Status },
};
const base: CustomKindDefinition = {
  group: 'example.com',
  names: { kind: 'Widget', plural: 'widgets' },
  scope: 'Namespaced',
  versions: [v1],
};

function invalid(definition: CustomKindDefinition, option: string, why: RegExp): void {
  assert.throws(
    () => defineCustomKind(definition),
    (e: unknown) => {
      assert.ok(e instanceof InvalidOptionError, String(e));
      assert.equal(e.option, option);
      assert.match(e.message, why);
      return true;
    },
  );
}

test('the kind addresses the storage version and carries group, plural, singular and scope for the generators', () => {
  const WIDGET = defineCustomKind({
    ...base,
    versions: [
      { ...v1, storage: false },
      { name: 'v2', served: true, storage: true, schema: { spec: Spec } },
    ],
  });
  assert.equal(WIDGET.apiVersion, 'example.com/v2');
  assert.equal(WIDGET.kind, 'Widget');
  assert.deepEqual(
    [WIDGET.group, WIDGET.plural, WIDGET.singular, WIDGET.scope, WIDGET.versionName, WIDGET.storageVersion],
    ['example.com', 'widgets', 'widget', 'Namespaced', 'v2', 'v2'],
  );
  const old = WIDGET.version('v1');
  assert.equal(old.apiVersion, 'example.com/v1');
  assert.equal(old.storageVersion, 'v2');
  assert.equal(old.version('v2'), WIDGET, 'one kind object per version');
  assert.ok(Object.isFrozen(WIDGET));
});

test('version() of a name the definition lacks is an error listing the versions it has', () => {
  assert.throws(
    () => GADGET.version('v9' as 'v1'),
    (e: unknown) =>
      e instanceof InvalidOptionError &&
      /gadgets.test.operator-runtime.io has no version "v9" \(it has v1, v1beta1\)/.test(e.message),
  );
});

test('the object type comes from the schema: literal apiVersion and kind, server-set metadata, spec fields, optional status', () => {
  // Written inline (not through a variable typed CustomKindVersionDefinition, which would widen the schema).
  const WIDGET = defineCustomKind({
    group: 'example.com',
    names: { kind: 'Widget', plural: 'widgets' },
    scope: 'Namespaced',
    versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Spec, status: Status } }],
  });
  type Widget = ObjectOf<typeof WIDGET>;
  const w: Widget = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w', namespace: 'n', uid: 'u', resourceVersion: '1', generation: 1 },
    spec: { size: 1, mode: 'a' },
  };
  assert.equal(WIDGET.apiVersion, w.apiVersion);
  const mode: 'a' | 'b' = w.spec.mode;
  const note: string | undefined = w.spec.note;
  const ready: boolean | undefined = w.status?.ready;
  assert.deepEqual([mode, note, ready], ['a', undefined, undefined]);
  // @ts-expect-error: mode is 'a' | 'b'
  const badMode: Widget = { ...w, spec: { size: 1, mode: 'c' } };
  // @ts-expect-error: the apiVersion is the literal of this version
  const badVersion: Widget = { ...w, apiVersion: 'example.com/v2' };
  // @ts-expect-error: a namespaced object read from the server has a namespace
  const noNamespace: Widget = { ...w, metadata: { name: 'w', uid: 'u', resourceVersion: '1', generation: 1 } };
  // @ts-expect-error: spec is required (not wrapped in Type.Optional)
  const noSpec: Widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: w.metadata };
  void [badMode, badVersion, noNamespace, noSpec];
  // What a client writes: metadata without the server's fields, the rest as typed as ever.
  const draft: NewObjectOf<typeof WIDGET> = {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { generateName: 'w-' },
    spec: { size: 2, mode: 'b' },
  };
  // @ts-expect-error: a draft's spec is still checked
  const badDraft: NewObjectOf<typeof WIDGET> = { ...draft, spec: { size: 'two', mode: 'b' } };
  void badDraft;
});

test("a cluster-scoped kind's metadata has no required namespace; each version has its own type", () => {
  const CLUSTER = defineCustomKind({
    group: 'example.com',
    names: { kind: 'Zone', plural: 'zones' },
    scope: 'Cluster',
    versions: [
      { name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ region: Type.String() }) } },
      { name: 'v1alpha1', served: true, storage: false, schema: { spec: Type.Object({ area: Type.Integer() }) } },
    ],
  });
  type Zone = ObjectOf<typeof CLUSTER>;
  const zone: Zone = {
    apiVersion: 'example.com/v1',
    kind: 'Zone',
    metadata: { name: 'z', uid: 'u', resourceVersion: '1', generation: 1 },
    spec: { region: 'eu' },
  };
  const alpha = CLUSTER.version('v1alpha1');
  const old: ObjectOf<typeof alpha> = {
    apiVersion: 'example.com/v1alpha1',
    kind: 'Zone',
    metadata: zone.metadata,
    spec: { area: 3 },
  };
  // @ts-expect-error: v1alpha1 has no region
  const wrong: ObjectOf<typeof alpha> = { ...old, spec: { region: 'eu' } };
  // @ts-expect-error: only the defined versions
  assert.throws(() => CLUSTER.version('v2'), InvalidOptionError);
  void wrong;
  assert.equal(alpha.apiVersion, 'example.com/v1alpha1');
});

test('the k8s helpers give the static types the server stores', () => {
  const KIND = defineCustomKind({
    ...base,
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          spec: Type.Object({
            port: k8s.intOrString(),
            nick: k8s.nullable(Type.String()),
            template: k8s.embeddedResource(),
            free: k8s.anyObject(),
            conditions: k8s.conditions(),
          }),
        },
      },
    ] as const,
  });
  type Spec = ObjectOf<typeof KIND>['spec'];
  const spec: Spec = {
    port: 'http',
    nick: null,
    template: { apiVersion: 'v1', kind: 'ConfigMap', data: {} },
    free: { x: [1] },
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Ok', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
    ],
  };
  // @ts-expect-error: a condition status is True, False or Unknown
  const badCondition: Spec['conditions'][number] = { ...spec.conditions[0]!, status: 'Yes' };
  void badCondition;
  assert.equal(KIND.kind, 'Widget');
  assert.equal(spec.port, 'http');
});

test('a definition the API server would reject fails when the kind is defined, naming the field', () => {
  invalid({ ...base, group: 'example' }, 'group', /at least one dot/);
  invalid({ ...base, group: 'Example.com' }, 'group', /lowercase DNS subdomain/);
  invalid({ ...base, names: { kind: 'Widget', plural: 'Widgets' } }, 'names.plural', /lowercase DNS-1035 label/);
  invalid({ ...base, names: { kind: 'Widget', plural: 'wid_gets' } }, 'names.plural', /DNS-1035/);
  invalid({ ...base, names: { kind: 'Widget', plural: 'widgets', singular: 'Widget' } }, 'names.singular', /DNS-1035/);
  invalid({ ...base, names: { kind: '9Widget', plural: 'widgets' } }, 'names.kind', /starting with a letter/);
  invalid(
    { ...base, names: { kind: 'Widget', plural: 'widgets', listKind: 'Widget' } },
    'names.listKind',
    /must differ/,
  );
  invalid(
    { ...base, names: { kind: 'Widget', plural: 'widgets', shortNames: ['w', 'W!'] } },
    'names.shortNames[1]',
    /DNS-1035/,
  );
  invalid(
    { ...base, names: { kind: 'Widget', plural: 'widgets', categories: ['All'] } },
    'names.categories[0]',
    /DNS-1035/,
  );
  invalid({ ...base, scope: 'Global' as 'Cluster' }, 'scope', /Namespaced or Cluster/);
  invalid({ ...base, versions: [] }, 'versions', /at least one version/);
  invalid({ ...base, versions: [v1, { ...v1 }] }, 'versions[1].name', /version v1 is defined twice/);
  invalid({ ...base, versions: [{ ...v1, name: 'V1' }] }, 'versions[0].name', /DNS-1035/);
  invalid(
    { ...base, versions: [{ ...v1, storage: false }] },
    'versions',
    /exactly one version must have storage: true, found 0/,
  );
  invalid({ ...base, versions: [v1, { ...v1, name: 'v2' }] }, 'versions', /found 2 \(v1, v2\)/);
  invalid({ ...base, versions: [{ ...v1, served: false }] }, 'versions', /at least one version must be served/);
  invalid(
    { ...base, versions: [{ ...v1, deprecationWarning: 'old' }] },
    'versions[v1].deprecationWarning',
    /only be set with deprecated: true/,
  );
  invalid(
    { ...base, versions: [{ ...v1, schema: { metadata: Spec } }] },
    'versions[v1].schema.metadata',
    /defined by Kubernetes/,
  );
  invalid(
    { ...base, versions: [{ ...v1, schema: { spec: 'object' } }] },
    'versions[v1].schema.spec',
    /must be a TypeBox schema/,
  );
  invalid(
    {
      ...base,
      versions: [
        {
          ...v1,
          subresources: { scale: { specReplicasPath: '.status.replicas', statusReplicasPath: '.status.replicas' } },
        },
      ],
    },
    'versions[v1].subresources.scale.specReplicasPath',
    /under \.spec\./,
  );
  invalid(
    {
      ...base,
      versions: [
        {
          ...v1,
          subresources: { scale: { specReplicasPath: '.spec.items[0]', statusReplicasPath: '.status.replicas' } },
        },
      ],
    },
    'versions[v1].subresources.scale.specReplicasPath',
    /no array index/,
  );
  invalid(
    { ...base, versions: [{ ...v1, printerColumns: [{ name: 'A', type: 'string', jsonPath: 'spec.a' }] }] },
    'versions[v1].printerColumns[0].jsonPath',
    /starting with a dot/,
  );
  invalid(
    { ...base, versions: [{ ...v1, printerColumns: [{ name: 'A', type: 'text' as 'string', jsonPath: '.spec.a' }] }] },
    'versions[v1].printerColumns[0].type',
    /one of string, integer/,
  );
  invalid(
    {
      ...base,
      versions: [
        {
          ...v1,
          printerColumns: [
            { name: 'A', type: 'string', jsonPath: '.a' },
            { name: 'A', type: 'string', jsonPath: '.b' },
          ],
        },
      ],
    },
    'versions[v1].printerColumns[1].name',
    /defined twice/,
  );
});

test('a schema without a structural form fails when the kind is defined, naming the version and the node', () => {
  assert.throws(
    () =>
      defineCustomKind({
        ...base,
        versions: [{ ...v1, schema: { spec: Type.Object({ pair: Type.Tuple([Type.String()]) }) } }],
      }),
    (e: unknown) =>
      e instanceof UnsupportedSchemaError && e.path === 'versions[v1].schema.properties.spec.properties.pair',
  );
});

test('a schema the server would reject for a rule beyond the conversion fails when the kind is defined: a list-map key that is optional', () => {
  const Item = Type.Object({ name: Type.Optional(Type.String()), value: Type.String() });
  assert.throws(
    () =>
      defineCustomKind({
        ...base,
        versions: [{ ...v1, schema: { spec: Type.Object({ items: Type.Array(Item, k8s.listMap(['name'])) }) } }],
      }),
    (e: unknown) =>
      e instanceof UnsupportedSchemaError &&
      /spec\.properties\.items: list-map key name must be required or have a default/.test(e.message),
  );
  const Defaulted = Type.Object({ name: Type.Optional(Type.String({ default: 'main' })), value: Type.String() });
  assert.doesNotThrow(() =>
    defineCustomKind({
      ...base,
      versions: [{ ...v1, schema: { spec: Type.Object({ items: Type.Array(Defaulted, k8s.listMap(['name'])) }) } }],
    }),
  );
});
