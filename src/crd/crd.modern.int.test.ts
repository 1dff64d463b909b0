/**
 * CEL rules (`x-kubernetes-validations`) generated from the schema, enforced by the Kubernetes 1.36
 * CRD-only API server: a rule on an object, a cross-field rule on spec, and a transition rule
 * (`oldSelf`) that makes a field immutable. Kubernetes 1.20 ignores these rules (crd.int.test.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/api-error.js';
import { KubeClient } from '../client/kube-client.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import { GADGET } from './testing/gadget-kind.js';

const NS = 'cel';
const VALID_SPEC = { mode: 'safe', size: '1Gi', replicas: 2, target: 'http' };

describe('CEL rules from the schema on the Kubernetes 1.36 API server', () => {
  let env: TestEnv;
  let client: KubeClient;
  let seq = 0;
  const gadget = (spec: Record<string, unknown>) => ({
    apiVersion: GADGET.apiVersion,
    kind: GADGET.kind,
    metadata: { name: `gadget-${++seq}`, namespace: NS },
    spec: { ...VALID_SPEC, ...spec },
  });

  before(async () => {
    env = await TestEnv.start({ server: 'modern', crds: [customResourceDefinition(GADGET)] });
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
  });
  after(async () => {
    await client?.close();
    await env?.stop();
  });

  test('an object that satisfies every rule is accepted', async () => {
    const created = await client.create(
      gadget({ limits: { min: 1, max: 2 }, mode: 'fast', replicas: 3, immutableName: 'a' }),
    );
    const read = await client.get(GADGET, created.metadata.name, { namespace: NS });
    assert.deepEqual(read.spec.limits, { min: 1, max: 2 });
  });

  test('a rule on an object rejects with its message, naming the field', async () => {
    await assert.rejects(
      client.create(gadget({ limits: { min: 5, max: 1 } })),
      invalid('spec.limits', 'min must not exceed max'),
    );
  });

  test('a cross-field rule on spec rejects with its message', async () => {
    await assert.rejects(
      client.create(gadget({ mode: 'fast', replicas: 5 })),
      invalid('spec', 'fast gadgets run at most 3 replicas'),
    );
  });

  test("a rule on the whole object (the version's validations) can read metadata.name", async () => {
    await assert.rejects(
      client.create({ ...gadget({}), metadata: { name: 'a-gadget-name-longer-than-thirty', namespace: NS } }),
      // A root rule has no field path; the server writes the cause's field as "<nil>".
      invalid('<nil>', 'a gadget name is at most 30 characters'),
    );
  });

  test('a transition rule (self == oldSelf) makes a field immutable on update', async () => {
    const created = await client.create(gadget({ immutableName: 'first' }));
    await assert.rejects(
      client.patch(
        GADGET,
        created.metadata.name,
        { spec: { immutableName: 'second' } },
        { namespace: NS, type: 'merge' },
      ),
      invalid('spec.immutableName', 'immutableName is immutable'),
    );
    const unchanged = await client.patch(
      GADGET,
      created.metadata.name,
      { spec: { replicas: 1 } },
      { namespace: NS, type: 'merge' },
    );
    assert.equal(unchanged.spec.immutableName, 'first');
  });
});

function invalid(field: string, message: string): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof ApiError, String(e));
    assert.equal(e.status, 422, e.message);
    assert.ok(
      e.details?.causes?.some((c) => c.field === field),
      `no cause for ${field} in ${JSON.stringify(e.details?.causes)}`,
    );
    assert.ok(
      e.message.includes(message),
      `expected the server's message to contain ${JSON.stringify(message)}: ${e.message}`,
    );
    return true;
  };
}
