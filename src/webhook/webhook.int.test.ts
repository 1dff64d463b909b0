/**
 * Webhooks against the real kube-apiserver 1.20 (TestEnv), written to by kubectl, an independent
 * client: denial with the handler's message, a mutation on the stored object, conversion both
 * ways (an int64 beyond 2^53 stored and read back byte for byte), certificate rotation without a restart, and the webhook down under failurePolicy Fail
 * and Ignore, with the operator recovering when it is back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:tls';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { kind } from '../client/kind.js';
import type { KubeObject } from '../core/object-key.js';
import { patchStatus } from '../helpers/status.js';
import { Manager } from '../manager/manager.js';
import { createMetricsRegistry } from '../metrics/create-metrics-registry.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { freePort } from '../testing/control-plane/free-port.js';
import { kubectl } from '../testing/control-plane/kubectl.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import {
  webhookServingCertificate,
  type WebhookServingCertificate,
} from '../testing/control-plane/webhook-certificate.js';
import { deny, spoke, type FailurePolicy } from './handlers.js';
import { webhookConversion, webhookManifests } from './webhook-manifests.js';

const GROUP = 'webhook.example.com';
interface Widget extends KubeObject {
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string> };
  spec: { replicas: number; image: { name: string; tag: string }; color?: string };
  status?: { phase?: string };
}
interface WidgetV1alpha1 extends KubeObject {
  spec: { size: number; image: string; color?: string };
}
const WIDGET = { ...kind<Widget>(`${GROUP}/v1`, 'Widget'), plural: 'widgets', scope: 'Namespaced' as const };
const WIDGET_V1ALPHA1 = kind<WidgetV1alpha1>(`${GROUP}/v1alpha1`, 'Widget');

const NS = `wh-${randomBytes(3).toString('hex')}`;

function crd(conversion: unknown): object {
  const props = (spec: Record<string, unknown>) => ({
    type: 'object',
    properties: {
      spec: { type: 'object', properties: spec },
      status: { type: 'object', properties: { phase: { type: 'string' } } },
    },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      conversion,
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: props({
              replicas: { type: 'integer' },
              image: { type: 'object', properties: { name: { type: 'string' }, tag: { type: 'string' } } },
              color: { type: 'string' },
              limit: { type: 'integer' },
            }),
          },
        },
        {
          name: 'v1alpha1',
          served: true,
          storage: false,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: props({
              size: { type: 'integer' },
              image: { type: 'string' },
              color: { type: 'string' },
              limit: { type: 'integer' },
            }),
          },
        },
      ],
    },
  };
}

/** A manager with the widget webhooks and a controller that marks each widget Seen. */
function widgetManager(client: KubeClient, port: number, certDir: string): Manager {
  const manager = new Manager({
    client,
    metricsPort: 0,
    healthPort: 0,
    registry: createMetricsRegistry(),
    webhook: { port, certDir, certPollIntervalMs: 500 },
    namespaces: [NS],
  });
  manager.webhooks.validate(WIDGET, (obj) =>
    obj.spec.replicas > 5 ? deny(`replicas must be at most 5 (got ${obj.spec.replicas})`) : undefined,
  );
  manager.webhooks.mutate(WIDGET, (obj) => {
    obj.spec.color ??= 'blue';
    return obj;
  });
  manager.webhooks.convert(WIDGET, {
    hub: WIDGET,
    spokes: [
      spoke(WIDGET_V1ALPHA1, {
        toHub: (o): Widget => {
          const colon = o.spec.image.lastIndexOf(':');
          const { size, image, ...rest } = o.spec;
          return {
            ...o,
            metadata: { ...o.metadata, name: o.metadata?.name ?? '', namespace: o.metadata?.namespace ?? '' },
            spec: { ...rest, replicas: size, image: { name: image.slice(0, colon), tag: image.slice(colon + 1) } },
          };
        },
        fromHub: (h): WidgetV1alpha1 => {
          const { replicas, image, ...rest } = h.spec;
          return { ...h, spec: { ...rest, size: replicas, image: `${image.name}:${image.tag}` } };
        },
      }),
    ],
  });
  manager
    .controller('widget')
    .for(WIDGET)
    .complete(async (_req, ctx) => {
      const w = await ctx.get();
      if (!w || w.status?.phase === 'Seen') return;
      await patchStatus(client, w, { phase: 'Seen' });
    });
  return manager;
}

/** Whether a TLS client trusting only `ca` completes a handshake with the webhook port. */
function handshakes(port: number, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('webhooks against kube-apiserver 1.20, driven by kubectl', () => {
  let env: TestEnv;
  let client: KubeClient;
  let cert: WebhookServingCertificate;
  let port: number;
  let manager: Manager;
  let stop: AbortController;
  let running: Promise<void>;

  const startManager = (): void => {
    manager = widgetManager(client, port, cert.dir);
    stop = new AbortController();
    running = manager.start(stop.signal);
  };
  const url = () => `https://127.0.0.1:${port}`;
  /** Applies the configurations the way the CLI generates them, trusting the certificate now served. */
  const applyConfiguration = async (failurePolicy: FailurePolicy = 'Fail'): Promise<void> => {
    const objects = webhookManifests(manager, {
      name: 'widgets',
      url: url(),
      caBundle: cert.caPem,
      failurePolicy,
      namespaceSelector: { matchLabels: { 'webhook-test': NS } },
    });
    await kubectl(
      env.kubeconfigPath,
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
    );
    await kubectl(
      env.kubeconfigPath,
      ['apply', '-f', '-'],
      JSON.stringify(crd(webhookConversion(manager, WIDGET, { url: url(), caBundle: cert.caPem }))),
    );
  };
  const widgetYaml = (name: string, spec: Record<string, unknown>, version = 'v1') =>
    JSON.stringify({ apiVersion: `${GROUP}/${version}`, kind: 'Widget', metadata: { name, namespace: NS }, spec });
  const get = (name: string) => client.get(WIDGET, name, { namespace: NS });

  before(async () => {
    env = await TestEnv.start();
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    cert = await webhookServingCertificate();
    port = await freePort();
    await client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: NS, labels: { 'webhook-test': NS } },
    });
    // The CRD (its conversion stanza generated from the registrations) before the manager's caches list it.
    await env.installCrds([
      crd(webhookConversion(widgetManager(client, port, cert.dir), WIDGET, { url: url(), caBundle: cert.caPem })),
    ]);
    startManager();
    await eventually('webhook server listening', () => manager.endpoints.webhookPort === port);
    await applyConfiguration();
  });

  after(async () => {
    stop?.abort();
    await running?.catch(() => undefined);
    await client?.close();
    await env?.stop();
    await cert?.remove();
  });

  test("kubectl is denied with the handler's message", async () => {
    const err = await eventually('the validating webhook to be active', async () => {
      try {
        await kubectl(
          env.kubeconfigPath,
          ['create', '-f', '-'],
          widgetYaml('too-big', { replicas: 9, image: { name: 'nginx', tag: '1' } }),
        );
        await kubectl(env.kubeconfigPath, ['delete', 'widgets.v1.webhook.example.com', 'too-big', '-n', NS]);
        return undefined;
      } catch (e) {
        return e instanceof Error ? e : undefined;
      }
    });
    assert.match(
      err.message,
      /admission webhook "vwidget\.webhook\.example\.com" denied the request: replicas must be at most 5 \(got 9\)/,
    );
  });

  test('a mutation is visible on the stored object', async () => {
    await kubectl(
      env.kubeconfigPath,
      ['create', '-f', '-'],
      widgetYaml('defaulted', { replicas: 1, image: { name: 'nginx', tag: '1' } }),
    );
    assert.equal((await get('defaulted')).spec.color, 'blue');
    const viaKubectl = JSON.parse(
      await kubectl(env.kubeconfigPath, ['get', 'widgets.v1.webhook.example.com', 'defaulted', '-n', NS, '-o', 'json']),
    );
    assert.equal(viaKubectl.spec.color, 'blue');
  });

  test('a v1alpha1 object written with kubectl reads back as v1, and a v1 object as v1alpha1', async () => {
    await kubectl(
      env.kubeconfigPath,
      ['create', '-f', '-'],
      widgetYaml('old-style', { size: 2, image: 'registry:5000/db:15.4' }, 'v1alpha1'),
    );
    const asV1 = JSON.parse(
      await kubectl(env.kubeconfigPath, ['get', 'widgets.v1.webhook.example.com', 'old-style', '-n', NS, '-o', 'json']),
    );
    assert.equal(asV1.apiVersion, `${GROUP}/v1`);
    // The mutation (registered for v1) applied to the v1alpha1 write too: matchPolicy Equivalent.
    assert.deepEqual(asV1.spec, { replicas: 2, image: { name: 'registry:5000/db', tag: '15.4' }, color: 'blue' });
    await kubectl(
      env.kubeconfigPath,
      ['create', '-f', '-'],
      widgetYaml('new-style', { replicas: 3, image: { name: 'nginx', tag: '1.27' } }),
    );
    const asV1alpha1 = JSON.parse(
      await kubectl(env.kubeconfigPath, [
        'get',
        'widgets.v1alpha1.webhook.example.com',
        'new-style',
        '-n',
        NS,
        '-o',
        'json',
      ]),
    );
    assert.equal(asV1alpha1.apiVersion, `${GROUP}/v1alpha1`);
    assert.deepEqual(asV1alpha1.spec, { size: 3, image: 'nginx:1.27', color: 'blue' });
    // Validation applies to v1alpha1 writes as well (converted to v1 first).
    await assert.rejects(
      kubectl(
        env.kubeconfigPath,
        ['create', '-f', '-'],
        widgetYaml('old-too-big', { size: 8, image: 'a:b' }, 'v1alpha1'),
      ),
      /replicas must be at most 5 \(got 8\)/,
    );
  });

  test('an int64 beyond 2^53 written as v1alpha1 is converted, mutated and stored byte for byte, and reads back so as v1alpha1', async () => {
    // kubectl (Go) keeps int64 exactly; JSON.parse would have made it 9223372036854776000.
    const body = widgetYaml('big-limit', { size: 1, image: 'a:b', limit: 1 }, 'v1alpha1').replace(
      '"limit":1',
      '"limit":9223372036854775807',
    );
    await kubectl(env.kubeconfigPath, ['create', '-f', '-'], body);
    // v1 is the storage version: read as v1, the object is what was stored (no conversion on the way out).
    const stored = await kubectl(env.kubeconfigPath, [
      'get',
      'widgets.v1.webhook.example.com',
      'big-limit',
      '-n',
      NS,
      '-o',
      'json',
    ]);
    assert.match(stored, /"limit": 9223372036854775807\b/);
    assert.match(stored, /"color": "blue"/, 'the mutator ran on it');
    const asV1alpha1 = await kubectl(env.kubeconfigPath, [
      'get',
      'widgets.v1alpha1.webhook.example.com',
      'big-limit',
      '-n',
      NS,
      '-o',
      'json',
    ]);
    assert.match(asV1alpha1, /"limit": 9223372036854775807\b/);
    await kubectl(env.kubeconfigPath, [
      'patch',
      'widgets.v1alpha1.webhook.example.com',
      'big-limit',
      '-n',
      NS,
      '--type',
      'merge',
      '-p',
      '{"spec":{"limit":1733079000123456789}}',
    ]);
    assert.match(
      await kubectl(env.kubeconfigPath, ['get', 'widgets.v1.webhook.example.com', 'big-limit', '-n', NS, '-o', 'json']),
      /"limit": 1733079000123456789\b/,
    );
  });

  test("requests are counted with controller-runtime's metric names", async () => {
    const text = await manager.registry.metrics();
    for (const path of [
      '/validate-webhook-example-com-v1-widget',
      '/mutate-webhook-example-com-v1-widget',
      '/convert',
    ]) {
      assert.match(
        text,
        new RegExp(`controller_runtime_webhook_requests_total\\{webhook="${path}",code="200"\\} [1-9]`),
      );
      assert.match(text, new RegExp(`controller_runtime_webhook_latency_seconds_count\\{webhook="${path}"\\} [1-9]`));
    }
  });

  test('a rotated certificate is served without a restart, and the API server trusts it once the caBundle follows', async () => {
    const before = manager;
    const oldCa = cert.caPem;
    const newCa = await cert.rotate();
    await eventually('the new certificate to be served', () => handshakes(port, newCa), { timeoutMs: 15_000 });
    assert.equal(await handshakes(port, oldCa), false, 'the old certificate is no longer served');
    // What cert-manager's CA injector does: the configurations and the CRD get the new CA.
    await applyConfiguration();
    await eventually('writes to go through the webhook with the new certificate', async () => {
      const name = `rotated-${randomBytes(2).toString('hex')}`;
      await kubectl(
        env.kubeconfigPath,
        ['create', '-f', '-'],
        widgetYaml(name, { replicas: 1, image: { name: 'a', tag: 'b' } }),
      );
      return (await get(name)).spec.color === 'blue';
    });
    assert.equal(manager, before, 'same manager, never restarted');
  });

  test('webhook down: Fail blocks writes, Ignore lets them through, and the operator recovers when it is back', async () => {
    await eventually('every widget Seen', async () =>
      (await client.list(WIDGET, { namespace: NS })).items.every((w) => w.status?.phase === 'Seen'),
    );
    stop.abort();
    await running;
    await assert.rejects(
      kubectl(
        env.kubeconfigPath,
        ['create', '-f', '-'],
        widgetYaml('while-down', { replicas: 1, image: { name: 'a', tag: 'b' } }),
      ),
      /failed calling webhook/,
    );
    await applyConfiguration('Ignore');
    await eventually('Ignore to let writes through', async () => {
      await kubectl(
        env.kubeconfigPath,
        ['create', '-f', '-'],
        widgetYaml('while-down', { replicas: 9, image: { name: 'a', tag: 'b' } }),
      );
      return true;
    });
    const unmutated = await get('while-down');
    assert.equal(unmutated.spec.color, undefined, 'nobody defaulted it');
    assert.equal(unmutated.status?.phase, undefined, 'nobody reconciled it');

    startManager();
    await eventually(
      'the widget written while the webhook was down to be reconciled',
      async () => (await get('while-down')).status?.phase === 'Seen',
    );
    await applyConfiguration('Fail');
    await eventually('writes to be validated and mutated again', async () => {
      await kubectl(
        env.kubeconfigPath,
        ['create', '-f', '-'],
        widgetYaml('after', { replicas: 1, image: { name: 'a', tag: 'b' } }),
      );
      return (await get('after')).spec.color === 'blue';
    });
    await assert.rejects(
      kubectl(
        env.kubeconfigPath,
        ['create', '-f', '-'],
        widgetYaml('after-too-big', { replicas: 6, image: { name: 'a', tag: 'b' } }),
      ),
      /replicas must be at most 5/,
    );
  });
});
