import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kind } from '../client/kind.js';
import { kinds } from '../client/kinds.js';
import type { KubeObject } from '../core/object-key.js';
import { WebhookRegistrationError } from './errors.js';
import { spoke } from './handlers.js';
import { guessPlural } from './kind-resource.js';
import { Webhooks } from './webhooks.js';

const V1 = kind<KubeObject>('example.com/v1', 'Database');
const V1ALPHA1 = kind<KubeObject>('example.com/v1alpha1', 'Database');

describe('webhook registrations', () => {
  test('paths and names follow kubebuilder: /validate-<group>-<version>-<kind>, v<kind>.<group>', () => {
    const w = new Webhooks();
    w.validate(V1, () => undefined);
    w.mutate(V1, (o) => o);
    w.validate(kinds.ConfigMap, () => undefined);
    assert.deepEqual(
      w.admissionWebhooks().map((r) => [r.type, r.path, r.name, r.target.resource]),
      [
        ['validating', '/validate-example-com-v1-database', 'vdatabase.example.com', 'databases'],
        ['mutating', '/mutate-example-com-v1-database', 'mdatabase.example.com', 'databases'],
        ['validating', '/validate-core-v1-configmap', 'vconfigmap.core.k8s.io', 'configmaps'],
      ],
    );
  });

  test('a kind that carries its plural and scope (custom kinds from operator-runtime/crd) is taken at its word', () => {
    const w = new Webhooks();
    w.validate(
      { apiVersion: 'example.com/v1', kind: 'Octopus', plural: 'octopodes', scope: 'Cluster' } as ReturnType<
        typeof kind
      >,
      () => undefined,
    );
    assert.deepEqual(w.admissionWebhooks()[0]!.target, {
      group: 'example.com',
      version: 'v1',
      kind: 'Octopus',
      resource: 'octopodes',
      scope: 'Cluster',
    });
  });

  test('plurals are guessed as kube does', () => {
    assert.deepEqual(['Policy', 'Ingress', 'Pod', 'Endpoints', 'Key', 'Box'].map(guessPlural), [
      'policies',
      'ingresses',
      'pods',
      'endpoints',
      'keys',
      'boxes',
    ]);
  });

  test('two handlers on one path, bad names, mutating DELETE and out-of-range timeouts are refused when registered', () => {
    const w = new Webhooks();
    w.validate(V1, () => undefined);
    assert.throws(() => w.validate(V1, () => undefined), WebhookRegistrationError);
    assert.throws(
      () => w.validate(V1, () => undefined, { path: '/other', name: 'short.name' }),
      /at least three segments/,
    );
    assert.throws(() => w.mutate(V1, (o) => o, { operations: ['DELETE'] }), /cannot change a DELETE/);
    assert.throws(() => w.validate(V1, () => undefined, { path: '/x', timeoutSeconds: 31 }), /1 to 30/);
    assert.throws(() => w.validate(V1, () => undefined, { path: '/convert' }), /not be \/convert/);
  });

  test('a conversion must name versions of one kind, each once', () => {
    const w = new Webhooks();
    const identity = { toHub: (o: KubeObject) => o, fromHub: (o: KubeObject) => o };
    assert.throws(
      () => w.convert(V1, { hub: kind('other.com/v1', 'Database'), spokes: [] }),
      /not a version of Database.example.com/,
    );
    assert.throws(
      () => w.convert(V1, { hub: V1, spokes: [spoke(kind('example.com/v2', 'Table'), identity)] }),
      /not a version/,
    );
    assert.throws(() => w.convert(V1, { hub: V1, spokes: [spoke(V1, identity)] }), /given twice/);
    w.convert(V1, { hub: V1, spokes: [spoke(V1ALPHA1, identity)] });
    assert.throws(() => w.convert(V1ALPHA1, { hub: V1, spokes: [] }), /already registered/);
    assert.deepEqual([...w.conversionFor('example.com', 'Database')!.spokes.keys()], ['v1alpha1']);
    assert.equal(w.size, 1);
  });
});
