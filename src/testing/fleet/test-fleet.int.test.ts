import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { KubeClient } from '../../client/kube-client.js';
import { resolveModernBinaries } from '../control-plane/binaries.js';
import { WIDGET_CRD } from '../conformance/client-conformance.js';
import { registryKey, type RecordedWrite } from '../chaos/consistency-audit.js';
import { auditFleet, fleetAuditMark, formatFleetAuditReport } from './fleet-audit.js';
import { FLEET_MEMBER_LABEL, MEMBER_CLUSTER_NAME_ANNOTATION } from './member-secret.js';
import { TestFleet } from './test-fleet.js';
import type { TestFleetMember } from './test-fleet-member.js';

const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' } as const;
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const WIDGETS = { group: 'example.com', plural: 'widgets' } as const;

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; generation?: number };
  spec: { size: number };
}

/** Pids of this test process's live children (the control-plane components it started). */
async function childPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid …; comm may hold spaces, so split after its closing parenthesis.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === process.pid) pids.push(Number(entry));
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

async function report(label: string, fleet: TestFleet): Promise<void> {
  const rows = await Promise.all(
    fleet.members.map(async (m) => {
      const mem = await m.memory();
      const parts = mem.processes.map((p) => `${p.name} ${(p.rssBytes / 2 ** 20).toFixed(0)}`).join(' + ');
      return `${m.name}: start ${m.startMs} ms, RSS ${(mem.rssBytes / 2 ** 20).toFixed(0)} MiB (${parts})`;
    }),
  );
  const host = fleet.host.pids().length;
  console.log(
    `# ${label}: fleet start ${fleet.startup.totalMs} ms (host ${fleet.startup.hostMs} ms, ${host} processes)\n# ${rows.join('\n# ')}`,
  );
}

/** Lists namespaces; rejects when the call takes longer than `ms`. */
function listWithin(client: KubeClient, ms: number): Promise<unknown> {
  return client.list(NAMESPACE, { signal: AbortSignal.timeout(ms) });
}

describe('TestFleet: a host and three 1.20 members, each behind its own proxy and link', () => {
  let fleet: TestFleet;
  let clients: Map<string, KubeClient>;

  before(async () => {
    fleet = await TestFleet.start({ members: 3, memberCrds: [WIDGET_CRD] });
    // A small backoff and request timeout: a cut member must fail the test's calls quickly.
    clients = new Map(
      await Promise.all(
        fleet.members.map(
          async (m) =>
            [
              m.name,
              await m.client({ backoff: { maxAttempts: 2, initialMs: 5, maxMs: 20 }, requestTimeoutMs: 5_000 }),
            ] as const,
        ),
      ),
    );
    await report('1.20 members', fleet);
  });
  after(async () => {
    await fleet?.stop();
  });

  test('every member lists its namespaces through its own proxy and link, not straight to its API server', async () => {
    assert.deepEqual(
      fleet.members.map((m) => m.name),
      ['member-1', 'member-2', 'member-3'],
    );
    const servers = new Set<string>();
    for (const m of fleet.members) {
      const before = m.proxy.stats().forwarded;
      const list = await clients.get(m.name)!.list(NAMESPACE);
      assert.ok(list.items.some((n) => (n as { metadata: { name: string } }).metadata.name === 'default'));
      assert.ok(m.proxy.stats().forwarded > before, `${m.name}'s proxy forwarded the list`);
      const server = m.kubeconfig.clusters[0]!.cluster.server as string;
      assert.notEqual(server, m.env.server);
      assert.notEqual(server, m.proxy.url);
      servers.add(server);
    }
    assert.equal(servers.size, 3, 'each member has its own link');
    assert.equal(fleet.member('member-2').kubeconfig['current-context'], 'member-2');
  });

  test('cutOff() silences one member for its clients (calls time out) while the others answer and directClient still writes; heal() restores it', async () => {
    const cut = fleet.member('member-2');
    const cutClient = clients.get('member-2')!;
    // An open watch through the link, to see that the cut silences connections already open.
    const watchAbort = new AbortController();
    const events: string[] = [];
    const watching = (async () => {
      for await (const e of cutClient.watch(CONFIGMAP, {
        namespace: 'default',
        signal: watchAbort.signal,
        resourceVersion: (await cutClient.list(CONFIGMAP, { namespace: 'default' })).resourceVersion,
      }))
        events.push(`${e.type} ${(e.object as { metadata?: { name?: string } }).metadata?.name}`);
    })().catch(() => {});
    const direct = await cut.directClient();
    await direct.create({ ...CONFIGMAP, metadata: { name: 'before-cut', namespace: 'default' } });
    const deadline = Date.now() + 10_000;
    while (!events.includes('ADDED before-cut') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(events.includes('ADDED before-cut'), `the watch works before the cut: ${events.join(', ')}`);

    cut.cutOff();
    assert.equal(cut.cut, 'blackhole');
    const t0 = Date.now();
    await assert.rejects(listWithin(cutClient, 1_500));
    assert.ok(Date.now() - t0 >= 1_400, 'a blackholed call hangs until its own timeout, it is not refused');
    for (const other of ['member-1', 'member-3']) await listWithin(clients.get(other)!, 5_000);
    await direct.create({ ...CONFIGMAP, metadata: { name: 'while-cut', namespace: 'default' } });
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(!events.includes('ADDED while-cut'), 'the open watch is silent while cut');

    cut.heal();
    assert.equal(cut.cut, undefined);
    const got = await cutClient.get(CONFIGMAP, 'while-cut', { namespace: 'default' });
    assert.equal((got as { metadata: { name: string } }).metadata.name, 'while-cut');
    const healDeadline = Date.now() + 10_000;
    while (!events.includes('ADDED while-cut') && Date.now() < healDeadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.ok(events.includes('ADDED while-cut'), 'the watch open across the cut delivers what it held back');
    watchAbort.abort();
    await watching;
  });

  test("cutOff({ mode: 'reset' }) makes a member's calls fail at once, the others unaffected", async () => {
    const cut = fleet.member('member-3');
    cut.cutOff({ mode: 'reset' });
    try {
      const t0 = Date.now();
      await assert.rejects(listWithin(clients.get('member-3')!, 10_000));
      assert.ok(Date.now() - t0 < 5_000, `refused quickly (${Date.now() - t0} ms)`);
      await listWithin(clients.get('member-1')!, 5_000);
    } finally {
      cut.heal();
    }
    await listWithin(clients.get('member-3')!, 5_000);
  });

  test("the audit reports each member's own etcd history: conditioned writes lose nothing, a made-up write is found on its member only", async () => {
    const since = await fleetAuditMark(fleet);
    const writes: Record<string, RecordedWrite[]> = {};
    for (const m of fleet.members) {
      const client = clients.get(m.name)!;
      const key = registryKey(m.etcdPrefix(WIDGETS), 'default', `w-${m.name}`);
      let current = await client.create<Widget>({
        ...WIDGET,
        metadata: { name: `w-${m.name}`, namespace: 'default' },
        spec: { size: 1 },
      });
      writes[m.name] = [];
      for (let size = 2; size <= 4; size++) {
        const read = current.metadata.resourceVersion!;
        current = await client.update<Widget>({ ...current, spec: { size } });
        writes[m.name]!.push({
          key,
          readRevision: read,
          writtenRevision: current.metadata.resourceVersion!,
          writer: 'test',
        });
      }
    }
    // member-3's second write claims to have read the create, though it replaced the first update.
    const [first, second] = writes['member-3']!;
    writes['member-3']![1] = { ...second!, readRevision: Number(first!.readRevision) };
    const audit = await auditFleet({ fleet, resource: WIDGETS, since, writes });
    const text = formatFleetAuditReport(audit);
    assert.deepEqual(Object.keys(audit.members).sort(), ['member-1', 'member-2', 'member-3'], text);
    for (const name of ['member-1', 'member-2', 'member-3']) assert.equal(audit.members[name]!.puts, 4, text);
    assert.equal(audit.members['member-1']!.lostUpdates, 0, text);
    assert.equal(audit.members['member-2']!.lostUpdates, 0, text);
    assert.equal(audit.members['member-3']!.lostUpdates, 1, text);
    assert.equal(audit.members['member-3']!.findings[0]?.kind, 'write-not-conditioned-on-read', text);
    assert.equal(audit.lostUpdates, 1);
  });

  test("registerMembers() puts each member's kubeconfig Secret in the host, and the kubeconfig in it reaches the member", async () => {
    const namespace = await fleet.host.createNamespace('fleet');
    await fleet.registerMembers({ namespace });
    const res = await fleet.host.request<{
      items: { metadata: { name: string; annotations?: Record<string, string> }; data: Record<string, string> }[];
    }>(
      'GET',
      `/api/v1/namespaces/${namespace}/secrets?labelSelector=${encodeURIComponent(`${FLEET_MEMBER_LABEL}=true`)}`,
    );
    assert.equal(res.status, 200);
    const secrets = res.body.items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    assert.deepEqual(
      secrets.map((s) => [s.metadata.name, s.metadata.annotations?.[MEMBER_CLUSTER_NAME_ANNOTATION]]),
      [
        ['member-1-kubeconfig', 'member-1'],
        ['member-2-kubeconfig', 'member-2'],
        ['member-3-kubeconfig', 'member-3'],
      ],
    );
    const kubeconfig: unknown = parseYaml(Buffer.from(secrets[1]!.data.kubeconfig!, 'base64').toString('utf8'));
    const client = await KubeClient.fromKubeconfig({ kubeconfig: kubeconfig as object });
    try {
      const before = fleet.member('member-2').proxy.stats().forwarded;
      await client.get(CONFIGMAP, 'while-cut', { namespace: 'default' });
      assert.ok(fleet.member('member-2').proxy.stats().forwarded > before, 'through member-2 proxy');
    } finally {
      await client.close();
    }
  });

  test('stop() ends every process, closes every link and removes every temp dir', async () => {
    const pids = fleet.pids();
    assert.equal(pids.length, 8, 'host and 3 members: etcd + kube-apiserver each');
    const ports = fleet.members.map((m) => Number(new URL(m.kubeconfig.clusters[0]!.cluster.server as string).port));
    const dirs = [fleet.host.dir, ...fleet.members.map((m) => m.env.dir)];
    await fleet.stop();
    assert.deepEqual(
      pids.filter((p) => alive(p)),
      [],
    );
    for (const port of ports) assert.ok(await refused(port), `link port ${port} closed`);
    for (const dir of dirs) assert.ok(!existsSync(dir), `${dir} removed`);
  });
});

describe('TestFleet.start failing halfway', () => {
  test('a member that cannot start stops the host and the other members: no child process, no temp dir left', async () => {
    const childrenBefore = await childPids();
    // A private TMPDIR (os.tmpdir() reads it on every call): test files running beside this one
    // make temp dirs of their own in the shared one, and those are not this start's leftovers.
    const sharedTmp = process.env.TMPDIR;
    const privateTmp = await mkdtemp(join(tmpdir(), 'test-fleet-halfway-'));
    process.env.TMPDIR = privateTmp;
    const bad = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'bad' } };
    try {
      await assert.rejects(TestFleet.start({ members: 1, memberCrds: [bad] }), (err: Error) => {
        assert.equal((err as { code?: string }).code, 'ERR_TEST_FLEET');
        assert.match(err.message, /member member-1: installing CRD bad failed/);
        return true;
      });
    } finally {
      if (sharedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = sharedTmp;
    }
    const left = (await childPids()).filter((p) => !childrenBefore.includes(p));
    const names = await Promise.all(left.map((p) => readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '?')));
    assert.deepEqual(left, [], names.map((n) => n.split('\0').slice(0, 2).join(' ')).join('; '));
    assert.deepEqual(await readdir(privateTmp), [], 'no temp dir left by the failed start');
    await rm(privateTmp, { recursive: true, force: true });
  });
});

let modernSkip: string | false = false;
try {
  resolveModernBinaries();
} catch (err) {
  modernSkip = `the modern API server binaries are not installed (OPERATOR_RUNTIME_MODERN_ASSETS; scripts/install-modern-apiserver.sh): ${(err as Error).message.split('\n')[0]}`;
}

describe('TestFleet with modern (1.36 CRD-only) members', { skip: modernSkip }, () => {
  let fleet: TestFleet;
  let members: TestFleetMember[];

  before(async () => {
    fleet = await TestFleet.start({ members: 2, member: { server: 'modern' }, memberCrds: [WIDGET_CRD] });
    members = [...fleet.members];
    await report('modern members', fleet);
  });
  after(async () => {
    await fleet?.stop();
  });

  test('each modern member serves its custom resources through its proxy; a cut one times out while the other answers', async () => {
    for (const m of members) assert.equal(m.env.serverKind, 'modern');
    const [a, b] = await Promise.all(
      members.map((m) => m.client({ backoff: { maxAttempts: 2, initialMs: 5, maxMs: 20 }, requestTimeoutMs: 5_000 })),
    );
    const since = await fleetAuditMark(fleet);
    await a!.create<Widget>({ ...WIDGET, metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } });
    await b!.create<Widget>({ ...WIDGET, metadata: { name: 'w', namespace: 'default' }, spec: { size: 2 } });
    members[0]!.cutOff();
    try {
      await assert.rejects(a!.list(WIDGET, { namespace: 'default', signal: AbortSignal.timeout(1_500) }));
      const listed = await b!.list<Widget>(WIDGET, { namespace: 'default', signal: AbortSignal.timeout(5_000) });
      assert.deepEqual(
        listed.items.map((w) => w.spec.size),
        [2],
      );
    } finally {
      members[0]!.heal();
    }
    const listed = await a!.list<Widget>(WIDGET, { namespace: 'default' });
    assert.deepEqual(
      listed.items.map((w) => w.spec.size),
      [1],
    );
    const audit = await auditFleet({ fleet, resource: WIDGETS, since });
    assert.equal(audit.puts, 2, formatFleetAuditReport(audit));
    assert.equal(audit.lostUpdates, 0, formatFleetAuditReport(audit));
  });
});
