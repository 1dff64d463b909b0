import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { KubeClient } from '../../client/kube-client.js';
import { FakeClient } from '../../testing/fake-client/fake-client.js';
import type { ClusterEvents, ClusterProvider, MemberCluster } from '../cluster-provider.js';
import { TOKEN, tokenKubeconfig } from '../testing/kubeconfig-fixtures.js';
import { staticClusters } from './static-clusters.js';

function recorder(): { events: ClusterEvents; engaged: MemberCluster[]; disengaged: string[] } {
  const engaged: MemberCluster[] = [];
  const disengaged: string[] = [];
  return {
    events: { engage: (c) => engaged.push(c), disengage: (n) => void disengaged.push(n) },
    engaged,
    disengaged,
  };
}

/** Starts the provider and stops it at once: a static list engages synchronously in start. */
async function engageAll(provider: ClusterProvider): Promise<MemberCluster[]> {
  const r = recorder();
  const stop = new AbortController();
  const run = provider.start(stop.signal, r.events);
  stop.abort();
  await run;
  return r.engaged;
}

async function tempFile(t: TestContext, name: string, content: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'static-clusters-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  await writeFile(file, content);
  return file;
}

test('every listed cluster engages at start, and start resolves only when the signal aborts', async () => {
  const fake = new FakeClient();
  const provider = staticClusters([
    { name: 'member-a', labels: { region: 'eu' }, client: fake },
    { name: 'member-b', kubeconfig: { 'current-context': 'x' } },
  ]);
  const r = recorder();
  const stop = new AbortController();
  let resolved = false;
  const run = provider.start(stop.signal, r.events).then(() => (resolved = true));
  await new Promise((res) => setImmediate(res));
  assert.deepEqual(
    r.engaged.map((c) => [c.name, c.labels]),
    [
      ['member-a', { region: 'eu' }],
      ['member-b', undefined],
    ],
  );
  assert.equal(resolved, false);
  stop.abort();
  await run;
  assert.deepEqual(r.disengaged, []);
  assert.equal(provider.description, 'static 2 clusters');
});

test('a client given directly is what connect returns', async () => {
  const fake = new FakeClient();
  const engaged = await engageAll(staticClusters([{ name: 'member-a', client: fake }]));
  assert.equal(await engaged[0]!.connect(new AbortController().signal), fake);
});

test('a kubeconfig object becomes a KubeClient in connect; changing the object afterwards changes nothing', async () => {
  const kubeconfig = {
    'current-context': 'ctx',
    clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.9:6443' } }],
    users: [{ name: 'u', user: { token: TOKEN } }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
  };
  const engaged = await engageAll(staticClusters([{ name: 'member-a', kubeconfig }]));
  kubeconfig.clusters[0]!.cluster.server = 'https://elsewhere:1';
  const client = await engaged[0]!.connect(new AbortController().signal);
  try {
    assert.ok(client instanceof KubeClient);
    assert.match(inspect(client), /10\.0\.0\.9:6443/);
    assert.match(engaged[0]!.revision, /^sha256:[0-9a-f]{64}$/);
  } finally {
    await (client as KubeClient).close();
  }
});

test('a kubeconfig path is read at connect, with its context', async (t) => {
  const file = await tempFile(t, 'member.yaml', tokenKubeconfig('https://10.0.0.7:6443'));
  const engaged = await engageAll(staticClusters([{ name: 'member-a', kubeconfig: file, context: 'ctx' }]));
  const client = await engaged[0]!.connect(new AbortController().signal);
  try {
    assert.match(inspect(client), /10\.0\.0\.7:6443/);
  } finally {
    await (client as KubeClient).close();
  }
});

test('a kubeconfig that cannot be used fails connect naming the cluster, never the token', async (t) => {
  const file = await tempFile(t, 'broken.yaml', `${tokenKubeconfig()}\n  - : [unbalanced ${TOKEN}`);
  const engaged = await engageAll(
    staticClusters([
      { name: 'from-file', kubeconfig: file },
      { name: 'missing', kubeconfig: path.join(path.dirname(file), 'nope.yaml') },
      {
        name: 'from-object',
        kubeconfig: { 'current-context': 'none', users: [{ name: 'u', user: { token: TOKEN } }] },
      },
    ]),
  );
  const messages: string[] = [];
  for (const member of engaged) {
    const err = await member.connect(new AbortController().signal).then(
      () => assert.fail(`${member.name} connected`),
      (e: unknown) => e as Error,
    );
    assert.equal((err as { code?: string }).code, 'ERR_CLUSTER_KUBECONFIG');
    assert.ok(!inspect(err, { depth: 10 }).includes(TOKEN), inspect(err));
    messages.push(err.message);
  }
  assert.match(messages[0]!, /^cluster "from-file": kubeconfig is not valid YAML \(YAML\w+\) \(in .*broken\.yaml\)$/);
  assert.match(messages[1]!, /^cluster "missing": cannot read kubeconfig .*nope\.yaml: ENOENT$/);
  assert.equal(messages[2], 'cluster "from-object": context "none" not found in kubeconfig');
});

test('bad names, a name given twice and an entry with neither client nor kubeconfig are refused at once', () => {
  const fake = new FakeClient();
  assert.throws(() => staticClusters([{ name: 'Member_A', client: fake }]), { name: 'InvalidClusterNameError' });
  assert.throws(
    () =>
      staticClusters([
        { name: 'a', client: fake },
        { name: 'a', client: fake },
      ]),
    { message: 'cluster name "a" is given twice' },
  );
  assert.throws(() => staticClusters([{ name: 'a' } as never]), {
    code: 'ERR_INVALID_ARGUMENT',
    message: 'cluster "a" needs exactly one of client and kubeconfig',
  });
});

test('an already aborted signal engages nothing', async () => {
  const r = recorder();
  await staticClusters([{ name: 'a', client: new FakeClient() }]).start(AbortSignal.abort(), r.events);
  assert.deepEqual(r.engaged, []);
});
