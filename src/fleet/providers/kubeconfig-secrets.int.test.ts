/**
 * The Secret provider against a real 1.20 API server: a Secret carrying the env's own kubeconfig
 * engages a cluster whose client lists namespaces; deleting the Secret disengages it. The member
 * "cluster" is the host itself, which is all the provider can tell apart (it never talks to members).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { stringify as toYaml } from 'yaml';
import { KubeClient } from '../../client/kube-client.js';
import { recordingLogger } from '../../logging/recording-logger.js';
import { eventually } from '../../testing/control-plane/eventually.js';
import { TestEnv } from '../../testing/control-plane/test-env.js';
import type { MemberCluster } from '../cluster-provider.js';
import { kubeconfigRevision } from './kubeconfig-member.js';
import { kubeconfigSecrets } from './kubeconfig-secrets.js';

const SECRET = { apiVersion: 'v1', kind: 'Secret' };
const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' };

describe('kubeconfigSecrets on a real API server', () => {
  let env: TestEnv;
  let host: KubeClient;
  const namespace = `fleet-${randomUUID().slice(0, 8)}`;

  before(async () => {
    env = await TestEnv.start();
    host = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    await host.create({ ...NAMESPACE, metadata: { name: namespace } });
  });

  after(async () => {
    await host?.close();
    await env?.stop();
  });

  test('a kubeconfig Secret engages a cluster that can list namespaces; deleting it disengages the cluster', async () => {
    const log = recordingLogger();
    const engaged: MemberCluster[] = [];
    const disengaged: string[] = [];
    const provider = kubeconfigSecrets({ client: host, namespace, logger: log });
    const stop = new AbortController();
    const run = provider.start(stop.signal, {
      engage: (c) => engaged.push(c),
      disengage: (n) => void disengaged.push(n),
    });
    try {
      const kubeconfig = toYaml(env.kubeconfig);
      const createSecret = (name: string) =>
        host.create({
          ...SECRET,
          metadata: { name, namespace, labels: { 'operator-runtime.io/fleet-member': 'true' } },
          data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
        });
      // The first Secret is created while the provider's informer may still be listing.
      let createdAt = performance.now();
      await createSecret('member-a');
      const member = await eventually('the cluster engaged', () => engaged[0], { intervalMs: 5 });
      console.log(`# secret-to-engage (provider just started): ${(performance.now() - createdAt).toFixed(1)} ms`);
      assert.equal(member.name, 'member-a');
      assert.equal(member.revision, kubeconfigRevision(kubeconfig));
      // A second one, with the informer watching: the steady-state "time from Secret to engage".
      createdAt = performance.now();
      await createSecret('member-b');
      await eventually('the second cluster engaged', () => engaged[1], { intervalMs: 5 });
      console.log(`# secret-to-engage (watching): ${(performance.now() - createdAt).toFixed(1)} ms`);

      const client = await member.connect(stop.signal);
      try {
        const names = (await client.list(NAMESPACE)).items.map((n) => n.metadata?.name);
        assert.ok(names.includes(namespace), `namespaces listed through the member: ${names.join(', ')}`);
      } finally {
        await (client as KubeClient).close();
      }

      const deletedAt = performance.now();
      await host.delete(SECRET, 'member-a', { namespace });
      await eventually('the cluster disengaged', () => disengaged.includes('member-a'), { intervalMs: 5 });
      console.log(`# secret-delete-to-disengage: ${(performance.now() - deletedAt).toFixed(1)} ms`);
      assert.deepEqual(
        engaged.map((c) => c.name),
        ['member-a', 'member-b'],
        'each engaged once',
      );
      assert.deepEqual(disengaged, ['member-a']);
      for (const e of log.entries)
        assert.ok(!JSON.stringify(e).includes(env.adminToken), `a log line has the token: ${JSON.stringify(e)}`);
    } finally {
      stop.abort();
      await run;
    }
  });
});
