import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { computeKstatus, type KstatusStatus } from '../core/kstatus-rules.js';
import { defineCustomKind } from '../crd/custom-kind.js';
import { argoCdHealthLua, fluxHealthCheckExpr, hasSuspendField } from './health-checks.js';
import { evaluateArgoCdHealthLua, evaluateFluxHealthCheck } from './testing/health-check-evaluators.js';

const WIDGET = defineCustomKind({
  group: 'test.operator-runtime.io',
  names: { kind: 'Widget', plural: 'widgets' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ size: Type.Integer() }) } }],
});
const PAUSABLE = defineCustomKind({
  group: 'test.operator-runtime.io',
  names: { kind: 'Pausable', plural: 'pausables' },
  scope: 'Namespaced',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      schema: { spec: Type.Object({ suspend: Type.Optional(Type.Boolean()) }) },
    },
  ],
});

/** What each tool reports for a kstatus status: Flux has no Terminating, Argo CD no Failed. */
const FLUX_FOR: Record<KstatusStatus, string> = {
  Terminating: 'InProgress',
  InProgress: 'InProgress',
  Failed: 'Failed',
  Current: 'Current',
};
const ARGO_FOR: Record<KstatusStatus, string> = {
  Terminating: 'Progressing',
  InProgress: 'Progressing',
  Failed: 'Degraded',
  Current: 'Healthy',
};

const cond = (type: string, status: string, observedGeneration?: number, reason = `${type}Reason`) => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
});
const obj = (generation: number, status?: object, extra: object = {}) => ({
  apiVersion: 'test.operator-runtime.io/v1',
  kind: 'Widget',
  metadata: { name: 'w', namespace: 'default', generation, ...extra },
  spec: { size: 1 },
  ...(status ? { status } : {}),
});

// Edge cases the objects from the API server (examples/database-operator/health-checks.int.test.ts)
// do not all reach: stale conditions, both flags set by a writer that ignores the helpers, no Ready.
const ROWS: readonly { name: string; object: Record<string, unknown>; kstatus: KstatusStatus }[] = [
  {
    name: 'ready',
    object: obj(2, { observedGeneration: 2, conditions: [cond('Ready', 'True', 2)] }),
    kstatus: 'Current',
  },
  {
    name: 'reconciling',
    object: obj(2, { observedGeneration: 2, conditions: [cond('Ready', 'False', 2), cond('Reconciling', 'True', 2)] }),
    kstatus: 'InProgress',
  },
  {
    name: 'stalled',
    object: obj(2, { observedGeneration: 2, conditions: [cond('Ready', 'False', 2), cond('Stalled', 'True', 2)] }),
    kstatus: 'Failed',
  },
  {
    name: 'Reconciling and Stalled both True: Reconciling wins (Flux evaluates inProgress first)',
    object: obj(1, { observedGeneration: 1, conditions: [cond('Stalled', 'True', 1), cond('Reconciling', 'True', 1)] }),
    kstatus: 'InProgress',
  },
  {
    name: 'Ready and Stalled both True: Stalled wins',
    object: obj(1, { observedGeneration: 1, conditions: [cond('Ready', 'True', 1), cond('Stalled', 'True', 1)] }),
    kstatus: 'Failed',
  },
  {
    name: 'old generation',
    object: obj(3, { observedGeneration: 2, conditions: [cond('Ready', 'True', 2)] }),
    kstatus: 'InProgress',
  },
  {
    name: 'Ready from an older generation although status.observedGeneration moved on',
    object: obj(3, { observedGeneration: 3, conditions: [cond('Ready', 'True', 2)] }),
    kstatus: 'InProgress',
  },
  {
    name: 'a stale Stalled is not read',
    object: obj(3, { observedGeneration: 3, conditions: [cond('Ready', 'True', 3), cond('Stalled', 'True', 2)] }),
    kstatus: 'Current',
  },
  {
    name: 'conditions without observedGeneration count',
    object: obj(1, { observedGeneration: 1, conditions: [cond('Ready', 'True')] }),
    kstatus: 'Current',
  },
  { name: 'observed, no conditions', object: obj(1, { observedGeneration: 1 }), kstatus: 'InProgress' },
  {
    name: 'status without observedGeneration',
    object: obj(1, { conditions: [cond('Ready', 'True', 1)] }),
    kstatus: 'InProgress',
  },
  {
    name: 'deleting, no status',
    object: obj(1, undefined, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
    kstatus: 'Terminating',
  },
  {
    name: 'deleting while Ready',
    object: obj(1, { observedGeneration: 1, conditions: [cond('Ready', 'True', 1)] }, { deletionTimestamp: 'x' }),
    kstatus: 'Terminating',
  },
];

describe('generated health checks agree with the kstatus rules', () => {
  const flux = fluxHealthCheckExpr(WIDGET);
  const lua = argoCdHealthLua(WIDGET);

  test('Flux CEL, evaluated as Flux does, on every row', () => {
    for (const row of ROWS) {
      assert.equal(computeKstatus(row.object).status, row.kstatus, `${row.name}: the rules`);
      const verdict = evaluateFluxHealthCheck(flux, row.object);
      assert.equal(verdict.status, FLUX_FOR[row.kstatus], `${row.name}: Flux (${verdict.decidedBy})`);
    }
  });

  test('Argo CD Lua, run by Lua 5.1, on every row; the message carries the deciding reason', async () => {
    const verdicts = await evaluateArgoCdHealthLua(
      lua,
      ROWS.map((r) => r.object),
    );
    assert.equal(verdicts.length, ROWS.length);
    ROWS.forEach((row, i) => assert.equal(verdicts[i]!.status, ARGO_FOR[row.kstatus], row.name));
    assert.equal(verdicts[2]!.message, 'StalledReason: Stalled is True');
    assert.equal(verdicts[5]!.message, 'Waiting for the operator to observe generation 3');
  });

  test('an object no controller has written yet: Flux errors on the missing status and keeps waiting (Unknown), Argo CD says Progressing', async () => {
    const fresh = obj(1);
    assert.equal(computeKstatus(fresh).status, 'InProgress');
    const verdict = evaluateFluxHealthCheck(flux, fresh);
    assert.equal(verdict.status, 'Unknown');
    assert.match(verdict.decidedBy, /status/);
    assert.deepEqual(await evaluateArgoCdHealthLua(lua, [fresh]), [
      { status: 'Progressing', message: 'Waiting for the operator to observe generation 1' },
    ]);
  });

  test('a kind with a boolean spec.suspend: Argo CD reports Suspended while it is true; without one, suspend means nothing', async () => {
    assert.equal(hasSuspendField(PAUSABLE), true);
    assert.equal(hasSuspendField(WIDGET), false);
    const suspended = { ...ROWS[0]!.object, spec: { suspend: true } };
    const [pausable, widget] = await Promise.all([
      evaluateArgoCdHealthLua(argoCdHealthLua(PAUSABLE), [suspended, ROWS[0]!.object]),
      evaluateArgoCdHealthLua(lua, [suspended]),
    ]);
    assert.deepEqual(
      pausable.map((v) => v.status),
      ['Suspended', 'Healthy'],
    );
    assert.equal(widget[0]!.status, 'Healthy');
  });

  test('the Lua harness carries strings intact: quotes, backslashes, a newline before a digit (printed as a space), UTF-8', async () => {
    const [verdict] = await evaluateArgoCdHealthLua('return { status = obj.s, message = obj.m }', [
      { s: 'a"b\\c', m: 'x\n1 é' },
    ]);
    assert.deepEqual(verdict, { status: 'a"b\\c', message: 'x 1 é' });
  });
});
