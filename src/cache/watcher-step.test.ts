import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/api-error.js';
import { ResponseTooLargeError } from '../client/body-limit.js';
import { TransportError } from '../client/transport.js';
import { ListTimeoutError, WatchClosedEarlyError, WatchListProtocolError, WatchStalledError } from './errors.js';
import { afterProgress, NO_FAILURES, type FailureHistory, type WatcherState } from './watcher-state.js';
import { afterFailure, classifyFailure, type FailureDecision, type FailureKind } from './watcher-step.js';
import type { WatcherRestartReason } from './cache-metrics.js';

const watching: WatcherState = { phase: 'watching', resourceVersion: '42', watchList: false };
const watchingWL: WatcherState = { phase: 'watching', resourceVersion: '42', watchList: true };
const firstPage: WatcherState = { phase: 'listing', quorum: false, continue: undefined, watchList: false };
const laterPage: WatcherState = { phase: 'listing', quorum: false, continue: 'c1', watchList: false };
const quorumPage: WatcherState = { phase: 'listing', quorum: true, continue: undefined, watchList: false };
const streaming: WatcherState = { phase: 'streaming', quorum: false, watchList: true };
const streamingQuorum: WatcherState = { phase: 'streaming', quorum: true, watchList: true };
const relist = (watchList = false): WatcherState => ({ phase: 'empty', quorum: true, listOnce: false, watchList });

const gone = new ApiError({ status: 410, reason: 'Expired', message: 'too old resource version' });
const tooLargeRv = new ApiError({
  status: 504,
  reason: 'Timeout',
  message: 'Too large resource version: 9, current: 3',
  details: { causes: [{ reason: 'ResourceVersionTooLarge' }] },
});
const unprocessable = new ApiError({ status: 422, reason: 'Invalid', message: 'resourceVersionMatch: Forbidden' });
const badRequest = new ApiError({ status: 400, reason: 'BadRequest', message: 'sendInitialEvents: unknown' });
const serverError = new ApiError({ status: 500, message: 'internal' });
const unavailable = new ApiError({ status: 503, message: 'unavailable' });
const throttled = new ApiError({ status: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing' });
const forbidden = new ApiError({ status: 403, reason: 'Forbidden', message: 'configmaps is forbidden' });
const networkError = (code: string): TransportError =>
  new TransportError('WATCH', '/api/v1/configmaps', `watch stream failed (${code})`, {
    cause: Object.assign(new Error(code), { code }),
  });
const refused = networkError('ECONNREFUSED');
const reset = networkError('ECONNRESET');
const tooLargeResponse = new ResponseTooLargeError('GET', '/api/v1/configmaps?limit=2&resourceVersion=0', 1024);
const stalled = new WatchStalledError(330_000);
const closedEarly = new WatchClosedEarlyError(3);

const NOW = 1_000_000;
const healthyFor = (ms: number): FailureHistory => ({ ...NO_FAILURES, healthySinceMs: NOW - ms });
const after = (lastReason: FailureHistory['lastReason'], watchEventSinceFailure = false): FailureHistory => ({
  ...NO_FAILURES,
  consecutiveFailures: 1,
  lastReason,
  watchEventSinceFailure,
});

/** What a row expects: the decision without its history (checked by its own test below). */
type Expected =
  | { readonly kind: 'watch-list-refused'; readonly next: WatcherState }
  | Omit<Extract<FailureDecision, { kind: 'retry' }>, 'history' | 'resetBackoff'>;

interface Row {
  readonly behaviour: string;
  readonly when: {
    readonly state: WatcherState;
    readonly error: unknown;
    /** How `classifyFailure` sees `error`. */
    readonly kind: FailureKind;
    readonly history?: FailureHistory;
    /** Expected `resetBackoff` (false when absent). */
    readonly resetBackoff?: boolean;
  };
  readonly then: Expected;
}

const retry = (next: WatcherState, reason: WatcherRestartReason, wait: 'none' | 'backoff'): Expected => ({
  kind: 'retry',
  next,
  reason,
  wait,
});
const refusedWatchList = (next: WatcherState): Expected => ({ kind: 'watch-list-refused', next });

const rows: readonly Row[] = [
  // 410 / too old, and a resourceVersion too large
  {
    behaviour: '410 during a watch relists with a quorum, paged read, at once',
    when: { state: watching, error: gone, kind: 'gone' },
    then: retry(relist(), 'gone', 'none'),
  },
  {
    behaviour: '410 again with no watch event in between backs off instead of relisting in a hot loop',
    when: { state: watching, error: gone, kind: 'gone', history: after('gone') },
    then: retry(relist(), 'gone', 'backoff'),
  },
  {
    behaviour: '410 again after watch events since the last one is routine: relist at once',
    when: { state: watching, error: gone, kind: 'gone', history: after('gone', true) },
    then: retry(relist(), 'gone', 'none'),
  },
  {
    behaviour: 'an expired continue token (410) restarts the list from scratch with a quorum read',
    when: { state: laterPage, error: gone, kind: 'gone' },
    then: retry(relist(), 'gone', 'none'),
  },
  {
    behaviour: 'a resourceVersion too large for the server relists with a quorum read, as client-go does',
    when: { state: firstPage, error: tooLargeRv, kind: 'gone' },
    then: retry(relist(), 'gone', 'none'),
  },
  {
    behaviour: 'a relist keeps the watch-list choice: after a 410 the next sync may be a watch-list again',
    when: { state: watchingWL, error: gone, kind: 'gone' },
    then: retry(relist(true), 'gone', 'none'),
  },

  // 400/422: watch-list refused
  {
    behaviour: 'a server refusing sendInitialEvents (422) falls back to list+watch for good, at once, not as a failure',
    when: { state: streaming, error: unprocessable, kind: 'invalid-request' },
    then: refusedWatchList({ phase: 'empty', quorum: false, listOnce: false, watchList: false }),
  },
  {
    behaviour: 'a 400 to a watch-list request is a refusal too, and a quorum sync stays a quorum list',
    when: { state: streamingQuorum, error: badRequest, kind: 'invalid-request' },
    then: refusedWatchList({ phase: 'empty', quorum: true, listOnce: false, watchList: false }),
  },
  {
    behaviour: 'a 422 to an ordinary watch is only an error: back off and resume from the same resourceVersion',
    when: { state: watchingWL, error: unprocessable, kind: 'invalid-request' },
    then: retry(watchingWL, 'error', 'backoff'),
  },

  // other failures of a watch-list before its bookmark
  {
    behaviour: 'a 5xx during a watch-list before its bookmark falls back to one list+watch sync, at once',
    when: { state: streaming, error: serverError, kind: 'error' },
    then: retry({ phase: 'empty', quorum: false, listOnce: true, watchList: true }, 'error', 'none'),
  },
  {
    behaviour: 'a 410 during a watch-list before its bookmark makes the one list+watch sync a quorum read',
    when: { state: streaming, error: gone, kind: 'gone' },
    then: retry({ phase: 'empty', quorum: true, listOnce: true, watchList: true }, 'gone', 'none'),
  },
  {
    behaviour: 'a watch-list stream ending before its bookmark falls back to one list+watch sync',
    when: { state: streamingQuorum, error: new WatchListProtocolError('closed early'), kind: 'error' },
    then: retry({ phase: 'empty', quorum: true, listOnce: true, watchList: true }, 'error', 'none'),
  },
  {
    behaviour: 'a silent watch-list before its bookmark falls back to one list+watch sync',
    when: { state: streaming, error: stalled, kind: 'stalled', history: after('stalled') },
    then: retry({ phase: 'empty', quorum: false, listOnce: true, watchList: true }, 'stalled', 'none'),
  },
  {
    behaviour: 'a 429 to a watch-list (storage still initializing) asks the same watch-list again after the backoff',
    when: { state: streamingQuorum, error: throttled, kind: 'not-yet' },
    then: retry(streamingQuorum, 'error', 'backoff'),
  },
  {
    behaviour: 'a refused connection for a watch-list asks the same watch-list again after the backoff, as client-go',
    when: { state: streaming, error: refused, kind: 'not-yet' },
    then: retry(streaming, 'error', 'backoff'),
  },
  {
    behaviour: 'a reset connection during a watch-list before its bookmark falls back to one list+watch sync',
    when: { state: streaming, error: reset, kind: 'error' },
    then: retry({ phase: 'empty', quorum: false, listOnce: true, watchList: true }, 'error', 'none'),
  },

  // network, 429, 5xx, 403
  {
    behaviour: 'a reset connection during a watch backs off and resumes from the last resourceVersion',
    when: { state: watching, error: reset, kind: 'error' },
    then: retry(watching, 'error', 'backoff'),
  },
  {
    behaviour: 'a refused connection for a watch backs off and resumes from the last resourceVersion',
    when: { state: watching, error: refused, kind: 'not-yet' },
    then: retry(watching, 'error', 'backoff'),
  },
  {
    behaviour: 'a 503 during a watch backs off and resumes from the last resourceVersion',
    when: { state: watching, error: unavailable, kind: 'error' },
    then: retry(watching, 'error', 'backoff'),
  },
  {
    behaviour: 'a 429 during a watch backs off and resumes from the last resourceVersion',
    when: { state: watching, error: throttled, kind: 'not-yet' },
    then: retry(watching, 'error', 'backoff'),
  },
  {
    behaviour: 'a 503 on a list page backs off and asks the same page again (same continue token)',
    when: { state: laterPage, error: unavailable, kind: 'error' },
    then: retry(laterPage, 'error', 'backoff'),
  },
  {
    behaviour: "a 429 that outlasted the client's own retries on a list page backs off and asks the same page again",
    when: { state: laterPage, error: throttled, kind: 'not-yet' },
    then: retry(laterPage, 'error', 'backoff'),
  },
  {
    behaviour: 'a 403 on a list (RBAC not granted yet) backs off and asks again, forever',
    when: { state: firstPage, error: forbidden, kind: 'error', history: after('error') },
    then: retry(firstPage, 'error', 'backoff'),
  },
  {
    behaviour: 'a source that throws something not an Error backs off like any error',
    when: { state: firstPage, error: 'boom', kind: 'error' },
    then: retry(firstPage, 'error', 'backoff'),
  },

  // a response too large
  {
    behaviour: 'a resourceVersion=0 list past maxResponseBytes is retried as a paged quorum list, after the backoff',
    when: { state: firstPage, error: tooLargeResponse, kind: 'response-too-large' },
    then: retry(relist(), 'error', 'backoff'),
  },
  {
    behaviour: 'a quorum list page too large is asked again as it is, after the backoff',
    when: { state: quorumPage, error: tooLargeResponse, kind: 'response-too-large' },
    then: retry(quorumPage, 'error', 'backoff'),
  },

  // timeouts and silent watches
  {
    behaviour: 'a list page that never answered (list timeout) backs off and is asked again',
    when: { state: laterPage, error: new ListTimeoutError(120_000), kind: 'error' },
    then: retry(laterPage, 'error', 'backoff'),
  },
  {
    behaviour: 'a silent watch torn down by the stall guard resumes from its resourceVersion at once',
    when: { state: watching, error: stalled, kind: 'stalled' },
    then: retry(watching, 'stalled', 'none'),
  },
  {
    behaviour: 'a second stall with no watch event in between backs off',
    when: { state: watching, error: stalled, kind: 'stalled', history: after('stalled') },
    then: retry(watching, 'stalled', 'backoff'),
  },
  {
    behaviour: 'a stall after a 410 is a different thing: resume at once',
    when: { state: watching, error: stalled, kind: 'stalled', history: after('gone') },
    then: retry(watching, 'stalled', 'none'),
  },
  {
    behaviour: 'a watch the server closes at once without events backs off instead of spinning',
    when: { state: watching, error: closedEarly, kind: 'closed-early' },
    then: retry(watching, 'closed_early', 'backoff'),
  },

  // backoff reset
  {
    behaviour: 'after 2 min of health the backoff starts over',
    when: { state: watching, error: serverError, kind: 'error', history: healthyFor(120_000), resetBackoff: true },
    then: retry(watching, 'error', 'backoff'),
  },
  {
    behaviour: 'one minute of health is not enough to start the backoff over',
    when: { state: watching, error: serverError, kind: 'error', history: healthyFor(60_000), resetBackoff: false },
    then: retry(watching, 'error', 'backoff'),
  },
];

for (const { behaviour, when, then } of rows) {
  test(`after a failure: ${behaviour}`, () => {
    assert.equal(classifyFailure(when.error), when.kind, 'classified');
    const history = when.history ?? NO_FAILURES;
    const input = { state: when.state, failure: when.kind, history, nowMs: NOW, backoffResetMs: 120_000 };
    const decision = afterFailure(deepFreeze(input));
    if (decision.kind === 'watch-list-refused') {
      assert.deepEqual(decision, then);
      return;
    }
    const { history: _history, resetBackoff, ...rest } = decision;
    assert.deepEqual(rest, then);
    assert.equal(resetBackoff, when.resetBackoff ?? false, 'resetBackoff');
  });
}

test('after a failure that counts, the history has one more failure, no health time, and the reason', () => {
  const history: FailureHistory = {
    consecutiveFailures: 2,
    healthySinceMs: 5,
    lastReason: 'error',
    watchEventSinceFailure: true,
  };
  const decision = afterFailure({ state: watching, failure: 'gone', history, nowMs: NOW, backoffResetMs: 120_000 });
  assert.equal(decision.kind, 'retry');
  const expected: FailureHistory = { ...NO_FAILURES, consecutiveFailures: 3, lastReason: 'gone' };
  assert.deepEqual(decision.kind === 'retry' && decision.history, expected);
});

test('progress clears the failures, starts health time once, remembers a watch event; no change, same object', () => {
  const failed: FailureHistory = { ...NO_FAILURES, consecutiveFailures: 4, lastReason: 'gone' };
  const page = afterProgress(failed, 10, false);
  assert.deepEqual(page, { ...NO_FAILURES, healthySinceMs: 10, lastReason: 'gone' });
  assert.equal(afterProgress(page, 20, false), page, 'a second page changes nothing');
  const event = afterProgress(page, 30, true);
  assert.deepEqual(event, { ...page, watchEventSinceFailure: true });
  assert.equal(afterProgress(event, 40, true), event, 'the hot path allocates nothing');
});

function deepFreeze<O>(o: O): O {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
