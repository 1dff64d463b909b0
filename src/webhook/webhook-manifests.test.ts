import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kind } from '../client/kind.js';
import { InvalidOptionError } from '../core/errors.js';
import type { KubeObject } from '../core/object-key.js';
import { spoke } from './handlers.js';
import { CERT_MANAGER_INJECT_CA_ANNOTATION, webhookConversion, webhookManifests } from './webhook-manifests.js';
import { Webhooks } from './webhooks.js';

const DB = { ...kind<KubeObject>('example.com/v1', 'Database'), plural: 'databases', scope: 'Namespaced' as const };
const DB_V1ALPHA1 = kind<KubeObject>('example.com/v1alpha1', 'Database');

function source(): { webhooks: Webhooks } {
  const webhooks = new Webhooks();
  webhooks.validate(DB, () => undefined, { operations: ['CREATE', 'UPDATE', 'DELETE'], failurePolicy: 'Ignore' });
  webhooks.mutate(DB, (o) => o, { timeoutSeconds: 5 });
  webhooks.convert(DB, { hub: DB, spokes: [spoke(DB_V1ALPHA1, { toHub: (o) => o, fromHub: (o) => o })] });
  return { webhooks };
}

describe('webhook manifests from the registrations', () => {
  test('URL + caBundle (TestEnv): one Validating and one Mutating configuration with rules from the kind', () => {
    const [validating, mutating] = webhookManifests(source(), {
      name: 'db',
      url: 'https://127.0.0.1:9443',
      caBundle: 'PEM',
      namespaceSelector: { matchLabels: { team: 'a' } },
    });
    const clientConfig = (path: string) => ({
      url: `https://127.0.0.1:9443${path}`,
      caBundle: Buffer.from('PEM').toString('base64'),
    });
    assert.deepEqual(validating, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'db-validating' },
      webhooks: [
        {
          name: 'vdatabase.example.com',
          clientConfig: clientConfig('/validate-example-com-v1-database'),
          rules: [
            {
              apiGroups: ['example.com'],
              apiVersions: ['v1'],
              resources: ['databases'],
              operations: ['CREATE', 'UPDATE', 'DELETE'],
              scope: 'Namespaced',
            },
          ],
          failurePolicy: 'Ignore',
          matchPolicy: 'Equivalent',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 10,
          namespaceSelector: { matchLabels: { team: 'a' } },
        },
      ],
    });
    assert.equal(mutating?.kind, 'MutatingWebhookConfiguration');
    assert.deepEqual(
      mutating?.webhooks.map((w) => [
        w.name,
        w.failurePolicy,
        w.timeoutSeconds,
        w.clientConfig.url,
        w.rules[0]!.operations,
      ]),
      [
        [
          'mdatabase.example.com',
          'Fail',
          5,
          'https://127.0.0.1:9443/mutate-example-com-v1-database',
          ['CREATE', 'UPDATE'],
        ],
      ],
    );
  });

  test('Service + cert-manager (Kustomize base): service reference, no caBundle, the inject-ca-from annotation', () => {
    const [validating] = webhookManifests(source(), {
      name: 'db',
      service: { name: 'db-webhook', namespace: 'db-system' },
      certManagerCertificate: 'db-system/db-serving-cert',
    });
    assert.deepEqual(validating!.metadata, {
      name: 'db-validating',
      annotations: { [CERT_MANAGER_INJECT_CA_ANNOTATION]: 'db-system/db-serving-cert' },
    });
    assert.deepEqual(validating!.webhooks[0]!.clientConfig, {
      service: { name: 'db-webhook', namespace: 'db-system', path: '/validate-example-com-v1-database' },
    });
  });

  test('the CRD conversion stanza: strategy Webhook at /convert, ConversionReview v1; none for a kind without a conversion', () => {
    assert.deepEqual(
      webhookConversion(source(), DB_V1ALPHA1, { service: { name: 'db-webhook', namespace: 'db-system', port: 443 } }),
      {
        strategy: 'Webhook',
        webhook: {
          clientConfig: { service: { name: 'db-webhook', namespace: 'db-system', path: '/convert', port: 443 } },
          conversionReviewVersions: ['v1'],
        },
      },
    );
    assert.equal(
      webhookConversion(source(), kind('example.com/v1', 'Other'), { url: 'https://127.0.0.1:1' }),
      undefined,
    );
  });

  test('exactly one of service and url; a url is scheme, host and port only', () => {
    assert.throws(() => webhookManifests(source(), { name: 'db' }), InvalidOptionError);
    assert.throws(
      () => webhookManifests(source(), { name: 'db', url: 'https://a:1', service: { name: 's', namespace: 'n' } }),
      /exactly one/,
    );
    assert.throws(() => webhookManifests(source(), { name: 'db', url: 'http://a:1' }), /https:\/\/host:port/);
    assert.throws(() => webhookManifests(source(), { name: 'db', url: 'https://a:1/path' }), /no path/);
  });

  test('nothing registered: no configuration', () => {
    assert.deepEqual(webhookManifests({ webhooks: new Webhooks() }, { name: 'db', url: 'https://a:1' }), []);
  });
});
