import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { KubeClient } from '../../client/kube-client.js';
import { FakeClock, flushMicrotasks } from '../../core/fake-clock.js';
import { recordingLogger } from '../../logging/recording-logger.js';
import { FakeClient } from '../../testing/fake-client/fake-client.js';
import type { ClusterEvents, MemberCluster } from '../cluster-provider.js';
import { TOKEN, tokenKubeconfig } from '../testing/kubeconfig-fixtures.js';
import { kubeconfigRevision } from './kubeconfig-member.js';
import {
  CLUSTER_NAME_ANNOTATION,
  DEFAULT_KUBECONFIG_SECRET_SELECTOR,
  kubeconfigSecrets,
  type KubeconfigSecretsOptions,
} from './kubeconfig-secrets.js';

const SECRET = { apiVersion: 'v1', kind: 'Secret' };
const NS = 'fleet';
const MEMBER = { 'operator-runtime.io/fleet-member': 'true' };

function secret(
  name: string,
  kubeconfig: string | undefined,
  extra: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    key?: string;
    namespace?: string;
  } = {},
): Record<string, unknown> {
  return {
    ...SECRET,
    metadata: {
      name,
      namespace: extra.namespace ?? NS,
      labels: extra.labels ?? MEMBER,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    ...(kubeconfig !== undefined
      ? { data: { [extra.key ?? 'kubeconfig']: Buffer.from(kubeconfig).toString('base64') } }
      : {}),
  };
}

/** Reads the Secret, changes it, writes it back. */
async function edit(client: FakeClient, name: string, change: (s: Secret) => Secret): Promise<void> {
  await client.update(change(await client.get<Secret>(SECRET, name, { namespace: NS })));
}

const base64 = (text: string): string => Buffer.from(text).toString('base64');

type Event =
  { readonly type: 'engage'; readonly cluster: MemberCluster } | { readonly type: 'disengage'; readonly name: string };

async function setup(objects: object[] = [], options: Partial<KubeconfigSecretsOptions> = {}) {
  const clock = new FakeClock();
  const client = new FakeClient({ clock, objects });
  const log = recordingLogger();
  const events: Event[] = [];
  const sink: ClusterEvents = {
    engage: (cluster) => events.push({ type: 'engage', cluster }),
    disengage: (name) => void events.push({ type: 'disengage', name }),
  };
  const provider = kubeconfigSecrets({ client, namespace: NS, clock, logger: log, ...options });
  const stop = new AbortController();
  const run = provider.start(stop.signal, sink);
  /** Lets the informer and the provider catch up (no timers involved: only promise callbacks). */
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 10; i++) await flushMicrotasks();
  };
  await settle();
  return {
    clock,
    client,
    log,
    events,
    provider,
    settle,
    summary: () =>
      events.map((e) =>
        e.type === 'engage' ? `engage ${e.cluster.name} ${e.cluster.revision}` : `disengage ${e.name}`,
      ),
    stop: async () => {
      stop.abort();
      await run;
    },
  };
}

const KC_A = tokenKubeconfig('https://10.0.0.1:6443');
const KC_B = tokenKubeconfig('https://10.0.0.2:6443');

test('a member Secret created engages its cluster, whose connect builds a client for the kubeconfig server', async () => {
  const t = await setup();
  assert.deepEqual(t.events, []);
  await t.client.create(secret('member-a', KC_A, { labels: { ...MEMBER, region: 'eu' } }));
  await t.settle();
  assert.deepEqual(t.summary(), [`engage member-a ${kubeconfigRevision(KC_A)}`]);
  const engaged = t.events[0] as Extract<Event, { type: 'engage' }> | undefined;
  assert.ok(engaged);
  // The selector's own label says nothing about the member: it is left out.
  assert.deepEqual(engaged.cluster.labels, { region: 'eu' });
  const member = await engaged.cluster.connect(new AbortController().signal);
  try {
    assert.match(inspect(member), /server: 'https:\/\/10\.0\.0\.1:6443\/'/);
  } finally {
    await (member as KubeClient).close();
  }
  await t.stop();
});

test('Secrets present at start engage during the initial sync, in name order', async () => {
  const t = await setup([secret('member-b', KC_B), secret('member-a', KC_A)]);
  assert.deepEqual(t.summary(), [
    `engage member-a ${kubeconfigRevision(KC_A)}`,
    `engage member-b ${kubeconfigRevision(KC_B)}`,
  ]);
  await t.stop();
});

test('new kubeconfig bytes engage the cluster again with the new revision', async () => {
  const t = await setup([secret('member-a', KC_A)]);
  await edit(t.client, 'member-a', (s) => ({ ...s, data: { kubeconfig: base64(KC_B) } }));
  await t.settle();
  assert.deepEqual(t.summary(), [
    `engage member-a ${kubeconfigRevision(KC_A)}`,
    `engage member-a ${kubeconfigRevision(KC_B)}`,
  ]);
  await t.stop();
});

test('the same data again (another resourceVersion, an annotation, a relist) engages nothing again', async () => {
  const t = await setup([secret('member-a', KC_A)]);
  await edit(t.client, 'member-a', (s) => ({ ...s, metadata: { ...s.metadata, annotations: { touched: 'yes' } } }));
  await t.settle();
  // A watch that expires forces a relist: every Secret comes again as from a list.
  t.client.expireWatches();
  await t.settle();
  await t.clock.advance(60_000);
  await t.settle();
  assert.deepEqual(t.summary(), [`engage member-a ${kubeconfigRevision(KC_A)}`]);
  await t.stop();
});

test('other labels on the Secret engage the cluster again with the same revision and the new labels', async () => {
  const t = await setup([secret('member-a', KC_A, { labels: { ...MEMBER, tier: 'gold' } })]);
  await edit(t.client, 'member-a', (s) => ({
    ...s,
    metadata: { ...s.metadata, labels: { ...MEMBER, tier: 'silver' } },
  }));
  await t.settle();
  const engages = t.events.filter((e) => e.type === 'engage');
  assert.equal(engages.length, 2);
  assert.equal(engages[1]!.cluster.revision, engages[0]!.cluster.revision);
  assert.deepEqual(engages[1]!.cluster.labels, { tier: 'silver' });
  await t.stop();
});

test('a deleted Secret disengages its cluster', async () => {
  const t = await setup([secret('member-a', KC_A), secret('member-b', KC_B)]);
  await t.client.delete(SECRET, 'member-a', { namespace: NS });
  await t.settle();
  assert.deepEqual(t.summary().slice(2), ['disengage member-a']);
  await t.stop();
});

test('a Secret that loses the label leaves, like a deleted one', async () => {
  const t = await setup([secret('member-a', KC_A)]);
  await edit(t.client, 'member-a', (s) => ({ ...s, metadata: { ...s.metadata, labels: {} } }));
  await t.settle();
  assert.deepEqual(t.summary().slice(1), ['disengage member-a']);
  await t.stop();
});

test('only Secrets of the namespace that match the selector are members', async () => {
  const t = await setup([
    secret('unlabelled', KC_A, { labels: {} }),
    secret('wrong-value', KC_A, { labels: { 'operator-runtime.io/fleet-member': 'false' } }),
    secret('elsewhere', KC_A, { namespace: 'other' }),
    secret('member-a', KC_A),
  ]);
  assert.deepEqual(t.summary(), [`engage member-a ${kubeconfigRevision(KC_A)}`]);
  await t.stop();
});

test('a custom selector and data key select Cluster API kubeconfig Secrets', async () => {
  const capi = { 'cluster.x-k8s.io/cluster-name': 'prod' };
  const t = await setup(
    [
      secret('prod-kubeconfig', KC_A, {
        labels: capi,
        key: 'value',
        annotations: { [CLUSTER_NAME_ANNOTATION]: 'prod' },
      }),
      secret('member-a', KC_B),
    ],
    { labelSelector: 'cluster.x-k8s.io/cluster-name', key: 'value' },
  );
  assert.deepEqual(t.summary(), [`engage prod ${kubeconfigRevision(KC_A)}`]);
  assert.deepEqual((t.events[0] as Extract<Event, { type: 'engage' }>).cluster.labels, {});
  assert.equal(t.provider.description, 'kubeconfig-secrets fleet/cluster.x-k8s.io/cluster-name');
  await t.stop();
});

test('a Secret with broken YAML or no kubeconfig key is skipped and logged by namespace/name and problem, never its data', async () => {
  const broken = `${KC_A}\n  - : [unbalanced ${TOKEN}`;
  const t = await setup([secret('broken', broken), secret('empty', undefined), secret('member-a', KC_A)]);
  assert.deepEqual(t.summary(), [`engage member-a ${kubeconfigRevision(KC_A)}`]);
  const warnings = t.log.entries.filter((e) => e.level === 'warn');
  assert.deepEqual(
    warnings.map((e) => [e.obj.namespace, e.obj.name, e.obj.error]),
    [
      [NS, 'broken', 'data key "kubeconfig": cluster "broken": kubeconfig is not valid YAML (YAMLParseError)'],
      [NS, 'empty', 'data key "kubeconfig" is missing or empty'],
    ],
  );
  for (const e of t.log.entries)
    assert.ok(!JSON.stringify(e).includes(TOKEN), `a log line has the token: ${JSON.stringify(e)}`);
  // Logged once, not on every sync.
  await t.client.create(secret('member-b', KC_B));
  await t.settle();
  assert.equal(t.log.entries.filter((e) => e.level === 'warn').length, 2);
  // Fixed, it is tried again and engages.
  await edit(t.client, 'broken', (s) => ({ ...s, data: { kubeconfig: base64(KC_B) } }));
  await t.settle();
  assert.deepEqual(t.summary().slice(-1), [`engage broken ${kubeconfigRevision(KC_B)}`]);
  await t.stop();
});

test('a kubeconfig broken by an update keeps the cluster on its previous one, and says so', async () => {
  const t = await setup([secret('member-a', KC_A)]);
  await edit(t.client, 'member-a', (s) => ({ ...s, data: { kubeconfig: base64('clusters: 3') } }));
  await t.settle();
  assert.deepEqual(t.summary(), [`engage member-a ${kubeconfigRevision(KC_A)}`]);
  const warning = t.log.entries.find((e) => e.level === 'warn');
  assert.match(String(warning?.obj.error), /clusters must be a list.*stays on its previous kubeconfig$/);
  await t.stop();
});

test('an exec kubeconfig in a Secret is refused unless allowExecAndFiles', async () => {
  const exec = KC_A.replace(
    `    token: ${TOKEN}`,
    '    exec: { apiVersion: client.authentication.k8s.io/v1, command: /bin/sh }',
  );
  const refused = await setup([secret('member-a', exec)]);
  assert.deepEqual(refused.summary(), []);
  assert.match(String(refused.log.entries.find((e) => e.level === 'warn')?.obj.error), /exec runs a command/);
  await refused.stop();
  const allowed = await setup([secret('member-a', exec)], { allowExecAndFiles: true });
  assert.equal(allowed.summary().length, 1);
  await allowed.stop();
});

test('the cluster name comes from the annotation when set; a Secret name that is not a DNS label is logged', async () => {
  const t = await setup([
    secret('kubeconfig.prod.example.com', KC_A),
    secret('kubeconfig.staging.example.com', KC_B, { annotations: { [CLUSTER_NAME_ANNOTATION]: 'staging' } }),
  ]);
  assert.deepEqual(t.summary(), [`engage staging ${kubeconfigRevision(KC_B)}`]);
  const warning = t.log.entries.find((e) => e.level === 'warn');
  assert.equal(warning?.obj.name, 'kubeconfig.prod.example.com');
  assert.match(String(warning?.obj.error), /not a DNS label.*set the annotation operator-runtime\.io\/cluster-name/);
  await t.stop();
});

test('two Secrets naming one cluster: the first by name is used, the other logged, and takes over when the first goes', async () => {
  const t = await setup([
    secret('b-second', KC_B, { annotations: { [CLUSTER_NAME_ANNOTATION]: 'prod' } }),
    secret('a-first', KC_A, { annotations: { [CLUSTER_NAME_ANNOTATION]: 'prod' } }),
  ]);
  assert.deepEqual(t.summary(), [`engage prod ${kubeconfigRevision(KC_A)}`]);
  assert.match(
    String(t.log.entries.find((e) => e.level === 'warn')?.obj.error),
    /already given by Secret fleet\/a-first/,
  );
  await t.client.delete(SECRET, 'a-first', { namespace: NS });
  await t.settle();
  assert.deepEqual(t.summary().slice(1), [`engage prod ${kubeconfigRevision(KC_B)}`]);
  await t.stop();
});

test('stopping resolves start, and nothing is engaged afterwards', async () => {
  const t = await setup([secret('member-a', KC_A)]);
  await t.stop();
  await t.client.create(secret('member-b', KC_B));
  await t.settle();
  assert.deepEqual(t.summary(), [`engage member-a ${kubeconfigRevision(KC_A)}`]);
});

test('it needs list and watch on Secrets in its namespace, and defaults to the fleet-member label', () => {
  const provider = kubeconfigSecrets({ client: new FakeClient(), namespace: NS });
  assert.equal(provider.description, `kubeconfig-secrets ${NS}/${DEFAULT_KUBECONFIG_SECRET_SELECTOR}`);
  assert.deepEqual(
    provider.requiredPermissions?.().map((p) => [p.resource, p.verbs, p.namespace]),
    [[SECRET, ['list', 'watch'], NS]],
  );
});

test('a selector that does not parse or an empty namespace is refused when the provider is made', () => {
  assert.throws(() => kubeconfigSecrets({ client: new FakeClient(), namespace: NS, labelSelector: 'a in (' }), {
    name: 'InvalidLabelSelectorError',
  });
  assert.throws(() => kubeconfigSecrets({ client: new FakeClient(), namespace: '' }), { code: 'ERR_INVALID_OPTION' });
});
