import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../core/object-key.js';
import type { HistoryEvent, HistoryKv } from '../chaos/consistency-audit.js';
import { concurrentReconcileOracle } from './concurrent-reconcile-oracle.js';
import { endStateOracle, firstDifference } from './end-state-oracle.js';
import type { Fault } from './fault.js';
import { lostUpdateOracle } from './lost-update-oracle.js';
import { NORMALIZED_TIME, normalizeObject } from './normalize-object.js';
import { evidenceAttributor } from './oracle-evidence.js';
import {
  DEFAULT_MAX_QUIET_RECONCILES_PER_KEY,
  convergenceOracle,
  finalizerOracle,
  invariantOracle,
  judgeRun,
  quiescenceOracle,
  type OracleOptions,
} from './oracles.js';
import type { CallRecord, ReconcileSpan, RunRecord, WriteRecord } from './simulation-records.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const OPTIONS: OracleOptions = { primaryKinds: [WIDGET] };
const PREFIX = '/registry/example.com/widgets/default/';

interface WidgetShape extends KubeObject {
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

function widget(
  name: string,
  o: { generation?: number; observed?: number; spec?: object; status?: object; meta?: object } = {},
): WidgetShape {
  return {
    ...WIDGET,
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}-${Math.random()}`,
      resourceVersion: String(Math.floor(Math.random() * 1000)),
      creationTimestamp: '2026-01-01T00:00:00Z',
      generation: o.generation ?? 1,
      ...o.meta,
    },
    spec: { size: 1, ...o.spec },
    status: { ...(o.observed !== undefined ? { observedGeneration: o.observed } : {}), ...o.status },
  };
}

function call(at: number, atMs: number, incarnation = 0): CallRecord {
  return { at, incarnation, verb: 'get', ...WIDGET, namespace: 'default', name: 'w1', outcome: 'ok', atMs };
}

function runRecord(r: Partial<RunRecord> = {}): RunRecord {
  return {
    seed: 1,
    faults: [],
    calls: [],
    writes: [],
    reconciles: [],
    history: [],
    finalObjects: [],
    quietWindow: { writes: 0, reconcilesByKey: new Map() },
    stepTimesMs: [0],
    deletedByScenario: [],
    trace: [],
    ...r,
  };
}

/** A key's chain of PUTs (objects) and deletes at revisions first, first+1, … (as etcd's watch shows it). */
function chain(name: string, steps: (WidgetShape | 'delete')[], first = 10): HistoryEvent[] {
  const key = `${PREFIX}${name}`;
  const events: HistoryEvent[] = [];
  let prev: HistoryKv | undefined;
  steps.forEach((step, i) => {
    const modRevision = first + i;
    if (step === 'delete') {
      events.push({
        type: 'DELETE',
        kv: { key, createRevision: 0, modRevision, version: 0, value: new Uint8Array() },
        ...(prev ? { prev } : {}),
      });
      prev = undefined;
      return;
    }
    const value = { ...step, metadata: { ...step.metadata, uid: `uid-${name}`, resourceVersion: String(modRevision) } };
    const kv: HistoryKv = {
      key,
      createRevision: prev ? prev.createRevision : modRevision,
      modRevision,
      version: prev ? prev.version + 1 : 1,
      value: Buffer.from(JSON.stringify(value)),
    };
    events.push({ type: 'PUT', kv, ...(prev ? { prev } : {}) });
    prev = kv;
  });
  return events;
}

function span(s: Partial<ReconcileSpan> & Pick<ReconcileSpan, 'startSeq'>): ReconcileSpan {
  return { controller: 'widgets', key: 'default/w1', incarnation: 0, startedAtMs: s.startSeq, step: 0, ...s };
}

function statusWrite(w: Partial<WriteRecord>): WriteRecord {
  return {
    at: 5,
    incarnation: 1,
    verb: 'patch',
    ...WIDGET,
    namespace: 'default',
    name: 'w1',
    subresource: 'status',
    atMs: 1500,
    ...w,
  };
}

describe('attribution (step and fault of a finding)', () => {
  test('the last step applied and the last fault fired at or before the evidence', () => {
    const faults: Fault[] = [
      { kind: 'error', at: 1, status: 409 },
      { kind: 'crash', at: 3, restartAfterMs: 500 },
      { kind: 'watch-expiry', at: 99 }, // its call was never made: it never fired
    ];
    const run = runRecord({
      faults,
      calls: [call(0, 0), call(1, 100), call(2, 200), call(3, 900)],
      stepTimesMs: [0, 150, 1000],
    });
    const at = evidenceAttributor(run);
    assert.deepEqual(at(50), { step: 0 });
    assert.deepEqual(at(100), { step: 0, fault: 'error@1 (409)' }); // at the fault's own time
    assert.deepEqual(at(150), { step: 1, fault: 'error@1 (409)' }); // at the step's own time
    assert.deepEqual(at(950), { step: 1, fault: 'crash@3 (restart after 500 ms)' });
    assert.deepEqual(at(Infinity), { step: 2, fault: 'crash@3 (restart after 500 ms)' });
    assert.deepEqual(evidenceAttributor(runRecord({ stepTimesMs: [10] }))(5), { step: -1 });
  });
});

describe('convergence', () => {
  test('a live primary object whose status lags its spec fails, naming generation and observedGeneration', () => {
    const run = runRecord({
      finalObjects: [widget('w1', { generation: 3, observed: 2 }), widget('w2', { observed: 1 })],
    });
    const findings = convergenceOracle(run, OPTIONS);
    assert.equal(findings.length, 1);
    assert.equal(findings[0]!.key, 'Widget default/w1');
    assert.match(findings[0]!.message, /metadata\.generation is 3, status\.observedGeneration is 2/);
    assert.equal(findings[0]!.step, 0);
  });

  test('converged objects, other kinds and terminating objects pass; a custom predicate decides', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' } };
    const terminating = widget('w3', {
      generation: 2,
      observed: 1,
      meta: { deletionTimestamp: '2026-01-01T00:00:01Z' },
    });
    const run = runRecord({ finalObjects: [widget('w1', { generation: 2, observed: 2 }), cm, terminating] });
    assert.deepEqual(convergenceOracle(run, OPTIONS), []);
    const ready = (o: KubeObject): boolean => (o as WidgetShape).status?.phase === 'Ready';
    assert.equal(convergenceOracle(run, { ...OPTIONS, converged: ready }).length, 1);
  });
});

describe('quiescence', () => {
  test('writes in the quiet window, or a key reconciled over the limit, fail', () => {
    const run = runRecord({
      quietWindow: {
        writes: 2,
        reconcilesByKey: new Map([
          ['Widget default/w1', DEFAULT_MAX_QUIET_RECONCILES_PER_KEY + 1],
          ['Widget default/w2', 1],
        ]),
      },
    });
    const findings = quiescenceOracle(run, {});
    assert.equal(findings.length, 2);
    assert.match(findings[0]!.message, /2 write\(s\) in the quiet window/);
    assert.equal(findings[1]!.key, 'Widget default/w1');
    assert.match(findings[1]!.message, /a requeue that never ends/);
  });

  test('a quiet window without writes and with few reconciles passes (and the limit is an option)', () => {
    const reconcilesByKey = new Map([['Widget default/w1', DEFAULT_MAX_QUIET_RECONCILES_PER_KEY]]);
    assert.deepEqual(quiescenceOracle(runRecord({ quietWindow: { writes: 0, reconcilesByKey } }), {}), []);
    assert.equal(
      quiescenceOracle(runRecord({ quietWindow: { writes: 0, reconcilesByKey } }), { maxQuietReconcilesPerKey: 1 })
        .length,
      1,
    );
  });
});

describe('end-state', () => {
  const faultFree = runRecord({
    finalObjects: [
      widget('w1', { observed: 1, status: { phase: 'Ready', since: '2026-01-01T00:00:02Z' } }),
      widget('w2', { observed: 1 }),
      { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1', namespace: 'default' } },
    ],
  });

  test('normalized objects that differ, and missing or extra objects, fail; the path and both values are named', () => {
    const run = runRecord({
      finalObjects: [
        widget('w1', { observed: 1, status: { phase: 'Failed', since: '2026-01-01T00:09:00Z' } }),
        widget('w3', { observed: 1 }),
      ],
    });
    const findings = endStateOracle(run, faultFree);
    assert.deepEqual(
      findings.map((f) => f.key),
      ['Widget default/w1', 'Widget default/w2', 'Widget default/w3'],
    );
    assert.match(findings[0]!.message, /status\.phase is "Failed" here but "Ready" without faults/);
    assert.match(findings[1]!.message, /exists at the end of the fault-free run but not of this one/);
    assert.match(findings[2]!.message, /exists at the end of this run but not of the fault-free one/);
  });

  test('objects equal after normalization pass: uid, resourceVersion, generation, times, Events are not compared', () => {
    const run = runRecord({
      finalObjects: [
        widget('w1', { generation: 4, observed: 4, status: { phase: 'Ready', since: '2026-01-01T00:07:00.123Z' } }),
        widget('w2', { generation: 2, observed: 2 }),
      ],
    });
    assert.deepEqual(endStateOracle(run, faultFree), []);
    assert.deepEqual(endStateOracle(run, undefined), []);
  });

  test('normalizeObject drops server-assigned fields, reduces owner references and replaces date-times', () => {
    const obj = {
      ...widget('w1', { generation: 3, observed: 3 }),
      metadata: {
        ...widget('w1').metadata,
        selfLink: '/x',
        managedFields: [{ manager: 'm' }],
        deletionTimestamp: '2026-01-01T00:00:03+00:00',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Owner', name: 'o', uid: 'u', blockOwnerDeletion: true }],
        annotations: { at: '2026-01-01T00:00:03Z', text: 'not 2026-01-01' },
      },
      status: {
        observedGeneration: 3,
        conditions: [{ type: 'Ready', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:03Z' }],
      },
    };
    assert.deepEqual(normalizeObject(obj), {
      ...WIDGET,
      metadata: {
        name: 'w1',
        namespace: 'default',
        deletionTimestamp: NORMALIZED_TIME,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Owner', name: 'o', controller: false }],
        annotations: { at: NORMALIZED_TIME, text: 'not 2026-01-01' },
      },
      spec: { size: 1 },
      status: { conditions: [{ type: 'Ready', lastTransitionTime: NORMALIZED_TIME }] },
    });
    assert.equal(obj.metadata.selfLink, '/x'); // the input is untouched
  });

  test('firstDifference walks objects and arrays to the first differing leaf', () => {
    assert.deepEqual(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }), { path: 'a[1].b', got: 2, want: 3 });
    assert.deepEqual(firstDifference({ a: [1] }, { a: [1, 2] }), { path: 'a[1]', got: undefined, want: 2 });
    assert.equal(firstDifference({ a: 1, b: undefined }, { a: 1 }), undefined);
  });
});

describe('concurrent-reconcile', () => {
  test('two finished spans of one key overlapping in one incarnation fail', () => {
    const run = runRecord({ reconciles: [span({ startSeq: 1, endSeq: 5 }), span({ startSeq: 3, endSeq: 4 })] });
    const findings = concurrentReconcileOracle(run);
    assert.equal(findings.length, 1);
    assert.equal(findings[0]!.key, 'default/w1');
    assert.match(findings[0]!.message, /twice at once in incarnation 0/);
  });

  test('sequential spans, other keys and other controllers pass', () => {
    const run = runRecord({
      reconciles: [
        span({ startSeq: 1, endSeq: 2 }),
        span({ startSeq: 2, endSeq: 3 }),
        span({ startSeq: 1, endSeq: 9, key: 'default/w2' }),
        span({ startSeq: 1, endSeq: 9, controller: 'other' }),
      ],
    });
    assert.deepEqual(concurrentReconcileOracle(run), []);
  });

  test('an unfinished span of the last (live) incarnation overlaps every later span', () => {
    const run = runRecord({ reconciles: [span({ startSeq: 1 }), span({ startSeq: 7, endSeq: 8 })] });
    assert.equal(concurrentReconcileOracle(run).length, 1);
  });

  test('an unfinished span of a crashed incarnation ends at the crash: the restarted process does not overlap it', () => {
    const run = runRecord({
      faults: [{ kind: 'crash', at: 1, restartAfterMs: 500 }],
      calls: [call(0, 100, 0), { ...call(1, 120, 0), outcome: 'crashed' }, call(2, 620, 1)],
      reconciles: [
        span({ startSeq: 1, startedAtMs: 100 }),
        span({ startSeq: 2, startedAtMs: 620, endSeq: 3, incarnation: 1 }),
      ],
    });
    assert.deepEqual(concurrentReconcileOracle(run), []);
  });

  test('an old leader still calling the API while the new one reconciles the same key fails', () => {
    const run = runRecord({
      faults: [{ kind: 'leader-change', at: 1, overlapMs: 1000 }],
      calls: [call(0, 100, 0), call(1, 200, 1), call(2, 900, 0)], // incarnation 0 runs on until 900 ms
      reconciles: [
        span({ startSeq: 1, startedAtMs: 100 }),
        span({ startSeq: 2, startedAtMs: 300, endSeq: 3, incarnation: 1 }),
      ],
    });
    const findings = concurrentReconcileOracle(run);
    assert.equal(findings.length, 1);
    assert.match(findings[0]!.message, /in incarnations 0 and 1 at once/);
    assert.equal(findings[0]!.fault, 'leader-change@1 (old leader runs on 1000 ms)');
  });
});

describe('finalizer', () => {
  test('a terminating object and an object the scenario deleted that is still there fail', () => {
    const stuck = widget('w1', {
      meta: { deletionTimestamp: '2026-01-01T00:00:05Z', finalizers: ['example.com/cleanup'] },
    });
    const run = runRecord({
      finalObjects: [stuck, widget('w2')],
      deletedByScenario: ['example.com/v1 Widget default/w1', 'example.com/v1 Widget default/w2'],
    });
    const findings = finalizerOracle(run);
    assert.deepEqual(
      findings.map((f) => f.key),
      ['Widget default/w1', 'Widget default/w2'],
    );
    assert.match(findings[0]!.message, /stuck terminating \(the scenario deleted it\).*example\.com\/cleanup/);
    assert.match(findings[1]!.message, /deleted by the scenario but is still present/);
  });

  test('deleted objects gone at the end, and ones deleted then re-created (a DELETE in the history), pass', () => {
    const run = runRecord({
      finalObjects: [widget('w2')],
      history: chain('w2', [widget('w2'), 'delete', widget('w2')]),
      deletedByScenario: ['example.com/v1 Widget default/w1', 'example.com/v1 Widget default/w2'],
    });
    assert.deepEqual(finalizerOracle(run), []);
  });
});

describe('lost-update', () => {
  test('generation-decreased and observed-generation-decreased in the history fail, timed by the operator’s write', () => {
    const history = chain('w1', [
      widget('w1', { generation: 1 }),
      widget('w1', { generation: 2 }),
      widget('w1', { generation: 2, observed: 2 }),
      widget('w1', { generation: 2, observed: 1 }), // rev 13: a stale status
      widget('w1', { generation: 1, observed: 1 }), // rev 14: a stale whole object
    ]);
    const run = runRecord({
      faults: [{ kind: 'stale-cache', at: 0, forMs: 1000 }],
      calls: [call(0, 50)],
      stepTimesMs: [0, 40],
      history,
      writes: [statusWrite({ resultResourceVersion: '13', atMs: 400, subresource: undefined })],
    });
    const findings = lostUpdateOracle(run);
    assert.deepEqual(
      findings.map((f) => /(generation-decreased|observed-generation-decreased)/.exec(f.message)?.[1]),
      ['observed-generation-decreased', 'generation-decreased'],
    );
    assert.equal(findings[0]!.key, 'Widget default/w1');
    assert.equal(findings[0]!.step, 1);
    assert.equal(findings[0]!.fault, 'stale-cache@0 (events 1000 ms late)');
  });

  test('a status write without precondition over a status it had not seen fails', () => {
    const history = chain('w1', [
      widget('w1', { observed: 1, status: { replicas: 1 } }), // 10: what the writer saw
      widget('w1', { observed: 1, status: { replicas: 3 } }), // 11: another writer's status
      widget('w1', { observed: 1, status: { replicas: 2 } }), // 12: the blind write
    ]);
    const run = runRecord({
      history,
      writes: [
        statusWrite({ observedResourceVersion: '10', replacedResourceVersion: '11', resultResourceVersion: '12' }),
      ],
    });
    const findings = lostUpdateOracle(run);
    assert.equal(findings.length, 1);
    assert.equal(findings[0]!.key, 'Widget default/w1');
    assert.match(findings[0]!.message, /overwrote a status it had not seen: it had last seen revision 10/);
    assert.match(findings[0]!.message, /"replicas":3/);
  });

  test('a clean history, and status writes that were conditioned, saw what they replaced or replaced an equal status, pass', () => {
    const history = chain('w1', [
      widget('w1', { generation: 1 }),
      widget('w1', { generation: 1, observed: 1 }), // 11
      widget('w1', { generation: 1, observed: 1, meta: { labels: { a: 'b' } } }), // 12: status unchanged
      widget('w1', { generation: 1, observed: 1, status: { replicas: 1 } }), // 13
      'delete',
      widget('w1', { generation: 1 }),
    ]);
    const run = runRecord({
      history,
      writes: [
        statusWrite({ observedResourceVersion: '11', replacedResourceVersion: '12', resultResourceVersion: '13' }),
        statusWrite({
          observedResourceVersion: '10',
          replacedResourceVersion: '12',
          preconditionResourceVersion: '12',
        }),
        statusWrite({ observedResourceVersion: '12', replacedResourceVersion: '12', resultResourceVersion: '13' }),
        statusWrite({ observedResourceVersion: '10', replacedResourceVersion: '11', subresource: undefined }),
      ],
    });
    assert.deepEqual(lostUpdateOracle(run), []);
  });
});

describe('invariant', () => {
  test('each string the user returns is a finding; none is a pass', () => {
    const run = runRecord({ finalObjects: [widget('w1'), widget('w2')] });
    const atMostOne = (objects: readonly KubeObject[]): string[] =>
      objects.length > 1 ? [`${objects.length} widgets exist, at most 1 allowed`] : [];
    const findings = invariantOracle(run, { invariants: atMostOne });
    assert.deepEqual(findings, [{ oracle: 'invariant', step: 0, message: '2 widgets exist, at most 1 allowed' }]);
    assert.deepEqual(invariantOracle(runRecord({ finalObjects: [widget('w1')] }), { invariants: atMostOne }), []);
  });
});

describe('judgeRun', () => {
  test('a clean run has no findings; a broken one gets one per oracle, each with step and fault', () => {
    const clean = runRecord({
      finalObjects: [widget('w1', { observed: 1 })],
      history: chain('w1', [widget('w1'), widget('w1', { observed: 1 })]),
      reconciles: [span({ startSeq: 1, endSeq: 2 })],
    });
    assert.deepEqual(judgeRun(clean, clean, OPTIONS), []);

    const broken = runRecord({
      faults: [{ kind: 'timeout', at: 0, committed: true }],
      calls: [call(0, 10)],
      stepTimesMs: [0, 5],
      finalObjects: [
        widget('w1', { generation: 2, observed: 1 }),
        widget('w9', { meta: { deletionTimestamp: '2026-01-01T00:00:05Z', finalizers: ['f'] } }),
      ],
      history: chain('w1', [
        widget('w1', { observed: 2, generation: 2 }),
        widget('w1', { observed: 1, generation: 2 }),
      ]),
      writes: [statusWrite({ resultResourceVersion: '11', atMs: 15, subresource: undefined })],
      reconciles: [span({ startSeq: 1, startedAtMs: 20 }), span({ startSeq: 2, startedAtMs: 30, endSeq: 3 })],
      quietWindow: { writes: 1, reconcilesByKey: new Map() },
    });
    const findings = judgeRun(broken, clean, { ...OPTIONS, invariants: () => ['no w9 expected'] });
    assert.deepEqual([...new Set(findings.map((f) => f.oracle))].sort(), [
      'concurrent-reconcile',
      'convergence',
      'end-state',
      'finalizer',
      'invariant',
      'lost-update',
      'quiescence',
    ]);
    for (const f of findings) {
      assert.equal(f.step, 1, f.message);
      assert.equal(f.fault, 'timeout@0 (after the write took effect)', f.message);
    }
  });
});
