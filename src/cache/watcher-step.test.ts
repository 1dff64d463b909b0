import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../client/api-error.js';
import { ResponseTooLargeError } from '../client/body-limit.js';
import { TransportError } from '../client/transport.js';
import { ListTimeoutError, WatchClosedEarlyError, WatchListProtocolError, WatchStalledError } from './errors.js';
import { afterProgress, NO_FAILURES, type FailureHistory, type WatcherState } from './watcher-state.js';
import { afterFailure, classifyFailure, type FailureDecision, type FailureKind } from './watcher-step.js';

const watching: WatcherState = { phase: 'watching', resourceVersion: '42', watchList: false };
const watchingWL: WatcherState = { phase: 'watching', resourceVersion: '42', watchList: true };
const firstPage: WatcherState = { phase: 'listing', quorum: false, continue: undefined, watchList: false };
const laterPage: WatcherState = { phase: 'listing', quorum: false, continue: 'c1', watchList: false };
const quorumPage: WatcherState = { phase: 'listing', quorum: true, continue: undefined, watchList: false };
const streaming: WatcherState = { phase: 'streaming', quorum: false, watchList: true };
const streamingQuorum: WatcherState = { phase: 'streaming', quorum: true, watchList: true };
const relist = (watchList = false): WatcherState => ({ phase: 'empty', quorum: true, listOnce: false, watchList });

const gone = new ApiError({ status: 410, reason: 'Expired', message: 'too old resource version' });
const tooLargeRv = new ApiError({ status: 504, reason: 'Timeout', message: 'Too large resource version: 9, current: 3', details: { causes: [{ reason: 'ResourceVersionTooLarge' }] } });
const unprocessable = new ApiError({ status: 422, reason: 'Invalid', message: 'resourceVersionMatch: Forbidden' });
const badRequest = new ApiError({ status: 400, reason: 'BadRequest', message: 'sendInitialEvents: unknown' });
const serverError = new ApiError({ status: 500, message: 'internal' });
const unavailable = new ApiError({ status: 503, message: 'unavailable' });
const throttled = new ApiError({ status: 429, reason: 'TooManyRequests', message: 'storage is (re)initializing' });
const forbidden = new ApiError({ status: 403, reason: 'Forbidden', message: 'configmaps is forbidden' });
const refused = new TransportError('WATCH', '/api/v1/configmaps', 'watch stream failed (ECONNREFUSED)', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
const reset = new TransportError('WATCH', '/api/v1/configmaps', 'watch stream failed (ECONNRESET)', { cause: Object.assign(new Error('read'), { code: 'ECONNRESET' }) });
const tooLargeResponse = new ResponseTooLargeError('GET', '/api/v1/configmaps?limit=2&resourceVersion=0', 1024);
const stalled = new WatchStalledError(330_000);
const closedEarly = new WatchClosedEarlyError(3);

const NOW = 1_000_000;
const healthyFor = (ms: number): FailureHistory => ({ ...NO_FAILURES, healthySinceMs: NOW - ms });
const after = (lastReason: FailureHistory['lastReason'], watchEventSinceFailure = false): FailureHistory => ({ ...NO_FAILURES, consecutiveFailures: 1, lastReason, watchEventSinceFailure });

interface Row {
  readonly behaviour: string;
  readonly state: WatcherState;
  readonly error: unknown;
  readonly kind: FailureKind;
  readonly history?: FailureHistory;
  /** The expected decision; `history` is checked by its own test. */
  readonly expect: { readonly kind: 'watch-list-refused'; readonly next: WatcherState } | Omit<Extract<FailureDecision, { kind: 'retry' }>, 'history' | 'resetBackoff'>;
  readonly resetBackoff?: boolean;
}

const rows: readonly Row[] = [
  // 410 / too old, and a resourceVersion too large
  { behaviour: '410 during a watch relists with a quorum, paged read, at once', state: watching, error: gone, kind: 'gone', expect: { kind: 'retry', next: relist(), reason: 'gone', wait: 'none' } },
  { behaviour: '410 again with no watch event in between backs off instead of relisting in a hot loop', state: watching, error: gone, kind: 'gone', history: after('gone'), expect: { kind: 'retry', next: relist(), reason: 'gone', wait: 'backoff' } },
  { behaviour: '410 again after watch events since the last one is routine: relist at once', state: watching, error: gone, kind: 'gone', history: after('gone', true), expect: { kind: 'retry', next: relist(), reason: 'gone', wait: 'none' } },
  { behaviour: 'an expired continue token (410) restarts the list from scratch with a quorum read', state: laterPage, error: gone, kind: 'gone', expect: { kind: 'retry', next: relist(), reason: 'gone', wait: 'none' } },
  { behaviour: 'a resourceVersion too large for the server relists with a quorum read, as client-go does', state: firstPage, error: tooLargeRv, kind: 'gone', expect: { kind: 'retry', next: relist(), reason: 'gone', wait: 'none' } },
  { behaviour: 'a relist keeps the watch-list choice: after a 410 the next sync may be a watch-list again', state: watchingWL, error: gone, kind: 'gone', expect: { kind: 'retry', next: relist(true), reason: 'gone', wait: 'none' } },

  // 400/422: watch-list refused
  { behaviour: 'a server refusing sendInitialEvents (422) falls back to list+watch for good, at once and not as a failure', state: streaming, error: unprocessable, kind: 'invalid-request', expect: { kind: 'watch-list-refused', next: { phase: 'empty', quorum: false, listOnce: false, watchList: false } } },
  { behaviour: 'a 400 to a watch-list request is a refusal too, and a quorum sync stays a quorum list', state: streamingQuorum, error: badRequest, kind: 'invalid-request', expect: { kind: 'watch-list-refused', next: { phase: 'empty', quorum: true, listOnce: false, watchList: false } } },
  { behaviour: 'a 422 to an ordinary watch is only an error: back off and resume from the same resourceVersion', state: watchingWL, error: unprocessable, kind: 'invalid-request', expect: { kind: 'retry', next: watchingWL, reason: 'error', wait: 'backoff' } },

  // other failures of a watch-list before its bookmark
  { behaviour: 'a 5xx during a watch-list before its bookmark falls back to one list+watch sync, at once', state: streaming, error: serverError, kind: 'error', expect: { kind: 'retry', next: { phase: 'empty', quorum: false, listOnce: true, watchList: true }, reason: 'error', wait: 'none' } },
  { behaviour: 'a 410 during a watch-list before its bookmark makes the one list+watch sync a quorum read', state: streaming, error: gone, kind: 'gone', expect: { kind: 'retry', next: { phase: 'empty', quorum: true, listOnce: true, watchList: true }, reason: 'gone', wait: 'none' } },
  { behaviour: 'a watch-list stream ending before its bookmark falls back to one list+watch sync', state: streamingQuorum, error: new WatchListProtocolError('closed early'), kind: 'error', expect: { kind: 'retry', next: { phase: 'empty', quorum: true, listOnce: true, watchList: true }, reason: 'error', wait: 'none' } },
  { behaviour: 'a silent watch-list before its bookmark falls back to one list+watch sync', state: streaming, error: stalled, kind: 'stalled', history: after('stalled'), expect: { kind: 'retry', next: { phase: 'empty', quorum: false, listOnce: true, watchList: true }, reason: 'stalled', wait: 'none' } },
  { behaviour: 'a 429 to a watch-list (storage still initializing) asks the same watch-list again after the backoff, as client-go', state: streamingQuorum, error: throttled, kind: 'not-yet', expect: { kind: 'retry', next: streamingQuorum, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a refused connection for a watch-list asks the same watch-list again after the backoff, as client-go', state: streaming, error: refused, kind: 'not-yet', expect: { kind: 'retry', next: streaming, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a reset connection during a watch-list before its bookmark falls back to one list+watch sync', state: streaming, error: reset, kind: 'error', expect: { kind: 'retry', next: { phase: 'empty', quorum: false, listOnce: true, watchList: true }, reason: 'error', wait: 'none' } },

  // network, 429, 5xx, 403
  { behaviour: 'a reset connection during a watch backs off and resumes from the last resourceVersion', state: watching, error: reset, kind: 'error', expect: { kind: 'retry', next: watching, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a refused connection for a watch backs off and resumes from the last resourceVersion', state: watching, error: refused, kind: 'not-yet', expect: { kind: 'retry', next: watching, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a 503 during a watch backs off and resumes from the last resourceVersion', state: watching, error: unavailable, kind: 'error', expect: { kind: 'retry', next: watching, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a 429 during a watch backs off and resumes from the last resourceVersion', state: watching, error: throttled, kind: 'not-yet', expect: { kind: 'retry', next: watching, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a 503 on a list page backs off and asks the same page again (same continue token)', state: laterPage, error: unavailable, kind: 'error', expect: { kind: 'retry', next: laterPage, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a 429 that outlasted the client\'s own retries on a list page backs off and asks the same page again', state: laterPage, error: throttled, kind: 'not-yet', expect: { kind: 'retry', next: laterPage, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a 403 on a list (RBAC not granted yet) backs off and asks again, forever', state: firstPage, error: forbidden, kind: 'error', history: after('error'), expect: { kind: 'retry', next: firstPage, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a source that throws something not an Error backs off like any error', state: firstPage, error: 'boom', kind: 'error', expect: { kind: 'retry', next: firstPage, reason: 'error', wait: 'backoff' } },

  // a response too large
  { behaviour: 'a resourceVersion=0 list too large for maxResponseBytes is retried as a paged quorum list, after the backoff', state: firstPage, error: tooLargeResponse, kind: 'response-too-large', expect: { kind: 'retry', next: relist(), reason: 'error', wait: 'backoff' } },
  { behaviour: 'a quorum list page too large is asked again as it is, after the backoff', state: quorumPage, error: tooLargeResponse, kind: 'response-too-large', expect: { kind: 'retry', next: quorumPage, reason: 'error', wait: 'backoff' } },

  // timeouts and silent watches
  { behaviour: 'a list page that never answered (list timeout) backs off and is asked again', state: laterPage, error: new ListTimeoutError(120_000), kind: 'error', expect: { kind: 'retry', next: laterPage, reason: 'error', wait: 'backoff' } },
  { behaviour: 'a silent watch torn down by the stall guard resumes from its resourceVersion at once', state: watching, error: stalled, kind: 'stalled', expect: { kind: 'retry', next: watching, reason: 'stalled', wait: 'none' } },
  { behaviour: 'a second stall with no watch event in between backs off', state: watching, error: stalled, kind: 'stalled', history: after('stalled'), expect: { kind: 'retry', next: watching, reason: 'stalled', wait: 'backoff' } },
  { behaviour: 'a stall after a 410 is a different thing: resume at once', state: watching, error: stalled, kind: 'stalled', history: after('gone'), expect: { kind: 'retry', next: watching, reason: 'stalled', wait: 'none' } },
  { behaviour: 'a watch the server closes at once without events backs off instead of spinning', state: watching, error: closedEarly, kind: 'closed-early', expect: { kind: 'retry', next: watching, reason: 'closed_early', wait: 'backoff' } },

  // backoff reset
  { behaviour: 'after 2 min of health the backoff starts over', state: watching, error: serverError, kind: 'error', history: healthyFor(120_000), resetBackoff: true, expect: { kind: 'retry', next: watching, reason: 'error', wait: 'backoff' } },
  { behaviour: 'one minute of health is not enough to start the backoff over', state: watching, error: serverError, kind: 'error', history: healthyFor(60_000), resetBackoff: false, expect: { kind: 'retry', next: watching, reason: 'error', wait: 'backoff' } },
];

for (const row of rows) {
  test(`after a failure: ${row.behaviour}`, () => {
    assert.equal(classifyFailure(row.error), row.kind, 'classified');
    const history = row.history ?? NO_FAILURES;
    const decision = afterFailure(deepFreeze({ state: row.state, failure: row.kind, history, nowMs: NOW, backoffResetMs: 120_000 }));
    if (decision.kind === 'watch-list-refused') {
      assert.deepEqual(decision, row.expect);
      return;
    }
    const { history: _history, resetBackoff, ...rest } = decision;
    assert.deepEqual(rest, row.expect);
    assert.equal(resetBackoff, row.resetBackoff ?? false, 'resetBackoff');
  });
}

test('after a failure that counts, the history has one more consecutive failure, no health time, and remembers the reason', () => {
  const decision = afterFailure({ state: watching, failure: 'gone', history: { consecutiveFailures: 2, healthySinceMs: 5, lastReason: 'error', watchEventSinceFailure: true }, nowMs: NOW, backoffResetMs: 120_000 });
  assert.equal(decision.kind, 'retry');
  assert.deepEqual(decision.kind === 'retry' && decision.history, { consecutiveFailures: 3, healthySinceMs: undefined, lastReason: 'gone', watchEventSinceFailure: false });
});

test('progress clears the consecutive failures and starts health time once; a watch event is remembered; nothing changing keeps the same object', () => {
  const failed: FailureHistory = { consecutiveFailures: 4, healthySinceMs: undefined, lastReason: 'gone', watchEventSinceFailure: false };
  const page = afterProgress(failed, 10, false);
  assert.deepEqual(page, { consecutiveFailures: 0, healthySinceMs: 10, lastReason: 'gone', watchEventSinceFailure: false });
  assert.equal(afterProgress(page, 20, false), page, 'a second page changes nothing');
  const event = afterProgress(page, 30, true);
  assert.deepEqual(event, { consecutiveFailures: 0, healthySinceMs: 10, lastReason: 'gone', watchEventSinceFailure: true });
  assert.equal(afterProgress(event, 40, true), event, 'the hot path allocates nothing');
});

function deepFreeze<O>(o: O): O {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
