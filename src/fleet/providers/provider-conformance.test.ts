import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FakeClock, flushMicrotasks } from '../../core/fake-clock.js';
import { FakeClient } from '../../testing/fake-client/fake-client.js';
import type { MemberCluster } from '../cluster-provider.js';
import { tokenKubeconfig } from '../testing/kubeconfig-fixtures.js';
import { kubeconfigDirectory } from './kubeconfig-directory.js';
import { kubeconfigSecrets } from './kubeconfig-secrets.js';
import { providerConformance } from '../testing/provider-conformance.js';
import { staticClusters } from './static-clusters.js';

const KC = tokenKubeconfig('https://10.0.0.1:6443');

/** Polls a condition real I/O makes true; rejects after 5 s. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

providerConformance('staticClusters', () =>
  Promise.resolve({
    provider: staticClusters([
      { name: 'member-a', kubeconfig: parseYaml(KC) as object },
      { name: 'member-b', client: new FakeClient() },
    ]),
    settled: () => Promise.resolve(),
    cleanup: () => Promise.resolve(),
  }),
);

providerConformance('kubeconfigDirectory', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'provider-conformance-'));
  await writeFile(path.join(dir, 'member-a.yaml'), KC);
  await writeFile(path.join(dir, 'member-b.kubeconfig'), KC);
  const clock = new FakeClock();
  return {
    provider: kubeconfigDirectory({ path: dir, clock }),
    settled: (engaged: readonly MemberCluster[]) => until(() => engaged.length >= 2),
    async change() {
      await writeFile(path.join(dir, 'member-c.yaml'), KC);
      await clock.advance(3_600_000);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

providerConformance('kubeconfigSecrets', () => {
  const clock = new FakeClock();
  const secret = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'fleet', labels: { 'operator-runtime.io/fleet-member': 'true' } },
    data: { kubeconfig: Buffer.from(KC).toString('base64') },
  });
  const client = new FakeClient({ clock, objects: [secret('member-a'), secret('member-b')] });
  return Promise.resolve({
    provider: kubeconfigSecrets({ client, namespace: 'fleet', clock }),
    async settled(engaged: readonly MemberCluster[]) {
      for (let i = 0; i < 50 && engaged.length < 2; i++) await flushMicrotasks();
    },
    async change() {
      await client.create(secret('member-c'));
      await clock.advance(60_000);
    },
    cleanup: () => Promise.resolve(),
  });
});
