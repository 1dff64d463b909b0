/**
 * When a request may be sent again. The rule: only when doing it twice cannot do harm.
 * - 429: the API server (priority & fairness, max-in-flight) rejected it before running it, so any
 *   method is retried, after Retry-After, as client-go does.
 * - 502/503/504 and network errors that may have hit the server: only safe/idempotent methods
 *   (GET, HEAD, OPTIONS, PUT, DELETE). A POST or PATCH is not retried, since it may have been applied.
 * - Connection failures before anything was sent (refused, DNS, connect timeout): any method.
 * - A 401: once, after the credential was refreshed (rotated token file, expired exec credential).
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

const RETRYABLE_5XX = new Set([502, 503, 504]);

/** Errors raised before a request was written to the wire: safe to resend whatever the method. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Errors where the request may or may not have reached the server. */
const AMBIGUOUS_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

export function isRetryableStatus(
  status: number,
  method: string,
  idempotent = IDEMPOTENT_METHODS.has(method),
): boolean {
  if (status === 429) return true;
  return idempotent && RETRYABLE_5XX.has(status);
}

export function isRetryableNetworkError(
  err: unknown,
  method: string,
  idempotent = IDEMPOTENT_METHODS.has(method),
): boolean {
  const code = errorCode(err);
  if (code === undefined) return false;
  if (NOT_SENT_CODES.has(code)) return true;
  return idempotent && AMBIGUOUS_CODES.has(code);
}

function errorCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NOT_SENT_CODES.has(code) || AMBIGUOUS_CODES.has(code))) return code;
  }
  return undefined;
}

/**
 * Parses a Retry-After header: delay-seconds or an HTTP date. Returns milliseconds, or undefined
 * when absent or unparseable.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  const s = v.trim();
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const at = Date.parse(s);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
