/**
 * A reconcile's logger, made only when something is written. A pino `child()` costs about 10 µs
 * (its bindings are serialized, and redacted, up front): at thousands of reconciles a second that
 * was the largest per-reconcile cost of the controller's own code, for lines that at the usual
 * `info` level are never written (bench/controller-e2e-cpu.bench.ts).
 */
import type { Logger } from '../core/logger.js';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** pino's level check; a logger without one (a recording logger, say) writes every level. */
interface LevelAware {
  isLevelEnabled(level: string): boolean;
}

function isLevelAware(logger: Logger): logger is Logger & LevelAware {
  return 'isLevelEnabled' in logger && typeof logger.isLevelEnabled === 'function';
}

/**
 * Behaves as `parent.child(bindings)`: the child is created on the first line at an enabled level
 * (or the first `child()` call) and used from then on. A line at a level the parent does not write
 * is dropped without creating it: the child would have inherited that level and dropped it too.
 */
export class DeferredChildLogger implements Logger {
  private logger: Logger | undefined;
  private readonly parent: Logger;
  private readonly bindings: Record<string, unknown>;

  constructor(parent: Logger, bindings: Record<string, unknown>) {
    this.parent = parent;
    this.bindings = bindings;
  }

  debug(obj: Record<string, unknown>, msg?: string): void {
    this.write('debug', obj, msg);
  }

  info(obj: Record<string, unknown>, msg?: string): void {
    this.write('info', obj, msg);
  }

  warn(obj: Record<string, unknown>, msg?: string): void {
    this.write('warn', obj, msg);
  }

  error(obj: Record<string, unknown>, msg?: string): void {
    this.write('error', obj, msg);
  }

  child(bindings: Record<string, unknown>): Logger {
    return this.created().child(bindings);
  }

  private write(level: Level, obj: Record<string, unknown>, msg: string | undefined): void {
    if (!this.logger && isLevelAware(this.parent) && !this.parent.isLevelEnabled(level)) return;
    // As the caller wrote it: pino tells a missing message from an undefined one.
    const logger = this.created();
    if (msg === undefined) logger[level](obj);
    else logger[level](obj, msg);
  }

  private created(): Logger {
    return (this.logger ??= this.parent.child(this.bindings));
  }
}
