import { OperatorRuntimeError } from '../core/errors.js';

/** A finalizer name that is not domain-qualified (`example.com/backup`), so it could collide with another controller's. */
export class InvalidFinalizerNameError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_FINALIZER_NAME';
  readonly finalizer: string;

  constructor(finalizer: string, why: string) {
    super('ERR_INVALID_FINALIZER_NAME', `invalid finalizer name ${JSON.stringify(finalizer)}: ${why}`);
    this.finalizer = finalizer;
  }
}

/** A condition the API server would reject (metav1.Condition validation), caught before the write. */
export class InvalidConditionError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_CONDITION';
  readonly field: string;

  constructor(field: string, why: string) {
    super('ERR_INVALID_CONDITION', `invalid condition ${field}: ${why}`);
    this.field = field;
  }
}

/**
 * An owner reference the garbage collector would not honour: a namespaced owner of an object in
 * another namespace, or of a cluster-scoped object (the GC treats such a reference as dangling and
 * deletes the child).
 */
export class CrossNamespaceOwnerError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CROSS_NAMESPACE_OWNER';

  constructor(message: string) {
    super('ERR_CROSS_NAMESPACE_OWNER', message);
  }
}

/** The object already has a different controller: an object has at most one. */
export class AlreadyOwnedError extends OperatorRuntimeError {
  declare readonly code: 'ERR_ALREADY_OWNED';
  readonly existing: {
    readonly apiVersion: string;
    readonly kind: string;
    readonly name: string;
    readonly uid: string;
  };

  constructor(message: string, existing: AlreadyOwnedError['existing']) {
    super('ERR_ALREADY_OWNED', message);
    this.existing = existing;
  }
}

// Defined in core so core's own object helpers (keyOf, gvkOf) can throw it too.
export { IncompleteObjectError } from '../core/errors.js';
