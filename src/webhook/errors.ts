import { OperatorRuntimeError } from '../core/errors.js';

/** A webhook registration that cannot work: a kind without a version, two handlers on one path, a spoke of another kind. */
export class WebhookRegistrationError extends OperatorRuntimeError {
  declare readonly code: 'ERR_WEBHOOK_REGISTRATION';

  constructor(message: string) {
    super('ERR_WEBHOOK_REGISTRATION', message);
  }
}

/**
 * A review ran past its time (its webhook's `timeoutSeconds` less a margin, or `requestTimeoutMs`):
 * the request was denied (allowed with a warning under `failurePolicy: Ignore`), or the conversion failed.
 */
export class WebhookTimeoutError extends OperatorRuntimeError {
  declare readonly code: 'ERR_WEBHOOK_TIMEOUT';

  constructor(
    readonly path: string,
    readonly timeoutMs: number,
  ) {
    super('ERR_WEBHOOK_TIMEOUT', `webhook ${path} did not answer within ${timeoutMs} ms`);
  }
}

/** A review the server cannot handle (not JSON, not AdmissionReview/ConversionReview v1, a kind this webhook does not serve). */
export class InvalidReviewError extends OperatorRuntimeError {
  declare readonly code: 'ERR_INVALID_REVIEW';

  constructor(message: string) {
    super('ERR_INVALID_REVIEW', message);
  }
}
