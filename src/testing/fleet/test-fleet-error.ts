import { OperatorRuntimeError } from '../../core/errors.js';

/** A `TestFleet` could not start, or was misused (a bad member name, a stopped member). */
export class TestFleetError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_FLEET';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TEST_FLEET', message, options);
  }
}
