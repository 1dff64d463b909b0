import { OperatorRuntimeError } from '../core/errors.js';

/**
 * Thrown by a reconciler for an error that retrying cannot fix (a spec the operator cannot act on).
 * It is logged and counted (`controller_runtime_terminal_reconcile_errors_total`) but the key is
 * not requeued; the next change of the object triggers a reconcile as usual.
 */
export class TerminalError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TERMINAL';

  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TERMINAL', message, options);
  }
}

export function isTerminalError(err: unknown): err is TerminalError {
  return (
    err instanceof TerminalError ||
    (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ERR_TERMINAL')
  );
}
