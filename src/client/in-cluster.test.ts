import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeClock } from '../core/fake-clock.js';
import { inClusterConfig, isInCluster } from './in-cluster.js';
import { InvalidOptionError } from '../core/errors.js';
import { KubeconfigError, resolveKubeconfig } from './kubeconfig.js';
import { makeTlsConfig } from './tls-config.js';

async function saDir(namespace?: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sa-'));
  await writeFile(path.join(dir, 'token'), 'sa-token-1');
  await writeFile(path.join(dir, 'ca.crt'), 'CA-PEM');
  if (namespace !== undefined) await writeFile(path.join(dir, 'namespace'), namespace);
  return dir;
}

test('in-cluster config reads the service account token, CA and namespace, and verifies TLS', async () => {
  const dir = await saDir('ops\n');
  const cfg = await inClusterConfig({
    serviceAccountDir: dir,
    env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' },
  });
  assert.equal(cfg.server, 'https://10.96.0.1:443');
  assert.equal(cfg.tls.ca, 'CA-PEM');
  assert.equal(cfg.tls.rejectUnauthorized, true);
  assert.equal(cfg.namespace, 'ops');
  assert.deepEqual(await cfg.credential.get(), { authorization: 'Bearer sa-token-1' });
});

test('an IPv6 service host is bracketed in the URL', async () => {
  const cfg = await inClusterConfig({
    serviceAccountDir: await saDir(),
    env: { KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBERNETES_SERVICE_PORT: '6443' },
  });
  assert.equal(cfg.server, 'https://[fd00:10:96::1]:6443');
  assert.equal(new URL(cfg.server).hostname, '[fd00:10:96::1]');
  assert.equal(cfg.namespace, 'default', 'no namespace file means default');
});

test('the rotated service account token is picked up without a restart', async () => {
  const clock = new FakeClock();
  const dir = await saDir();
  const cfg = await inClusterConfig({
    serviceAccountDir: dir,
    clock,
    env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' },
  });
  await writeFile(path.join(dir, 'token'), 'sa-token-2');
  clock.step(60_000);
  assert.deepEqual(await cfg.credential.get(), { authorization: 'Bearer sa-token-2' });
});

test('outside a pod in-cluster config fails with KubeconfigError', async () => {
  assert.equal(isInCluster({}), false);
  await assert.rejects(inClusterConfig({ env: {} }), KubeconfigError);
});

test('regression: an empty ca.crt is refused at start, naming the file and no credential (it fell back to the public roots)', async () => {
  for (const empty of ['', '\n  \n']) {
    const dir = await saDir();
    await writeFile(path.join(dir, 'ca.crt'), empty);
    await assert.rejects(
      inClusterConfig({ serviceAccountDir: dir, env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' } }),
      (err: unknown) => {
        assert.ok(err instanceof KubeconfigError);
        assert.ok(err.message.includes(path.join(dir, 'ca.crt')), err.message);
        assert.match(err.message, /empty/);
        assert.ok(!err.message.includes('sa-token-1'), 'no credential in the message');
        return true;
      },
    );
  }
});

test('regression: a blank CA handed to makeTlsConfig, or an empty kubeconfig certificate-authority file, is refused', async () => {
  assert.throws(() => makeTlsConfig({ ca: ' \n', rejectUnauthorized: true }), InvalidOptionError);
  assert.equal(makeTlsConfig({ rejectUnauthorized: true }).ca, undefined, 'no CA at all still means the system roots');
  const dir = await mkdtemp(path.join(tmpdir(), 'kc-ca-'));
  const caFile = path.join(dir, 'ca.crt');
  await writeFile(caFile, '');
  const kc = {
    'current-context': 'c',
    contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
    clusters: [{ name: 'k', cluster: { server: 'https://k8s:6443', 'certificate-authority': caFile } }],
    users: [{ name: 'u', user: { token: 'kc-secret-token' } }],
  };
  await assert.rejects(resolveKubeconfig(kc), (err: unknown) => {
    assert.ok(err instanceof KubeconfigError);
    assert.ok(err.message.includes(caFile) && !err.message.includes('kc-secret-token'), err.message);
    return true;
  });
});
