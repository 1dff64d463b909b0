import { OperatorRuntimeError } from '../core/errors.js';

/** A label selector string that does not parse; `selector` is the input, the message says where. */
export class InvalidLabelSelectorError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_LABEL_SELECTOR';
  readonly selector: string;

  constructor(selector: string, message: string) {
    super('ERR_INVALID_LABEL_SELECTOR', `invalid label selector ${JSON.stringify(selector)}: ${message}`);
    this.selector = selector;
  }
}

/** `byIndex` on an index that was never registered, or a second, different function for a name. */
export class IndexError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INDEX';
  readonly index: string;

  constructor(index: string, message: string) {
    super('ERR_INDEX', `index ${JSON.stringify(index)}: ${message}`);
    this.index = index;
  }
}

/** A watch that received nothing, not even a bookmark, past its deadline; the watcher tore it down. */
export class WatchStalledError extends OperatorRuntimeError {
  declare readonly code: 'ERR_WATCH_STALLED';
  readonly idleMs: number;

  constructor(idleMs: number) {
    super('ERR_WATCH_STALLED', `watch received nothing for ${idleMs} ms; tearing it down`);
    this.idleMs = idleMs;
  }
}

/** A list page that did not answer in time; the watcher abandoned it and retries. */
export class ListTimeoutError extends OperatorRuntimeError {
  declare readonly code: 'ERR_LIST_TIMEOUT';

  constructor(timeoutMs: number) {
    super('ERR_LIST_TIMEOUT', `list page did not answer within ${timeoutMs} ms`);
  }
}

/** A watch the server closed almost at once without sending anything: treated as a failure so it backs off. */
export class WatchClosedEarlyError extends OperatorRuntimeError {
  declare readonly code: 'ERR_WATCH_CLOSED_EARLY';

  constructor(durationMs: number) {
    super('ERR_WATCH_CLOSED_EARLY', `watch closed after ${durationMs} ms without any event`);
  }
}

/** A watch-list stream that did not keep its promise (ended or deleted before the initial-events-end bookmark). */
export class WatchListProtocolError extends OperatorRuntimeError {
  declare readonly code: 'ERR_WATCH_LIST_PROTOCOL';

  constructor(what: string) {
    super('ERR_WATCH_LIST_PROTOCOL', `watch-list sync failed: ${what}`);
  }
}

/** `waitForSync` gave up after its timeout. */
export class CacheSyncTimeoutError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CACHE_SYNC_TIMEOUT';

  constructor(what: string, timeoutMs: number) {
    super('ERR_CACHE_SYNC_TIMEOUT', `${what} did not sync within ${timeoutMs} ms`);
  }
}

/** A read from a cache whose informers were never started (reads would wait forever). */
export class CacheNotStartedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CACHE_NOT_STARTED';

  constructor() {
    super('ERR_CACHE_NOT_STARTED', 'the cache has not been started; call start(signal) first');
  }
}
