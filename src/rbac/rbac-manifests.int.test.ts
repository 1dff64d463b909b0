/**
 * Generated Roles against a real kube-apiserver 1.20: a namespaced manager runs under a
 * ServiceAccount bound to exactly what `rbacManifests` gives it (a Role in its namespace, a
 * ClusterRole for the cluster-scoped kind it watches), meets no 403, and can do nothing elsewhere.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient } from '../client/kube-client.js';
import type { Client } from '../client/contracts.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import { kinds } from '../client/kinds.js';
import { isForbidden } from '../client/api-error.js';
import { setControllerReference } from '../helpers/owner-references.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { Manager } from '../manager/manager.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { kubectl } from '../testing/control-plane/kubectl.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { offlineClient } from './offline-client.js';
import { rbacManifests } from './rbac-manifests.js';

const SA = { name: 'copier', namespace: 'copier-system' };

/** The operator: copies each ConfigMap of its namespaces into an owned Secret, and records an Event. */
function copier(client: Client, logger = recordingLogger()): Manager {
  const manager = new Manager({ client, namespaces: ['team-a'], metricsPort: 0, healthPort: 0, logger });
  const events = manager.eventRecorder('copier');
  manager
    .controller('copier')
    .for(kinds.ConfigMap)
    .owns(kinds.Secret)
    .watches(kinds.Namespace, () => [])
    .writes(kinds.Secret, ['create'])
    .complete(async (request, ctx) => {
      const cm = await ctx.get();
      if (!cm?.metadata?.name || cm.metadata.name === 'kube-root-ca.crt') return;
      const name = `${cm.metadata.name}-copy`;
      const existing = await manager.client
        .get(kinds.Secret, name, { namespace: request.namespace })
        .catch(() => undefined);
      if (existing) return;
      await manager.client.create(
        setControllerReference(cm, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: request.namespace },
          stringData: cm.data ?? {},
        }),
      );
      events.event(cm, 'Normal', 'Copied', `copied into Secret ${name}`);
    });
  return manager;
}

let env: TestEnv;
let admin: KubeClient;
let operatorClient: KubeClient;

before(async () => {
  env = await TestEnv.start();
  for (const ns of [SA.namespace, 'team-a', 'team-b']) await kubectl(env.kubeconfigPath, ['create', 'namespace', ns]);
  await kubectl(env.kubeconfigPath, ['create', 'serviceaccount', SA.name, '-n', SA.namespace]);
  const manifests = rbacManifests(copier(offlineClient()), { name: 'copier', serviceAccount: SA });
  await kubectl(env.kubeconfigPath, ['apply', '-f', '-'], manifests.map((m) => JSON.stringify(m)).join('\n'));
  const token = await env.request<{ status: { token: string } }>(
    'POST',
    `/api/v1/namespaces/${SA.namespace}/serviceaccounts/${SA.name}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
  );
  assert.equal(token.status, 201);
  const kc = structuredClone(env.kubeconfig) as unknown as { users: { user: Record<string, unknown> }[] };
  kc.users[0]!.user = { token: token.body.status.token };
  admin = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
  operatorClient = await KubeClient.fromKubeconfig({ kubeconfig: kc as unknown as Kubeconfig });
});

after(async () => {
  await operatorClient?.close();
  await admin?.close();
  await env?.stop();
});

test('a namespaced manager runs under its generated Role and ClusterRole with no 403, and is refused outside its namespaces', async () => {
  const roles = rbacManifests(copier(offlineClient()), { name: 'copier', serviceAccount: SA }).map(
    (m) => `${m.kind} ${m.metadata.namespace ?? ''}/${m.metadata.name}`,
  );
  assert.deepEqual(roles, [
    'ClusterRole /copier',
    'ClusterRoleBinding /copier',
    'Role team-a/copier',
    'RoleBinding team-a/copier',
  ]);

  const log = recordingLogger();
  const manager = copier(operatorClient, log);
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await admin.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'team-a' },
      data: { a: 'b' },
    });
    const secret = await eventually('the copy', () =>
      admin.get(kinds.Secret, 'settings-copy', { namespace: 'team-a' }).catch(() => undefined),
    );
    assert.equal(Buffer.from(secret.data?.a ?? '', 'base64').toString(), 'b');
    await eventually('the Copied event', async () =>
      (await admin.list(kinds.Event, { namespace: 'team-a' })).items.some((e) => e.reason === 'Copied'),
    );
    const forbidden = log.entries.filter((e) =>
      /\b403 Forbidden\b/.test(String((e.obj.err as { message?: unknown } | undefined)?.message ?? e.obj.err ?? '')),
    );
    assert.deepEqual(forbidden, [], 'no 403 under the generated roles');
    // Nothing beyond them: the same ServiceAccount cannot read ConfigMaps of another namespace.
    await assert.rejects(operatorClient.list(kinds.ConfigMap, { namespace: 'team-b' }), (err: unknown) =>
      isForbidden(err),
    );
  } finally {
    stop.abort();
    await running;
  }
});
