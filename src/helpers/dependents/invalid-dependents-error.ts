import { OperatorRuntimeError } from '../../core/errors.js';

/** A graph of dependents that cannot run (a cycle, an unknown or repeated name, a bad condition type), refused where it is declared. */
export class InvalidDependentsError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_DEPENDENTS';
  /** The primary kind whose graph is wrong, e.g. `example.com/v1 Database`. */
  readonly primary: string;

  constructor(primary: string, message: string) {
    super('ERR_INVALID_DEPENDENTS', `dependents of ${primary}: ${message}`);
    this.primary = primary;
  }
}
