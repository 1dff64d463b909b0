/**
 * Generated CRDs against the real kube-apiserver 1.20: they become Established, a valid object is
 * accepted (and defaulted), and each constraint the schema asks for rejects an invalid object with
 * the server's own message. Kubernetes 1.20 ignores `x-kubernetes-validations` (CEL came in 1.25);
 * the last test pins that, and crd.modern.int.test.ts shows the 1.36 server enforcing them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { ApiError } from '../client/api-error.js';
import { KubeClient } from '../client/kube-client.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { kubectl } from '../testing/control-plane/kubectl.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { defineCustomKind } from './custom-kind.js';
import { customResourceDefinition, type CustomResourceDefinition } from './custom-resource-definition.js';
import { GADGET, GadgetSpec, GadgetStatus } from './testing/gadget-kind.js';

const NS = 'default';
const VALID_SPEC = { mode: 'safe', size: '1Gi', replicas: 2, target: 8080 } as const;

type Spec = Record<string, unknown>;

describe('generated CRDs on kube-apiserver 1.20', () => {
  let env: TestEnv;
  let client: KubeClient;
  let seq = 0;
  const gadget = (spec: Spec, name = `gadget-${++seq}`) => ({
    apiVersion: GADGET.apiVersion,
    kind: GADGET.kind,
    metadata: { name, namespace: NS },
    spec,
  });
  const withSpec = (patch: Spec): Spec => {
    const spec: Spec = { ...VALID_SPEC, ...patch };
    for (const key of Object.keys(spec)) if (spec[key] === undefined) delete spec[key];
    return spec;
  };

  before(async () => {
    env = await TestEnv.start({ crds: [customResourceDefinition(GADGET)] });
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('the CRD is Established with the names, categories and printer columns it was generated with', async () => {
    const crd = await env.request<
      CustomResourceDefinition & {
        status: {
          conditions: { type: string; status: string }[];
          acceptedNames: { shortNames: string[]; categories: string[] };
        };
      }
    >('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.operator-runtime.io`);
    assert.equal(crd.body.status.conditions.find((c) => c.type === 'Established')?.status, 'True');
    assert.deepEqual(crd.body.status.acceptedNames.shortNames, ['gdg']);
    assert.deepEqual(crd.body.status.acceptedNames.categories, ['all', 'test']);
    await client.create(gadget(withSpec({}), 'shown'));
    const table = await kubectl(env.kubeconfigPath, ['get', 'gdg', 'shown', '-n', NS]);
    assert.match(table, /^NAME\s+MODE\s+REPLICAS\s*\n/, table);
    assert.match(table, /shown\s+safe\s+2/, table);
    const wide = await kubectl(env.kubeconfigPath, ['get', 'test', '-n', NS, '-o', 'wide']);
    assert.match(
      wide,
      /MODE\s+REPLICAS\s+SIZE/,
      'the priority-1 column shows with -o wide; the category lists gadgets',
    );
  });

  test('a valid object is accepted and comes back with its defaults applied', async () => {
    const created = await client.create(
      gadget(
        withSpec({
          replicas: undefined,
          ports: [{ name: 'http', port: 80 }],
          nickname: null,
          extra: { deep: { x: 1 } },
          anything: [1, 'a'],
        }),
      ),
    );
    const read = await client.get(GADGET, created.metadata.name, { namespace: NS });
    assert.equal(read.spec.replicas, 1, 'replicas defaults to 1');
    assert.deepEqual(
      read.spec.ports,
      [{ name: 'http', port: 80, protocol: 'TCP' }],
      'protocol defaults inside a list-map item',
    );
    assert.equal(read.spec.nickname, null, 'nullable: an explicit null is kept');
    assert.deepEqual(read.spec.extra, { deep: { x: 1 } }, 'a free-form object keeps its fields');
    assert.deepEqual(read.spec.anything, [1, 'a'], 'a free-form value is kept as it is');
    assert.equal(read.apiVersion, 'test.operator-runtime.io/v1');
  });

  test('unknown fields are pruned, except under x-kubernetes-preserve-unknown-fields and in embedded resources', async () => {
    const created = await client.create(
      gadget({
        ...withSpec({}),
        bogus: 1,
        template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' } },
      }),
    );
    const read = await client.get<{ spec: Record<string, unknown> }>(GADGET, created.metadata.name, { namespace: NS });
    assert.equal('bogus' in read.spec, false);
    assert.deepEqual(read.spec.template, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
      data: { a: 'b' },
    });
  });

  test('a field without nullable drops an explicit null: required ones then fail as missing, optional ones vanish', async () => {
    await assert.rejects(client.create(gadget(withSpec({ size: null }))), invalid('spec.size', 'Required value'));
    const created = await client.create(gadget(withSpec({ level: null })));
    assert.equal('level' in (created.spec as object), false);
  });

  // 1.20 names a field inside a list item without its index (spec.ports.port); later servers add it.
  const rejections: { constraint: string; spec: Spec; field: string; message: string }[] = [
    {
      constraint: 'enum',
      spec: { mode: 'slow' },
      field: 'spec.mode',
      message: 'Unsupported value: "slow": supported values: "fast", "safe"',
    },
    {
      constraint: 'enum from Type.Enum',
      spec: { level: 'mid' },
      field: 'spec.level',
      message: 'Unsupported value: "mid": supported values: "low", "high"',
    },
    {
      constraint: 'pattern',
      spec: { size: '1G' },
      field: 'spec.size',
      message: "spec.size in body should match '^[0-9]+(Mi|Gi)$'",
    },
    {
      constraint: 'minLength',
      spec: { size: '1' },
      field: 'spec.size',
      message: 'spec.size in body should be at least 2 chars long',
    },
    {
      constraint: 'maxLength',
      spec: { size: '1234567890123Gi' },
      field: 'spec.size',
      message: 'spec.size in body should be at most 12 chars long',
    },
    {
      constraint: 'minimum',
      spec: { replicas: -1 },
      field: 'spec.replicas',
      message: 'spec.replicas in body should be greater than or equal to 0',
    },
    {
      constraint: 'maximum',
      spec: { replicas: 11 },
      field: 'spec.replicas',
      message: 'spec.replicas in body should be less than or equal to 10',
    },
    {
      constraint: 'exclusiveMinimum',
      spec: { ratio: 0 },
      field: 'spec.ratio',
      message: 'spec.ratio in body should be greater than 0',
    },
    {
      constraint: 'type integer',
      spec: { replicas: 1.5 },
      field: 'spec.replicas',
      message: 'spec.replicas in body must be of type integer: "number"',
    },
    { constraint: 'required', spec: { mode: undefined }, field: 'spec.mode', message: 'Required value' },
    {
      constraint: 'required in a list item',
      spec: { ports: [{ name: 'http' }] },
      field: 'spec.ports.port',
      message: 'Required value',
    },
    {
      constraint: 'minItems',
      spec: { ports: [] },
      field: 'spec.ports',
      message: 'spec.ports in body should have at least 1 items',
    },
    {
      constraint: 'maxItems',
      spec: { tags: ['a', 'b', 'c', 'd', 'e', 'f'] },
      field: 'spec.tags',
      message: 'spec.tags in body should have at most 5 items',
    },
    {
      constraint: 'int-or-string',
      spec: { target: true },
      field: 'spec.target',
      message: 'spec.target in body must be of type integer,string: "boolean"',
    },
    {
      constraint: 'list-map duplicate key',
      spec: {
        ports: [
          { name: 'http', port: 80 },
          { name: 'http', port: 81 },
        ],
      },
      field: 'spec.ports[1]',
      message: 'Duplicate value: map[string]interface {}{"name":"http"}',
    },
    {
      constraint: 'list-set duplicate',
      spec: { tags: ['a', 'a'] },
      field: 'spec.tags[1]',
      message: 'Duplicate value: "a"',
    },
    {
      constraint: 'map value type',
      spec: { labels: { a: 1 } },
      field: 'spec.labels.a',
      message: 'spec.labels.a in body must be of type string: "integer"',
    },
    {
      constraint: 'embedded resource without kind',
      spec: { template: { apiVersion: 'v1', metadata: { name: 'x' } } },
      field: 'spec.template.kind',
      message: 'Required value: must not be empty',
    },
    {
      constraint: 'embedded resource without apiVersion',
      spec: { template: { kind: 'ConfigMap' } },
      field: 'spec.template.apiVersion',
      message: 'Required value: must not be empty',
    },
    {
      constraint: 'embedded resource metadata',
      spec: { template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'Bad_NS' } } },
      field: 'spec.template.metadata.namespace',
      message: 'Invalid value: "Bad_NS": a lowercase RFC 1123 label',
    },
    {
      constraint: 'nullable keeps its other constraints',
      spec: { nickname: 'x'.repeat(21) },
      field: 'spec.nickname',
      message: 'spec.nickname in body should be at most 20 chars long',
    },
  ];
  for (const r of rejections) {
    test(`${r.constraint}: an invalid object is rejected with the server's message`, async () => {
      await assert.rejects(client.create(gadget(withSpec(r.spec))), invalid(r.field, r.message));
    });
  }

  test('the status schema is enforced on the status subresource (conditions: enum, required)', async () => {
    const created = await client.create(gadget(withSpec({})));
    const condition = {
      type: 'Ready',
      status: 'Maybe',
      reason: 'Checked',
      message: 'checked',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    await assert.rejects(
      client.patchStatus(GADGET, created.metadata.name, { status: { conditions: [condition] } }, { namespace: NS }),
      invalid('status.conditions.status', 'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"'),
    );
    const ok = { ...condition, status: 'True' };
    const { reason: _, ...withoutReason } = ok;
    await assert.rejects(
      client.patchStatus(GADGET, created.metadata.name, { status: { conditions: [withoutReason] } }, { namespace: NS }),
      invalid('status.conditions.reason', 'Required value'),
    );
    const patched = await client.patchStatus(
      GADGET,
      created.metadata.name,
      { status: { conditions: [ok], replicas: 2, selector: 'app=g' } },
      { namespace: NS },
    );
    assert.equal(patched.status?.conditions?.[0]?.status, 'True');
  });

  test('the scale subresource reads spec and status replicas from the generated paths', async () => {
    const created = await client.create(gadget(withSpec({ replicas: 3 })));
    await client.patchStatus(
      GADGET,
      created.metadata.name,
      { status: { replicas: 2, selector: 'app=g' } },
      { namespace: NS },
    );
    const scale = await env.request<{ spec: { replicas: number }; status: { replicas: number; selector: string } }>(
      'GET',
      `/apis/test.operator-runtime.io/v1/namespaces/${NS}/gadgets/${created.metadata.name}/scale`,
    );
    assert.deepEqual(
      [scale.body.spec.replicas, scale.body.status.replicas, scale.body.status.selector],
      [3, 2, 'app=g'],
    );
  });

  test('a second version is served: the same object reads as v1beta1 through GADGET.version()', async () => {
    const created = await client.create(gadget(withSpec({})));
    const old = await client.get(GADGET.version('v1beta1'), created.metadata.name, { namespace: NS });
    assert.equal(old.apiVersion, 'test.operator-runtime.io/v1beta1');
    assert.equal(old.spec.mode, 'safe');
  });

  test('a default added to the schema later is applied when an existing object is read', async () => {
    const created = await client.create(gadget(withSpec({})));
    const GADGET_WITH_COLOR = defineCustomKind({
      ...GADGET.definition,
      versions: [
        {
          ...GADGET.definition.versions[0],
          schema: {
            spec: Type.Object({ ...GadgetSpec.properties, color: Type.String({ default: 'blue' }) }),
            status: GadgetStatus,
          },
        },
        GADGET.definition.versions[1],
      ],
    });
    const current = await env.request<{ metadata: { resourceVersion: string } }>(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.operator-runtime.io',
    );
    const next = customResourceDefinition(GADGET_WITH_COLOR);
    const put = await env.request(
      'PUT',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.test.operator-runtime.io',
      { ...next, metadata: { ...next.metadata, resourceVersion: current.body.metadata.resourceVersion } },
    );
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const read = await eventually('the new default on read', async () => {
      const g = await client.get(GADGET_WITH_COLOR, created.metadata.name, { namespace: NS });
      return g.spec.color !== undefined ? g : undefined;
    });
    assert.equal(read.spec.color, 'blue', 'stored without color, read with the default');
  });

  test('Kubernetes 1.20 ignores x-kubernetes-validations: an object breaking a CEL rule is accepted (see crd.modern.int.test.ts)', async () => {
    const created = await client.create(gadget(withSpec({ limits: { min: 5, max: 1 }, mode: 'fast', replicas: 5 })));
    assert.deepEqual(created.spec.limits, { min: 5, max: 1 });
  });
});

/** The server's 422 for `field`, its message containing `message` (the server's words, not ours). */
function invalid(field: string, message: string): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 422, e.message);
    assert.equal(e.reason, 'Invalid', e.message);
    const cause = e.details?.causes?.find((c) => c.field === field);
    assert.ok(cause, `no cause for ${field} in ${JSON.stringify(e.details?.causes)}`);
    assert.ok(
      e.message.includes(message),
      `expected the server's message to contain ${JSON.stringify(message)}: ${e.message}`,
    );
    return true;
  };
}
