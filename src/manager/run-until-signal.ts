import type { Logger } from '../core/logger.js';
import { silentLogger } from '../core/logger.js';
import type { Manager } from './manager.js';

export interface RunUntilSignalOptions {
  readonly signals?: readonly NodeJS.Signals[];
  readonly logger?: Logger;
  /** Called on a second signal (default: exit at once with status 1). */
  readonly onSecondSignal?: () => void;
}

/**
 * The main loop of an operator process: runs the manager until SIGTERM or SIGINT, lets it drain
 * in-flight reconciles (its graceful shutdown), and resolves with the exit code: 0 after a clean
 * stop, 1 when the manager failed (for example, leadership lost). A second signal exits at once.
 */
export async function runUntilSignal(manager: Manager, options: RunUntilSignalOptions = {}): Promise<number> {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const log = options.logger ?? silentLogger;
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) {
      log.warn({ signal }, 'second signal: exiting immediately');
      (options.onSecondSignal ?? (() => process.exit(1)))();
      return;
    }
    log.info({ signal }, 'signal received: shutting down gracefully');
    stop.abort();
  };
  for (const s of signals) process.on(s, onSignal);
  try {
    await manager.start(stop.signal);
    return 0;
  } catch (err) {
    log.error({ err }, 'manager stopped with an error');
    return 1;
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}
