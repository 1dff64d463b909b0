import { OperatorRuntimeError } from '../core/errors.js';
import { redactCredentialText } from '../core/redact-text.js';

/** metav1.Status as the API server sends it in error bodies and watch ERROR events. */
export interface StatusBody {
  kind?: 'Status';
  apiVersion?: string;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: StatusDetails;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  /** metav1.StatusCause: `reason` is e.g. FieldValueInvalid, `field` the JSON path. */
  causes?: { reason?: string; message?: string; field?: string }[];
  retryAfterSeconds?: number;
}

/**
 * An error answer from the API server (or a watch ERROR event). Carries the HTTP status, the
 * Status `reason` and `details`, and how long the server asked us to wait. Never carries request
 * headers, and the server's (or a proxy's) text has anything credential-shaped redacted, since a
 * reflecting proxy can echo the request's Authorization header back into its body.
 */
export class ApiError extends OperatorRuntimeError {
  declare readonly code: 'ERR_API';
  readonly status: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  readonly retryAfterMs: number | undefined;
  readonly method: string | undefined;
  readonly path: string | undefined;

  constructor(init: {
    status: number;
    reason?: string;
    message?: string;
    details?: StatusDetails;
    retryAfterMs?: number;
    method?: string;
    path?: string;
    cause?: unknown;
  }) {
    const reason = init.reason || reasonForStatus(init.status);
    const where = init.method && init.path ? ` (${init.method} ${redactCredentialText(init.path)})` : '';
    const message = typeof init.message === 'string' ? redactCredentialText(init.message) : undefined;
    super('ERR_API', `${init.status} ${reason}: ${message ?? 'no message'}${where}`, { cause: init.cause });
    this.status = init.status;
    this.reason = reason;
    this.details = redactDetails(init.details);
    this.retryAfterMs =
      init.retryAfterMs ??
      (init.details?.retryAfterSeconds !== undefined ? init.details.retryAfterSeconds * 1000 : undefined);
    this.method = init.method;
    this.path = init.path;
  }

  /**
   * From a metav1.Status body. The body is server data (a watch ERROR event's object can be anything),
   * so each field is used only if it has the declared type; the rest falls back or is dropped.
   */
  static fromStatus(
    body: StatusBody,
    fallbackStatus: number,
    extra?: { method?: string; path?: string; retryAfterMs?: number },
  ): ApiError {
    const b: Record<string, unknown> = isRecord(body) ? body : {};
    const code = b.code;
    return new ApiError({
      status: typeof code === 'number' && Number.isInteger(code) && code >= 100 && code <= 599 ? code : fallbackStatus,
      reason: typeof b.reason === 'string' ? b.reason : undefined,
      message: typeof b.message === 'string' ? b.message : undefined,
      details: sanitizeDetails(b.details),
      ...extra,
    });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A server-sent `details`, without the declared fields that have the wrong type (others are kept). */
function sanitizeDetails(details: unknown): StatusDetails | undefined {
  if (!isRecord(details)) return undefined;
  const out: Record<string, unknown> = { ...details };
  for (const key of ['name', 'group', 'kind', 'uid'])
    if (out[key] !== undefined && typeof out[key] !== 'string') delete out[key];
  const retry = out.retryAfterSeconds;
  if (retry !== undefined && !(typeof retry === 'number' && Number.isFinite(retry * 1000) && retry >= 0))
    delete out.retryAfterSeconds;
  if (Array.isArray(out.causes)) {
    out.causes = out.causes.filter(isRecord).map((c) => {
      const cause: Record<string, unknown> = { ...c };
      for (const key of ['reason', 'message', 'field'])
        if (cause[key] !== undefined && typeof cause[key] !== 'string') delete cause[key];
      return cause;
    });
  } else {
    delete out.causes;
  }
  return out as StatusDetails;
}

/** The causes' messages are server text too (they quote rejected values). */
function redactDetails(details: StatusDetails | undefined): StatusDetails | undefined {
  if (!details || !Array.isArray(details.causes)) return details;
  return {
    ...details,
    causes: details.causes.map((c) =>
      c && typeof c.message === 'string' ? { ...c, message: redactCredentialText(c.message) } : c,
    ),
  };
}

/** Reasons Kubernetes assigns when the body did not carry one. */
function reasonForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 406:
      return 'NotAcceptable';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return status >= 500 ? 'InternalError' : 'Unknown';
  }
}

function isApiError(err: unknown): err is ApiError {
  return (
    err instanceof ApiError ||
    (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ERR_API')
  );
}

export function apiErrorStatus(err: unknown): number | undefined {
  return isApiError(err) ? err.status : undefined;
}

export const isNotFound = (err: unknown): boolean => isApiError(err) && err.status === 404;
export const isConflict = (err: unknown): boolean =>
  isApiError(err) && err.status === 409 && err.reason !== 'AlreadyExists';
export const isAlreadyExists = (err: unknown): boolean => isApiError(err) && err.reason === 'AlreadyExists';
/** 410 Gone or the "Expired" reason: a resourceVersion or continue token is too old; relist. */
export const isGone = (err: unknown): boolean =>
  isApiError(err) && (err.status === 410 || err.reason === 'Expired' || err.reason === 'Gone');
export const isInvalid = (err: unknown): boolean => isApiError(err) && (err.status === 422 || err.reason === 'Invalid');
export const isForbidden = (err: unknown): boolean => isApiError(err) && err.status === 403;
export const isUnauthorized = (err: unknown): boolean => isApiError(err) && err.status === 401;
export const isTooManyRequests = (err: unknown): boolean => isApiError(err) && err.status === 429;

/** Returns undefined for a 404 and rethrows everything else (`ignoreNotFound(client.get(...))`). */
export async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
