import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import type { Event as CoreEvent, Secret } from 'kubernetes-types/core/v1.js';
import { Registry } from 'prom-client';
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
const EVENT = { apiVersion: 'v1', kind: 'Event' };

/** Polls a condition the provider's promise callbacks make true (no timers: they run on the fake clock). */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (await check()) return;
    await flushMicrotasks();
  }
  assert.fail('never happened');
}
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

test('a later Secret naming an engaged cluster is refused, whatever its name sorts as: reported by a log line, an Event and a metric; it takes the name once the holder goes', async () => {
  const registry = new Registry();
  const prod = { annotations: { [CLUSTER_NAME_ANNOTATION]: 'prod' } };
  const t = await setup([secret('real', KC_A, prod)], { registry });
  assert.deepEqual(t.summary(), [`engage prod ${kubeconfigRevision(KC_A)}`]);
  // Sorts before `real`: before the fix it took "prod" over (its server became the cluster's).
  await t.client.create(secret('a-takeover', KC_B, prod));
  await t.settle();
  assert.deepEqual(t.summary(), [`engage prod ${kubeconfigRevision(KC_A)}`]);
  const warnings = t.log.entries.filter((e) => e.level === 'warn');
  assert.deepEqual(
    warnings.map((e) => [e.msg, e.obj.name, e.obj.error]),
    [
      [
        'member Secret refused',
        'a-takeover',
        'cluster "prod" is already given by Secret fleet/real; this Secret is not used while that one gives it',
      ],
    ],
  );
  assert.match(
    await registry.metrics(),
    /^fleet_provider_refused_total\{provider="kubeconfig-secrets",reason="name_taken"\} 1$/m,
  );
  await until(async () => (await t.client.list(EVENT, { namespace: NS })).items.length > 0);
  const [event] = (await t.client.list<CoreEvent>(EVENT, { namespace: NS })).items;
  assert.equal(event?.type, 'Warning');
  assert.equal(event?.reason, 'ClusterNameTaken');
  assert.deepEqual([event?.involvedObject.kind, event?.involvedObject.name], ['Secret', 'a-takeover']);
  assert.doesNotMatch(JSON.stringify(event), new RegExp(TOKEN));

  // A change to the refused Secret is not reported again; the holder's own change still engages.
  await edit(t.client, 'a-takeover', (s) => ({ ...s, metadata: { ...s.metadata, labels: { ...MEMBER, x: 'y' } } }));
  await t.settle();
  assert.equal(t.log.entries.filter((e) => e.level === 'warn').length, 1);

  await t.client.delete(SECRET, 'real', { namespace: NS });
  await t.settle();
  assert.deepEqual(t.summary().slice(1), [`engage prod ${kubeconfigRevision(KC_B)}`]);
  await t.stop();
});

test('the initial list is read in one pass once synced: each Secret is decoded once, not once per Secret listed before it', async (t) => {
  const n = 200;
  const secrets = Array.from({ length: n }, (_, i) =>
    secret(`member-${String(i).padStart(4, '0')}`, tokenKubeconfig(`https://10.1.${i >> 8}.${i & 255}:6443`)),
  );
  const data = new Set(secrets.map((s) => (s as { data: { kubeconfig: string } }).data.kubeconfig));
  let decodes = 0;
  const from = Buffer.from.bind(Buffer) as (...args: unknown[]) => Buffer;
  t.mock.method(Buffer, 'from', (...args: unknown[]) => {
    if (args[1] === 'base64' && data.has(args[0] as string)) decodes++;
    return from(...args);
  });
  const s = await setup(secrets);
  await until(() => s.events.length === n);
  assert.equal(decodes, n);
  // A change to one Secret decodes that one only.
  await edit(s.client, 'member-0007', (x) => ({ ...x, metadata: { ...x.metadata, labels: { ...MEMBER, x: 'y' } } }));
  await s.settle();
  assert.equal(decodes, n + 1);
  assert.equal(s.events.length, n + 1);
  await s.stop();
});

test('stopping resolves start, and nothing is engaged afterwards', async () => {
  const t = await setup([secret('member-a', KC_A)]);
  await t.stop();
  await t.client.create(secret('member-b', KC_B));
  await t.settle();
  assert.deepEqual(t.summary(), [`engage member-a ${kubeconfigRevision(KC_A)}`]);
});

test('it needs list and watch on Secrets and to create Events in its namespace, and defaults to the fleet-member label', () => {
  const provider = kubeconfigSecrets({ client: new FakeClient(), namespace: NS });
  assert.equal(provider.description, `kubeconfig-secrets ${NS}/${DEFAULT_KUBECONFIG_SECRET_SELECTOR}`);
  assert.deepEqual(
    provider.requiredPermissions?.().map((p) => [p.resource, p.verbs, p.namespace]),
    [
      [SECRET, ['list', 'watch'], NS],
      [{ apiVersion: 'events.k8s.io/v1', kind: 'Event' }, ['create', 'patch'], NS],
    ],
  );
});

test('a selector that does not parse or an empty namespace is refused when the provider is made', () => {
  assert.throws(() => kubeconfigSecrets({ client: new FakeClient(), namespace: NS, labelSelector: 'a in (' }), {
    name: 'InvalidLabelSelectorError',
  });
  assert.throws(() => kubeconfigSecrets({ client: new FakeClient(), namespace: '' }), { code: 'ERR_INVALID_OPTION' });
});
