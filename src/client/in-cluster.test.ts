import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeClock } from '../core/fake-clock.js';
import { inClusterConfig, isInCluster } from './in-cluster.js';
import { KubeconfigError } from './kubeconfig.js';

async function saDir(namespace?: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sa-'));
  await writeFile(path.join(dir, 'token'), 'sa-token-1');
  await writeFile(path.join(dir, 'ca.crt'), 'CA-PEM');
  if (namespace !== undefined) await writeFile(path.join(dir, 'namespace'), namespace);
  return dir;
}

test('in-cluster config reads the service account token, CA and namespace, and verifies TLS', async () => {
  const dir = await saDir('ops\n');
  const cfg = await inClusterConfig({ serviceAccountDir: dir, env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' } });
  assert.equal(cfg.server, 'https://10.96.0.1:443');
  assert.equal(cfg.tls.ca, 'CA-PEM');
  assert.equal(cfg.tls.rejectUnauthorized, true);
  assert.equal(cfg.namespace, 'ops');
  assert.deepEqual(await cfg.credential.get(), { authorization: 'Bearer sa-token-1' });
});

test('an IPv6 service host is bracketed in the URL', async () => {
  const cfg = await inClusterConfig({ serviceAccountDir: await saDir(), env: { KUBERNETES_SERVICE_HOST: 'fd00:10:96::1', KUBERNETES_SERVICE_PORT: '6443' } });
  assert.equal(cfg.server, 'https://[fd00:10:96::1]:6443');
  assert.equal(new URL(cfg.server).hostname, '[fd00:10:96::1]');
  assert.equal(cfg.namespace, 'default', 'no namespace file means default');
});

test('the rotated service account token is picked up without a restart', async () => {
  const clock = new FakeClock();
  const dir = await saDir();
  const cfg = await inClusterConfig({ serviceAccountDir: dir, clock, env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' } });
  await writeFile(path.join(dir, 'token'), 'sa-token-2');
  clock.step(60_000);
  assert.deepEqual(await cfg.credential.get(), { authorization: 'Bearer sa-token-2' });
});

test('outside a pod in-cluster config fails with KubeconfigError', async () => {
  assert.equal(isInCluster({}), false);
  await assert.rejects(inClusterConfig({ env: {} }), KubeconfigError);
});
