import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/api-error.js';
import { FakeClock } from '../core/fake-clock.js';
import { DEFAULT_RETRY, isResourceVersionConflict, retryOnConflict } from './retry-on-conflict.js';

const conflict = (): ApiError => new ApiError({ status: 409, reason: 'Conflict', message: 'modified' });

/** Runs `p` to completion, advancing the fake clock whenever it waits. */
async function drive<T>(clock: FakeClock, p: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = p.finally(() => (settled = true));
  tracked.catch(() => {});
  while (!settled) await clock.advance(clock.nextTimerInMs() ?? 0);
  return tracked;
}

test('the defaults are client-go DefaultRetry: 5 attempts, 10 ms, factor 1, jitter 0.1, no cap', () => {
  assert.deepEqual({ ...DEFAULT_RETRY }, { maxAttempts: 5, initialMs: 10, maxMs: Infinity, factor: 1, jitter: 0.1 });
});

test('a conflict is retried until fn succeeds, re-running fn each time', async () => {
  const clock = new FakeClock();
  let calls = 0;
  const result = await drive(
    clock,
    retryOnConflict(
      async (attempt) => {
        calls++;
        assert.equal(attempt, calls);
        if (calls < 3) throw conflict();
        return 'ok';
      },
      { clock, random: () => 0 },
    ),
  );
  assert.equal(result, 'ok');
  assert.equal(calls, 3);
});

test('after steps attempts the last conflict is thrown', async () => {
  const clock = new FakeClock();
  let calls = 0;
  const last = conflict();
  await assert.rejects(
    drive(
      clock,
      retryOnConflict(
        async () => {
          calls++;
          throw calls === 5 ? last : conflict();
        },
        { clock },
      ),
    ),
    (err) => err === last,
  );
  assert.equal(calls, 5);
});

test('any other error passes through at once, without a wait', async () => {
  const clock = new FakeClock();
  let calls = 0;
  const p = retryOnConflict(
    async () => {
      calls++;
      throw new ApiError({ status: 422, reason: 'Invalid', message: 'bad' });
    },
    { clock },
  );
  await assert.rejects(p, (err: ApiError) => err.status === 422);
  assert.equal(calls, 1);
  assert.equal(clock.pendingTimers, 0);
});

test('AlreadyExists (also a 409) is not a conflict and is not retried', async () => {
  let calls = 0;
  await assert.rejects(
    retryOnConflict(
      async () => {
        calls++;
        throw new ApiError({ status: 409, reason: 'AlreadyExists', message: 'exists' });
      },
      { clock: new FakeClock() },
    ),
  );
  assert.equal(calls, 1);
});

test('a server-side apply ownership conflict (409 with FieldManagerConflict causes) is not retried', async () => {
  let calls = 0;
  const ownership = new ApiError({
    status: 409,
    reason: 'Conflict',
    message: 'Apply failed with 1 conflict: conflict with "kubectl-edit": .data.color',
    // As the API server sends it: StatusCause's type is JSON `reason`.
    details: {
      causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-edit"', field: '.data.color' }],
    },
  });
  await assert.rejects(
    retryOnConflict(
      async () => {
        calls++;
        throw ownership;
      },
      { clock: new FakeClock() },
    ),
    (err) => err === ownership,
  );
  assert.equal(calls, 1);
  assert.ok(isResourceVersionConflict(conflict()));
  assert.ok(!isResourceVersionConflict(ownership));
});

test('delays grow by factor with jitter in [d, d*(1+jitter)) as client-go wait.Backoff', async () => {
  const clock = new FakeClock();
  const at: number[] = [];
  await assert.rejects(
    drive(
      clock,
      retryOnConflict(
        async () => {
          at.push(clock.monotonicNow());
          throw conflict();
        },
        { clock, backoff: { maxAttempts: 4, initialMs: 100, factor: 2, jitter: 0.5 }, random: () => 0.5 },
      ),
    ),
  );
  const gaps = at.slice(1).map((t, i) => t - at[i]!);
  assert.deepEqual(gaps, [125, 250, 500]);
});

test('an abort during the backoff wait stops retrying with AbortedError', async () => {
  const clock = new FakeClock();
  const ac = new AbortController();
  let calls = 0;
  const p = retryOnConflict(
    async () => {
      calls++;
      throw conflict();
    },
    { clock, signal: ac.signal },
  );
  await clock.advance(1);
  ac.abort();
  await assert.rejects(p, { code: 'ERR_ABORTED' });
  assert.equal(calls, 1);
});

test('an already-aborted signal runs fn zero times', async () => {
  let calls = 0;
  await assert.rejects(
    retryOnConflict(async () => void calls++, { signal: AbortSignal.abort() }),
    { code: 'ERR_ABORTED' },
  );
  assert.equal(calls, 0);
});

test('invalid options are refused', async () => {
  await assert.rejects(
    retryOnConflict(async () => 1, { backoff: { maxAttempts: 0 } }),
    { code: 'ERR_INVALID_OPTION', option: 'backoff.maxAttempts' },
  );
  await assert.rejects(
    retryOnConflict(async () => 1, { backoff: { factor: 0.5 } }),
    { code: 'ERR_INVALID_OPTION', option: 'backoff.factor' },
  );
});
