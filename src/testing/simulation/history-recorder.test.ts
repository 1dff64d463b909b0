import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../core/fake-clock.js';
import { analyzeHistory, formatAuditReport, type HistoryEvent } from '../chaos/consistency-audit.js';
import { FakeClient } from '../fake-client/fake-client.js';
import { HistoryRecorder, HistoryRecorderError, SNAPSHOT_VERSION } from './history-recorder.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const NS = { apiVersion: 'v1', kind: 'Namespace' } as const;
const WKEY = '/registry/example.com/widgets/default/w1';

interface Widget {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; generation?: number; finalizers?: string[] };
  spec: { size: number };
  status?: { observedGeneration?: number };
}

function setup(options: { watchHistoryLimit?: number; objects?: object[] } = {}): {
  fake: FakeClient;
  recorder: HistoryRecorder;
} {
  const fake = new FakeClient({
    clock: new FakeClock(),
    kinds: [{ ...WIDGET, plural: 'widgets', namespaced: true, statusSubresource: true }],
    ...options,
  });
  const recorder = new HistoryRecorder({ store: fake, kinds: [WIDGET, CM, NS] });
  return { fake, recorder };
}

function widget(name: string, size = 1): Widget {
  return { ...WIDGET, metadata: { name, namespace: 'default' }, spec: { size } };
}

async function setSize(fake: FakeClient, name: string, size: number): Promise<void> {
  await fake.patch(WIDGET, name, { spec: { size } }, { namespace: 'default', type: 'merge' });
}

async function setObserved(fake: FakeClient, name: string, observedGeneration: number): Promise<void> {
  await fake.patch(
    WIDGET,
    name,
    { status: { observedGeneration } },
    { namespace: 'default', type: 'merge', subresource: 'status' },
  );
}

function valueOf(e: HistoryEvent): Widget {
  return JSON.parse(Buffer.from(e.kv.value).toString('utf8')) as Widget;
}

test('a correct operator’s history, recorded from the fake, passes the audit unchanged; events are in etcd’s shape', async () => {
  const { fake, recorder } = setup();
  await recorder.start();
  await fake.create(widget('w1'));
  await setObserved(fake, 'w1', 1);
  await setSize(fake, 'w1', 2);
  await setObserved(fake, 'w1', 2);
  await fake.create({ ...CM, metadata: { name: 'c1', namespace: 'default' }, data: { a: '1' } });
  await fake.create({ ...NS, metadata: { name: 'team-a' } });
  await fake.delete(WIDGET, 'w1', { namespace: 'default' });
  await fake.create(widget('w1', 5));
  await recorder.flush();
  recorder.stop();

  const events = recorder.events;
  const report = analyzeHistory(events);
  assert.equal(report.findings.length, 0, formatAuditReport(report));
  assert.equal(report.puts, 7);
  assert.equal(report.deletes, 1);
  assert.deepEqual(report.notConverged, [{ key: WKEY, generation: 1 }]); // the re-created one, never reconciled

  // Every event of every kind, in revision order, up to the store's revision.
  const revisions = events.map((e) => e.kv.modRevision);
  assert.deepEqual(
    revisions,
    [...revisions].sort((a, b) => a - b),
  );
  assert.equal(revisions.at(-1), Number(fake.resourceVersion));
  assert.deepEqual(
    [...new Set(events.map((e) => e.kv.key))],
    [WKEY, '/registry/configmaps/default/c1', '/registry/namespaces/team-a'],
  );

  const w = events.filter((e) => e.kv.key === WKEY);
  assert.deepEqual(
    w.map((e) => [e.type, e.kv.version]),
    [
      ['PUT', 1],
      ['PUT', 2],
      ['PUT', 3],
      ['PUT', 4],
      ['DELETE', 0],
      ['PUT', 1],
    ],
  );
  const created = w[0]!.kv.modRevision;
  assert.deepEqual(
    w.slice(0, 4).map((e) => e.kv.createRevision),
    [created, created, created, created],
  );
  assert.equal(w[5]!.kv.createRevision, w[5]!.kv.modRevision); // a new chain
  assert.equal(w[0]!.prev, undefined);
  assert.equal(w[1]!.prev, w[0]!.kv);
  assert.equal(w[4]!.prev, w[3]!.kv); // DELETE carries the last value
  assert.equal(w[5]!.prev, undefined);
  assert.deepEqual(valueOf(w[3]!).status, { observedGeneration: 2 });
  assert.equal(valueOf(w[3]!).metadata.resourceVersion, String(w[3]!.kv.modRevision));
});

test('a stale status written over a newer one is in the recorded history as observed-generation-decreased', async () => {
  const { fake, recorder } = setup();
  await recorder.start();
  await fake.create(widget('w1'));
  await setObserved(fake, 'w1', 1);
  await setSize(fake, 'w1', 2);
  await setObserved(fake, 'w1', 2);
  await setObserved(fake, 'w1', 1); // an old incarnation's status, written without a precondition
  await recorder.flush();
  recorder.stop();
  const kinds = analyzeHistory(recorder.events).findings.map((f) => [f.kind, f.key]);
  assert.deepEqual(kinds, [['observed-generation-decreased', WKEY]]);
});

test('objects present at start are chain starts: later writes continue them without a history gap', async () => {
  const seeded = { ...widget('w1'), status: { observedGeneration: 1 } };
  const { fake, recorder } = setup({ objects: [seeded, { ...CM, metadata: { name: 'c0', namespace: 'default' } }] });
  await recorder.start();
  const first = recorder.events.filter((e) => e.kv.key === WKEY);
  assert.equal(first.length, 1);
  assert.equal(first[0]!.kv.version, SNAPSHOT_VERSION);
  assert.equal(first[0]!.kv.createRevision, 0);
  assert.equal(first[0]!.prev, undefined);
  await setSize(fake, 'w1', 3);
  await setObserved(fake, 'w1', 2);
  await fake.delete(CM, 'c0', { namespace: 'default' });
  await recorder.flush();
  recorder.stop();
  const report = analyzeHistory(recorder.events);
  assert.equal(report.findings.length, 0, formatAuditReport(report));
  assert.deepEqual(
    recorder.events.filter((e) => e.kv.key === WKEY).map((e) => e.kv.version),
    [SNAPSHOT_VERSION, SNAPSHOT_VERSION + 1, SNAPSHOT_VERSION + 2],
  );
});

test('watches the store ends or expires are resumed without losing or repeating an event', async () => {
  const { fake, recorder } = setup();
  await recorder.start();
  await fake.create(widget('w1'));
  fake.closeWatches();
  await setSize(fake, 'w1', 2);
  await recorder.flush();
  fake.expireWatches();
  await setSize(fake, 'w1', 3);
  await fake.create(widget('w2'));
  await recorder.flush();
  recorder.stop();
  const report = analyzeHistory(recorder.events);
  assert.equal(report.historyGaps, 0, formatAuditReport(report));
  assert.equal(report.puts, 4);
  assert.equal(recorder.events.at(-1)!.kv.modRevision, Number(fake.resourceVersion));
});

test('flush rejects when the fake no longer has the history a resumed watch needs', async () => {
  const { fake, recorder } = setup();
  await recorder.start();
  await fake.create(widget('w1'));
  await recorder.flush();
  // Hold the recorder's next watch request until the change it must resume for is compacted away.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  fake.intercept((req) => (req.verb === 'watch' ? held : undefined));
  fake.closeWatches();
  await setSize(fake, 'w1', 2);
  fake.compact();
  release();
  await assert.rejects(recorder.flush(), HistoryRecorderError);
  recorder.stop();
});

test('a watch that keeps failing makes flush reject instead of returning a partial history', async () => {
  const { fake, recorder } = setup();
  await recorder.start();
  fake.intercept((req) => (req.verb === 'watch' ? new Error('injected') : undefined));
  fake.expireWatches();
  await assert.rejects(recorder.flush(), /could not be read/);
  recorder.stop();
});

test('an unregistered kind fails start', async () => {
  const fake = new FakeClient({ clock: new FakeClock() });
  const recorder = new HistoryRecorder({ store: fake, kinds: [WIDGET] });
  await assert.rejects(recorder.start(), (e: unknown) => (e as { code?: string }).code === 'ERR_NO_KIND_MATCH');
});
