/**
 * The Database operator's webhooks against the real kube-apiserver 1.20, written to with kubectl:
 * the backup-running replicas rule and engine immutability deny with their message, the backup
 * endpoint is defaulted from the operator's configuration and a foreign one refused, and a
 * v1alpha1 Database written with kubectl is stored (and reconciled) as v1 and reads back as
 * either version.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  KubeClient,
  createLogger,
  createMetricsRegistry,
  getCondition,
  isNotFound,
  type Kubeconfig,
} from 'operator-runtime';
import { customResourceDefinition } from 'operator-runtime/crd';
import {
  TestEnv,
  eventually,
  freePort,
  kubectl,
  webhookServingCertificate,
  type WebhookServingCertificate,
} from 'operator-runtime/testing';
import { Webhooks, webhookConversion, webhookManifests } from 'operator-runtime/webhook';
import { BackupService } from './testing/backup-service.js';
import { DATABASE } from './src/database.js';
import { createDatabaseOperator, type DatabaseOperator } from './src/operator.js';
import { registerDatabaseWebhooks } from './src/webhooks.js';

const NS = 'default';

describe('the Database webhooks against kube-apiserver 1.20, driven by kubectl', () => {
  let env: TestEnv;
  let client: KubeClient;
  let backups: BackupService;
  let cert: WebhookServingCertificate;
  let operator: DatabaseOperator;
  const stop = new AbortController();
  let running: Promise<void>;

  const apply = (obj: object) => kubectl(env.kubeconfigPath, ['apply', '-f', '-'], JSON.stringify(obj));
  const v1 = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'example.com/v1',
    kind: 'Database',
    metadata: { name, namespace: NS },
    spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi', ...spec },
  });
  const get = (name: string) => client.get(DATABASE, name, { namespace: NS });

  before(async () => {
    backups = new BackupService({ backupDurationMs: 4000 });
    await backups.start();
    cert = await webhookServingCertificate();
    env = await TestEnv.start({ controllerManager: true, simulatePods: { readyDelayMs: 100 } });
    // After the env's components bound theirs, so no component of it can be handed the same port.
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const registry = createMetricsRegistry();
    const build = (c: KubeClient) =>
      createDatabaseOperator({
        client: c,
        registry,
        logger: createLogger({ level: 'silent' }),
        backupEndpoint: backups.url,
        metricsPort: 0,
        healthPort: 0,
        backupPollMs: 300,
        webhook: { port, certDir: cert.dir },
      });
    // The CRD's conversion stanza comes from the same registrations the operator serves.
    const registrations = new Webhooks();
    registerDatabaseWebhooks(registrations, { defaultEndpoint: backups.url });
    const conversion = webhookConversion({ webhooks: registrations }, DATABASE, { url, caBundle: cert.caPem });
    assert.ok(conversion, 'a conversion is registered for Database');
    await env.installCrds([customResourceDefinition(DATABASE, { conversion })]);
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    operator = build(client);
    running = operator.manager.start(stop.signal);
    await eventually('the webhook server', () => operator.manager.endpoints.webhookPort === port);
    const configurations = webhookManifests(operator.manager, { name: 'database-operator', url, caBundle: cert.caPem });
    assert.deepEqual(
      configurations.map((c) => c.kind),
      ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'],
    );
    await apply({ apiVersion: 'v1', kind: 'List', items: configurations });
    // The API server picks configurations up asynchronously: wait until writes are defaulted.
    await eventually('the mutating webhook to be active', async () => {
      await apply(v1('probe'));
      return (await get('probe')).spec.backup?.endpoint === backups.url;
    });
  });

  after(async () => {
    stop.abort();
    // A manager that failed to start must not keep the env (and this process) alive.
    await running?.catch(() => undefined);
    await operator?.close();
    await client?.close();
    await backups?.stop();
    await env?.stop();
    await cert?.remove();
  });

  test("the backup endpoint is defaulted from the operator's configuration; a foreign one is refused", async () => {
    await apply(v1('plain'));
    assert.deepEqual((await get('plain')).spec.backup, { endpoint: backups.url, enabled: true });
    await assert.rejects(
      apply(v1('ssrf', { backup: { endpoint: 'http://169.254.169.254/latest/meta-data' } })),
      /admission webhook "vdatabase\.example\.com" denied the request: spec\.backup\.endpoint is not on the operator's allow-list/,
    );
  });

  test('kubectl cannot change the engine', async () => {
    await assert.rejects(
      apply(v1('plain', { engine: 'mysql', version: '8.0' })),
      /admission webhook "vdatabase\.example\.com" denied the request: spec\.engine cannot change \(postgres to mysql\)/,
    );
  });

  test('a v1alpha1 Database written with kubectl is stored and reconciled as v1; a v1 one reads back as v1alpha1', async () => {
    await apply({
      apiVersion: 'example.com/v1alpha1',
      kind: 'Database',
      metadata: { name: 'legacy', namespace: NS },
      spec: { image: 'mysql:8.0', instances: 2, storage: '1Gi' },
    });
    const asV1 = JSON.parse(
      await kubectl(env.kubeconfigPath, ['get', 'databases.v1.example.com', 'legacy', '-n', NS, '-o', 'json']),
    );
    assert.equal(asV1.apiVersion, 'example.com/v1');
    assert.deepEqual(asV1.spec, {
      engine: 'mysql',
      version: '8.0',
      replicas: 2,
      storage: '1Gi',
      backup: { endpoint: backups.url, enabled: true },
    });
    const ready = await eventually('legacy Ready', async () => {
      const d = await get('legacy');
      return d.status?.phase === 'Ready' && d.status.readyReplicas === 2 ? d : undefined;
    });
    assert.equal(ready.spec.replicas, 2);
    const asV1alpha1 = JSON.parse(
      await kubectl(env.kubeconfigPath, ['get', 'databases.v1alpha1.example.com', 'plain', '-n', NS, '-o', 'json']),
    );
    assert.equal(asV1alpha1.apiVersion, 'example.com/v1alpha1');
    assert.deepEqual(asV1alpha1.spec, {
      image: 'postgres:16',
      instances: 1,
      storage: '1Gi',
      backup: { endpoint: backups.url, enabled: true },
    });
    // Validation covers v1alpha1 writes too (converted to v1 before the webhook sees them).
    await assert.rejects(
      kubectl(env.kubeconfigPath, [
        'patch',
        'databases.v1alpha1.example.com',
        'legacy',
        '-n',
        NS,
        '--type',
        'merge',
        '-p',
        '{"spec":{"image":"postgres:16"}}',
      ]),
      /spec\.engine cannot change \(mysql to postgres\)/,
    );
  });

  test('while the backup before delete runs, kubectl cannot scale below the Ready replicas; the deletion then completes', async () => {
    await apply(v1('busy', { replicas: 3 }));
    await eventually('busy Ready with 3 replicas', async () => {
      const d = await get('busy');
      return d.status?.phase === 'Ready' && d.status.readyReplicas === 3;
    });
    await kubectl(env.kubeconfigPath, ['delete', 'databases.v1.example.com', 'busy', '-n', NS, '--wait=false']);
    await eventually(
      'the backup to run',
      async () => getCondition((await get('busy')).status?.conditions, 'BackedUp')?.reason === 'BackupRunning',
    );
    await assert.rejects(
      kubectl(env.kubeconfigPath, [
        'patch',
        'databases.v1.example.com',
        'busy',
        '-n',
        NS,
        '--type',
        'merge',
        '-p',
        '{"spec":{"replicas":1}}',
      ]),
      /admission webhook "vdatabase\.example\.com" denied the request: spec\.replicas cannot drop below the 3 Ready replicas while a backup is running \(asked: 1\)/,
    );
    // The operator's own update (removing its finalizer) passes the same webhook.
    await eventually('busy deleted', async () =>
      get('busy').then(
        () => false,
        (err: unknown) => isNotFound(err),
      ),
    );
  });
});
