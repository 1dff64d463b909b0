/**
 * The one base class for every error operator-runtime throws. Each subclass carries a literal,
 * stable `code` (as undici does) so callers can branch without `instanceof` across package copies.
 */
export class OperatorRuntimeError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Thrown when an option is invalid; the message names the option. */
export class InvalidOptionError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_OPTION';
  readonly option: string;

  constructor(option: string, message: string) {
    super('ERR_INVALID_OPTION', `invalid option ${option}: ${message}`);
    this.option = option;
  }
}

/** Thrown by operations that were cancelled through their AbortSignal. */
export class AbortedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_ABORTED';

  constructor(message = 'operation aborted', options?: { cause?: unknown }) {
    super('ERR_ABORTED', message, options);
  }
}

/**
 * Thrown when a function argument is out of its domain (a negative delay, NaN). Replaces the
 * bare `RangeError`/`TypeError` library code used to throw, so the controller never mistakes a
 * library validation error for a panic in user code.
 */
export class InvalidArgumentError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_ARGUMENT';

  constructor(message: string) {
    super('ERR_INVALID_ARGUMENT', message);
  }
}

/** An object a helper needs to address lacks apiVersion, kind, name, uid or resourceVersion. */
export class IncompleteObjectError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INCOMPLETE_OBJECT';

  constructor(message: string) {
    super('ERR_INCOMPLETE_OBJECT', message);
  }
}

/** `start()` on a component that runs once (a controller, a process) that was already started. */
export class AlreadyStartedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_ALREADY_STARTED';

  constructor(message: string) {
    super('ERR_ALREADY_STARTED', message);
  }
}
