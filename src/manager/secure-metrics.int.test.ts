import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { freePort } from '../testing/control-plane/free-port.js';
import { Manager } from './manager.js';
import { createSelfSignedCertificate } from '../webhook/self-signed-certificate.js';

const NS = 'metrics-auth';

/** GET over HTTPS, trusting only `ca` (the certificate the manager serves). */
function get(port: number, ca: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        ca,
        servername: 'localhost',
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (body += d))
          .on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject).end();
  });
}

describe('secure metrics against a real API server: TokenReview authenticates, SubjectAccessReview authorizes', () => {
  let env: TestEnv;
  let client: KubeClient;
  let dir: string;
  let cert: string;
  let manager: Manager;
  const stop = new AbortController();
  let running: Promise<void>;
  const tokens: Record<string, string> = {};

  before(async () => {
    env = await TestEnv.start();
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    for (const sa of ['prometheus', 'tenant']) {
      await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: NS } });
      const res = await env.request<{ status: { token: string } }>(
        'POST',
        `/api/v1/namespaces/${NS}/serviceaccounts/${sa}/token`,
        { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
      );
      assert.equal(res.status, 201, JSON.stringify(res.body));
      tokens[sa] = res.body.status.token;
    }
    // kubebuilder's metrics-reader role, bound to prometheus only.
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'metrics-reader' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-metrics-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: NS }],
    });
    // Certificate from files (the self-signed path is covered by the unit test).
    dir = await mkdtemp(join(tmpdir(), 'secure-metrics-'));
    const pair = createSelfSignedCertificate({ hosts: ['localhost', '127.0.0.1'] });
    cert = pair.cert;
    await writeFile(join(dir, 'tls.crt'), pair.cert);
    await writeFile(join(dir, 'tls.key'), pair.key, { mode: 0o600 });
    manager = new Manager({
      client,
      metricsPort: await freePort(),
      healthPort: await freePort(),
      bindHost: '127.0.0.1',
      secureMetrics: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') },
    });
    const started = new Promise<void>((resolve) =>
      manager.add({ start: async () => resolve() }, { needLeaderElection: false }),
    );
    running = manager.start(stop.signal);
    await started;
  });

  after(async () => {
    stop.abort();
    await running;
    await client?.close();
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('a token whose user has RBAC for get /metrics gets 200 with the metrics', async () => {
    const res = await get(manager.endpoints.metricsPort!, cert, tokens.prometheus);
    assert.equal(res.status, 200);
    assert.match(res.body, /^# HELP /m);
  });

  test('a valid token whose user lacks that RBAC gets 403', async () => {
    assert.equal((await get(manager.endpoints.metricsPort!, cert, tokens.tenant)).status, 403);
  });

  test('no token, or a token the API server does not know, gets 401', async () => {
    assert.equal((await get(manager.endpoints.metricsPort!, cert)).status, 401);
    assert.equal(
      (await get(manager.endpoints.metricsPort!, cert, `${tokens.prometheus!.slice(0, -4)}AAAA`)).status,
      401,
    );
  });
});
