import type { Logger } from '../core/logger.js';

export type RecordedLevel = 'debug' | 'info' | 'warn' | 'error';

/** One call to a recording logger, as the code under test made it. */
export interface RecordedEntry {
  readonly level: RecordedLevel;
  /** Every binding of the logger it was written to (parents' first, the child's overriding). */
  readonly bindings: Readonly<Record<string, unknown>>;
  /** A shallow copy of the object logged, taken at the call. */
  readonly obj: Readonly<Record<string, unknown>>;
  readonly msg: string | undefined;
}

/** A `Logger` that keeps what it is given; children share their parent's entries. */
export interface RecordingLogger extends Logger {
  /** All entries written to this logger and every logger derived from it, in order. */
  readonly entries: readonly RecordedEntry[];
  child(bindings: Record<string, unknown>): RecordingLogger;
  /** Forgets every entry (for this logger, its parent and its children). */
  clear(): void;
}

/**
 * A test double for `Logger` that records entries for assertions, e.g.
 * `assert.ok(log.entries.some((e) => e.level === 'error' && e.bindings.reconcileID))`.
 * No level filtering and no redaction: tests see exactly what the code logged.
 */
export function recordingLogger(bindings: Readonly<Record<string, unknown>> = {}): RecordingLogger {
  return make([], { ...bindings });
}

function make(entries: RecordedEntry[], bindings: Readonly<Record<string, unknown>>): RecordingLogger {
  const write =
    (level: RecordedLevel) =>
    (obj: Record<string, unknown>, msg?: string): void => {
      entries.push({ level, bindings, obj: { ...obj }, msg });
    };
  return {
    entries,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (childBindings) => make(entries, { ...bindings, ...childBindings }),
    clear: () => {
      entries.length = 0;
    },
  };
}
