import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  analyzeHistory,
  formatAuditReport,
  registryKey,
  type HistoryEvent,
  type HistoryKv,
} from './consistency-audit.js';

const PREFIX = '/registry/example.com/widgets/';
const KEY = registryKey(PREFIX, 'default', 'w1');

interface Obj {
  uid?: string;
  generation: number;
  observedGeneration?: number;
  conditions?: { type: string; observedGeneration: number }[];
}

/** Builds a key's chain: each step is a PUT (an object) or 'delete'; revisions are 10, 11, … */
function chain(key: string, steps: (Obj | 'delete')[], firstRevision = 10): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  let prev: HistoryKv | undefined;
  let version = 0;
  let createRevision = firstRevision;
  steps.forEach((step, i) => {
    const revision = firstRevision + i;
    if (step === 'delete') {
      events.push({
        type: 'DELETE',
        kv: { key, createRevision: 0, modRevision: revision, version: 0, value: new Uint8Array() },
        ...(prev ? { prev } : {}),
      });
      prev = undefined;
      version = 0;
      return;
    }
    if (version === 0) createRevision = revision;
    version++;
    const kv: HistoryKv = {
      key,
      createRevision,
      modRevision: revision,
      version,
      value: Buffer.from(JSON.stringify(toJson(step))),
    };
    events.push({ type: 'PUT', kv, ...(prev ? { prev } : {}) });
    prev = kv;
  });
  return events;
}

function toJson(o: Obj): object {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w1', namespace: 'default', uid: o.uid ?? 'uid-1', generation: o.generation },
    spec: { size: o.generation },
    ...(o.observedGeneration !== undefined || o.conditions
      ? { status: { observedGeneration: o.observedGeneration, conditions: o.conditions } }
      : {}),
  };
}

describe('analyzeHistory (consistency audit on a synthetic etcd history)', () => {
  test('a clean history of spec bumps, status catching up, delete and re-create reports nothing', () => {
    const events = chain(KEY, [
      { generation: 1 },
      { generation: 1, observedGeneration: 1 },
      { generation: 2, observedGeneration: 1 },
      { generation: 3, observedGeneration: 1 },
      { generation: 3, observedGeneration: 3 },
      'delete',
      { uid: 'uid-2', generation: 1 },
      { uid: 'uid-2', generation: 1, observedGeneration: 1 },
    ]);
    const report = analyzeHistory(events, { prefix: PREFIX });
    assert.equal(report.lostUpdates, 0, formatAuditReport(report));
    assert.equal(report.outOfOrderStatusWrites, 0);
    assert.equal(report.historyGaps, 0);
    assert.equal(report.puts, 7);
    assert.equal(report.deletes, 1);
    assert.deepEqual(report.notConverged, []);
  });

  test('a status written for an older generation than one already recorded is an out-of-order status write', () => {
    const events = chain(KEY, [
      { generation: 2, observedGeneration: 1 },
      { generation: 2, observedGeneration: 2 },
      { generation: 2, observedGeneration: 1 }, // a stale reconcile's status lands last
    ]);
    const report = analyzeHistory(events);
    assert.equal(report.outOfOrderStatusWrites, 1);
    assert.deepEqual(
      report.findings.map((f) => [f.kind, f.revision, f.previousRevision]),
      [['observed-generation-decreased', 12, 11]],
    );
    assert.deepEqual(report.notConverged, [{ key: KEY, generation: 2, observedGeneration: 1 }]);
  });

  test('a condition whose observedGeneration goes back is reported per condition type', () => {
    const events = chain(KEY, [
      { generation: 2, observedGeneration: 2, conditions: [{ type: 'Ready', observedGeneration: 2 }] },
      { generation: 2, observedGeneration: 2, conditions: [{ type: 'Ready', observedGeneration: 1 }] },
    ]);
    assert.deepEqual(
      analyzeHistory(events).findings.map((f) => f.kind),
      ['condition-observed-generation-decreased'],
    );
  });

  test('generation going down or jumping, and a uid swap on a live key, are lost updates', () => {
    const down = analyzeHistory(chain(KEY, [{ generation: 3 }, { generation: 2 }]));
    assert.deepEqual(
      down.findings.map((f) => f.kind),
      ['generation-decreased'],
    );
    const jump = analyzeHistory(chain(KEY, [{ generation: 1 }, { generation: 3 }]));
    assert.deepEqual(
      jump.findings.map((f) => f.kind),
      ['generation-skipped'],
    );
    const swap = analyzeHistory(chain(KEY, [{ generation: 1 }, { uid: 'other', generation: 1 }]));
    assert.deepEqual(
      swap.findings.map((f) => f.kind),
      ['uid-replaced'],
    );
    assert.equal(down.lostUpdates + jump.lostUpdates + swap.lostUpdates, 3);
  });

  test('observedGeneration above generation is reported', () => {
    const report = analyzeHistory(chain(KEY, [{ generation: 1, observedGeneration: 2 }]));
    assert.deepEqual(
      report.findings.map((f) => f.kind),
      ['observed-generation-ahead'],
    );
  });

  test('a recorded write that replaced a revision other than the one it read is a lost update', () => {
    const events = chain(KEY, [
      { generation: 1 },
      { generation: 1, observedGeneration: 1 },
      { generation: 2, observedGeneration: 1 },
      { generation: 2, observedGeneration: 2 },
    ]);
    const ok = analyzeHistory(events, {
      writes: [
        { key: KEY, readRevision: 10, writtenRevision: 11 },
        { key: KEY, readRevision: '12', writtenRevision: '13' },
      ],
    });
    assert.equal(ok.lostUpdates, 0, formatAuditReport(ok));
    // The writer read 11 but its write at 13 replaced 12 (someone's spec change it never saw).
    const blind = analyzeHistory(events, {
      writes: [{ key: KEY, readRevision: 11, writtenRevision: 13, writer: 'replica-a' }],
    });
    assert.equal(blind.lostUpdates, 1);
    assert.equal(blind.findings[0]!.kind, 'write-not-conditioned-on-read');
    assert.match(blind.findings[0]!.detail, /replica-a read revision 11 but replaced revision 12/);
  });

  test('a recorded write absent from the history is reported, one outside the window is not', () => {
    const events = chain(KEY, [{ generation: 1 }, { generation: 1, observedGeneration: 1 }]);
    const report = analyzeHistory(events, {
      startRevision: 10,
      endRevision: 11,
      writes: [
        { key: KEY, readRevision: 10, writtenRevision: 12 },
        { key: KEY, readRevision: 7, writtenRevision: 8 },
      ],
    });
    assert.deepEqual(
      report.findings.map((f) => f.kind),
      [],
    );
    const missing = analyzeHistory(events, {
      startRevision: 10,
      endRevision: 20,
      writes: [{ key: KEY, readRevision: 11, writtenRevision: 15 }],
    });
    assert.deepEqual(
      missing.findings.map((f) => f.kind),
      ['recorded-write-missing'],
    );
  });

  test('the first event takes its baseline from prev_kv, so a regression right at the start is seen', () => {
    const events = chain(KEY, [
      { generation: 4, observedGeneration: 4 },
      { generation: 4, observedGeneration: 3 },
    ]).slice(1);
    assert.ok(events[0]!.prev, 'the slice keeps prev_kv');
    assert.deepEqual(
      analyzeHistory(events).findings.map((f) => f.kind),
      ['observed-generation-decreased'],
    );
  });

  test('a missing event (etcd version gap) is reported as a history gap, not hidden', () => {
    const events = chain(KEY, [{ generation: 1 }, { generation: 1 }, { generation: 1 }]);
    const report = analyzeHistory([events[0]!, events[2]!]);
    assert.equal(report.historyGaps, 1);
  });

  test('protobuf values (built-in kinds) are counted as opaque and not parsed', () => {
    const kv: HistoryKv = {
      key: '/registry/configmaps/default/c',
      createRevision: 5,
      modRevision: 5,
      version: 1,
      value: Buffer.from('k8s\u0000\n\u000fv1'),
    };
    const report = analyzeHistory([{ type: 'PUT', kv }]);
    assert.equal(report.opaqueValues, 1);
    assert.deepEqual(report.findings, []);
  });

  test('events are analysed in revision order whatever order they come in', () => {
    const a = chain(KEY, [
      { generation: 1, observedGeneration: 1 },
      { generation: 2, observedGeneration: 1 },
      { generation: 2, observedGeneration: 2 },
    ]);
    const other = chain(registryKey(PREFIX, 'default', 'w2'), [{ generation: 1 }], 20);
    const report = analyzeHistory([a[2]!, other[0]!, a[0]!, a[1]!]);
    assert.equal(report.keys, 2);
    assert.deepEqual(report.findings, []);
  });
});

test('a recorded no-op write (answered with the revision it read) is not evidence of a lost update', () => {
  // Revisions 10 (create) and 11 (a status write); a later update that changed nothing was answered with 11.
  const history = chain(KEY, [
    { uid: 'u', generation: 1 },
    { uid: 'u', generation: 1, observedGeneration: 1 },
  ]);
  const report = analyzeHistory(history, {
    writes: [{ key: KEY, readRevision: 11, writtenRevision: 11, writer: 'a' }],
  });
  assert.equal(report.lostUpdates, 0, JSON.stringify(report.findings));
  // The same record with a real revision it did not read is still caught.
  const caught = analyzeHistory(history, { writes: [{ key: KEY, readRevision: 9, writtenRevision: 11, writer: 'a' }] });
  assert.equal(caught.lostUpdates, 1);
});
