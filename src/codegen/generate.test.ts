/**
 * The generators as functions: the hardened Deployment, the metrics Service and NetworkPolicy, the
 * kustomization, determinism, and what a manager with webhooks adds (webhooks.yaml, the CRD's
 * conversion stanza with cert-manager's CA annotation, the mounted serving certificate).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { NetworkPolicy } from 'kubernetes-types/networking/v1.js';
import { parseAllDocuments } from 'yaml';
import { kinds } from '../client/kinds.js';
import type { ObjectOf } from '../client/kind.js';
import { defineCustomKind, Type } from '../crd/index.js';
import { Manager } from '../manager/manager.js';
import { offlineClient } from '../rbac/offline-client.js';
import { spoke } from '../webhook/handlers.js';
import { defineConfig, type OperatorProjectConfig } from './config.js';
import {
  generateCrds,
  generateManifests,
  generateRbac,
  validateProjectConfig,
  type GeneratedFile,
} from './generate.js';
import { DEFAULT_WEBHOOK_INGRESS_FROM } from './webhook-serving-manifests.js';

const GADGET = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Gadget', plural: 'gadgets' },
  scope: 'Namespaced',
  versions: [
    { name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ size: Type.Integer() }) } },
    { name: 'v1alpha1', served: true, storage: false, schema: { spec: Type.Object({ size: Type.String() }) } },
  ],
});
type GadgetV1 = ObjectOf<typeof GADGET>;
const GADGET_V1ALPHA1 = GADGET.version('v1alpha1');
type GadgetV1alpha1 = ObjectOf<typeof GADGET_V1ALPHA1>;
const toHub = (o: GadgetV1alpha1): GadgetV1 => ({
  ...o,
  apiVersion: 'example.com/v1',
  spec: { size: Number(o.spec.size) },
});
const fromHub = (h: GadgetV1): GadgetV1alpha1 => ({
  ...h,
  apiVersion: 'example.com/v1alpha1',
  spec: { size: String(h.spec.size) },
});
const WIDGET = defineCustomKind({
  group: 'example.com',
  names: { kind: 'Widget', plural: 'widgets' },
  scope: 'Cluster',
  versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({}) } }],
});

function project(options: { webhooks?: boolean; kinds?: OperatorProjectConfig['kinds'] } = {}): OperatorProjectConfig {
  return defineConfig({
    name: 'gadget-operator',
    namespace: 'gadget-system',
    image: 'example.com/gadget-operator:1.0.0',
    kinds: options.kinds ?? [GADGET, WIDGET],
    manager: () => {
      const manager = new Manager({
        client: offlineClient(),
        ...(options.webhooks ? { webhook: { port: 9443, certDir: '/tmp/k8s-webhook-server/serving-certs' } } : {}),
      });
      manager
        .controller('gadget')
        .for(GADGET)
        .owns(kinds.ConfigMap)
        .writes(kinds.ConfigMap, ['create'])
        .complete(async () => undefined);
      if (options.webhooks) {
        manager.webhooks.validate(GADGET, () => ({ allowed: true }));
        manager.webhooks.convert(GADGET, {
          hub: GADGET,
          spokes: [spoke<GadgetV1, GadgetV1alpha1>(GADGET_V1ALPHA1, { toHub, fromHub })],
        });
      }
      return manager;
    },
    deployment: { env: [{ name: 'LOG_LEVEL', value: 'debug' }] },
  });
}

const docs = (file: GeneratedFile | undefined) =>
  parseAllDocuments(file?.content ?? '').map(
    (d) =>
      d.toJS() as {
        kind: string;
        metadata: { name: string; annotations?: Record<string, string> };
        spec?: Record<string, unknown>;
      },
  );
const byPath = (files: readonly GeneratedFile[], path: string) => files.find((f) => f.path === path);

describe('generateManifests', () => {
  test('the Deployment runs hardened: non-root 65532, read-only root filesystem, no capabilities, RuntimeDefault seccomp, no privilege escalation, probes', async () => {
    const files = await generateManifests(project());
    const deployment = docs(byPath(files, 'deployment.yaml')).find(
      (o) => o.kind === 'Deployment',
    ) as unknown as Deployment;
    const pod = deployment.spec!.template.spec!;
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const container = pod.containers[0]!;
    assert.deepEqual(container.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    assert.equal(container.image, 'example.com/gadget-operator:1.0.0');
    assert.deepEqual(container.env, [{ name: 'LOG_LEVEL', value: 'debug' }]);
    assert.equal(container.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(container.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(pod.serviceAccountName, 'gadget-operator');
    assert.equal(pod.volumes, undefined, 'no webhook certificate without webhooks');
  });

  test('files in apply order, listed by kustomization.yaml (health/ beside it, not listed); the NetworkPolicy admits only the metrics port', async () => {
    const files = await generateManifests(project());
    assert.deepEqual(
      files.map((f) => f.path),
      [
        'crd.yaml',
        'rbac.yaml',
        'deployment.yaml',
        'health/flux-health-checks.yaml',
        'health/argocd-cm.yaml',
        'kustomization.yaml',
      ],
    );
    assert.deepEqual(docs(byPath(files, 'kustomization.yaml'))[0], {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['crd.yaml', 'rbac.yaml', 'deployment.yaml'],
    });
    assert.deepEqual(
      docs(byPath(files, 'crd.yaml')).map((o) => o.metadata.name),
      ['gadgets.example.com', 'widgets.example.com'],
    );
    const policy = docs(byPath(files, 'deployment.yaml')).find(
      (o) => o.kind === 'NetworkPolicy',
    ) as unknown as NetworkPolicy;
    assert.deepEqual(policy.spec?.ingress, [
      {
        from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);
    for (const file of files)
      assert.match(
        file.content,
        /^# Generated by operator-runtime - do not edit\.\n# Regenerate: npx operator-runtime generate manifests\n/,
        file.path,
      );
  });

  test('deterministic: the same config gives the same bytes, whatever the order of kinds', async () => {
    const a = await generateManifests(project());
    const b = await generateManifests(project({ kinds: [WIDGET, GADGET] }));
    assert.deepEqual(a, b);
  });

  test('generateCrds and generateRbac give the same files as generateManifests', async () => {
    const all = await generateManifests(project({ webhooks: true }));
    assert.deepEqual(await generateCrds(project({ webhooks: true })), [byPath(all, 'crd.yaml')]);
    assert.deepEqual(await generateRbac(project({ webhooks: true })), [byPath(all, 'rbac.yaml')]);
  });

  test('with webhooks: their configurations, Service and cert-manager certificate; the CRD converts through the webhook; the Deployment mounts the certificate', async () => {
    const files = await generateManifests(project({ webhooks: true }));
    assert.deepEqual(
      files.map((f) => f.path),
      [
        'crd.yaml',
        'rbac.yaml',
        'deployment.yaml',
        'webhooks.yaml',
        'health/flux-health-checks.yaml',
        'health/argocd-cm.yaml',
        'kustomization.yaml',
      ],
    );
    const webhooks = docs(byPath(files, 'webhooks.yaml'));
    assert.deepEqual(
      webhooks.map((o) => `${o.kind}/${o.metadata.name}`),
      [
        'ValidatingWebhookConfiguration/gadget-operator-validating',
        'Service/gadget-operator-webhook',
        'NetworkPolicy/gadget-operator-allow-webhook',
        'Issuer/gadget-operator-selfsigned',
        'Certificate/gadget-operator-serving-cert',
      ],
    );
    assert.equal(
      webhooks[0]!.metadata.annotations?.['cert-manager.io/inject-ca-from'],
      'gadget-system/gadget-operator-serving-cert',
    );
    const crds = docs(byPath(files, 'crd.yaml'));
    const gadget = crds.find((o) => o.metadata.name === 'gadgets.example.com')!;
    assert.equal(
      gadget.metadata.annotations?.['cert-manager.io/inject-ca-from'],
      'gadget-system/gadget-operator-serving-cert',
    );
    assert.deepEqual(gadget.spec?.conversion, {
      strategy: 'Webhook',
      webhook: {
        clientConfig: {
          service: { name: 'gadget-operator-webhook', namespace: 'gadget-system', path: '/convert', port: 443 },
        },
        conversionReviewVersions: ['v1'],
      },
    });
    assert.equal(
      crds.find((o) => o.metadata.name === 'widgets.example.com')!.spec?.conversion,
      undefined,
      'no conversion registered for Widget',
    );
    const deployment = docs(byPath(files, 'deployment.yaml')).find(
      (o) => o.kind === 'Deployment',
    ) as unknown as Deployment;
    const pod = deployment.spec!.template.spec!;
    assert.deepEqual(pod.volumes, [
      { name: 'webhook-cert', secret: { secretName: 'gadget-operator-webhook-server-cert' } },
    ]);
    assert.deepEqual(pod.containers[0]!.volumeMounts, [
      { name: 'webhook-cert', mountPath: '/tmp/k8s-webhook-server/serving-certs', readOnly: true },
    ]);
    assert.deepEqual(
      pod.containers[0]!.ports?.map((p) => `${p.name}:${p.containerPort}`),
      ['metrics:8080', 'health:8081', 'webhook:9443'],
    );
    const policy = docs(byPath(files, 'deployment.yaml')).find(
      (o) => o.kind === 'NetworkPolicy',
    ) as unknown as NetworkPolicy;
    assert.equal(
      policy.spec?.ingress?.length,
      1,
      'the metrics policy no longer opens the webhook port to every source',
    );
    const webhookPolicy = webhooks.find((o) => o.kind === 'NetworkPolicy') as unknown as NetworkPolicy;
    assert.deepEqual(webhookPolicy.spec?.podSelector, { matchLabels: { 'app.kubernetes.io/name': 'gadget-operator' } });
    assert.deepEqual(webhookPolicy.spec?.ingress, [
      { from: DEFAULT_WEBHOOK_INGRESS_FROM, ports: [{ port: 9443, protocol: 'TCP' }] },
    ]);
    assert.ok(
      webhookPolicy.spec!.ingress!.every((rule) => rule.from?.length),
      'every rule names its sources (an empty from admits all)',
    );
    const narrowed = await generateManifests({
      ...project({ webhooks: true }),
      deployment: { webhookIngressFrom: [{ ipBlock: { cidr: '172.18.0.0/16' } }] },
    });
    const narrowedPolicy = docs(byPath(narrowed, 'webhooks.yaml')).find(
      (o) => o.kind === 'NetworkPolicy',
    ) as unknown as NetworkPolicy;
    assert.deepEqual(narrowedPolicy.spec?.ingress?.[0]?.from, [{ ipBlock: { cidr: '172.18.0.0/16' } }]);
    await assert.rejects(
      generateManifests({ ...project({ webhooks: true }), deployment: { webhookIngressFrom: [] } }),
      /webhookIngressFrom: must name at least one source/,
    );
  });

  test('comments and the regenerate command come from the config', async () => {
    const files = await generateManifests({
      ...project(),
      regenerate: 'make manifests',
      comments: { crds: ['Gadgets and Widgets.'] },
    });
    assert.match(
      byPath(files, 'crd.yaml')!.content,
      /^# Generated by operator-runtime - do not edit\.\n# Regenerate: make manifests\n# Gadgets and Widgets\.\napiVersion/,
    );
  });
});

describe('validateProjectConfig', () => {
  test('names the first wrong field', () => {
    const base = project();
    const cases: [Partial<OperatorProjectConfig>, RegExp][] = [
      [{ name: 'Gadget' }, /config\.name: must be a DNS label/],
      [{ namespace: 'a'.repeat(64) }, /config\.namespace/],
      [{ image: 'gadget' }, /config\.image: must name a tag or digest/],
      [{ image: 'registry:5000/gadget' }, /config\.image: must name a tag or digest/],
      [{ image: 'gadget:latest' }, /config\.image: must not use :latest/],
      [{ regenerate: 'a\nb' }, /config\.regenerate: must be one line/],
      [{ outDir: '' }, /config\.outDir/],
    ];
    for (const [override, message] of cases)
      assert.throws(() => validateProjectConfig({ ...base, ...override }), message);
    assert.doesNotThrow(() =>
      validateProjectConfig({ ...base, image: 'registry:5000/team/gadget@sha256:' + 'a'.repeat(64) }),
    );
  });
});
