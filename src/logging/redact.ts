import { REDACTED, redactCredentialText } from '../core/redact-text.js';

export { REDACTED };

/** What replaces an object nested deeper than the redactor walks (it could hide anything). */
export const REDACTED_TOO_DEEP = '[Redacted: nested too deep]';

/**
 * Property names whose values never reach a log line, at any depth (compared case-insensitively):
 * HTTP credentials, kubeconfig credentials (`token`, `password`, `client-key-data`, OIDC
 * `id-token`/`refresh-token`/`client-secret`, auth-provider `access-token`), API keys and the like.
 * A Secret's `data` and `stringData` are redacted separately, wherever an object with
 * `kind: 'Secret'` appears, and so is the `value` of every entry of an `env` list (exec plugins
 * pass credentials that way).
 */
export const DEFAULT_REDACT_KEYS: readonly string[] = Object.freeze([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'token',
  'bearerToken',
  'access_token',
  'access-token',
  'accessToken',
  'x-api-key',
  'api-key',
  'api_key',
  'apiKey',
  'id-token',
  'refresh-token',
  'refresh_token',
  'refreshToken',
  'password',
  'client-key-data',
  'client-key',
  'clientKey',
  'client-secret',
  'client_secret',
  'clientSecret',
  'stringData',
]);

/** How deep the walk goes; an object nested deeper is replaced by {@link REDACTED_TOO_DEEP}. */
const MAX_DEPTH = 8;

/**
 * A function that returns `value` with credentials replaced by {@link REDACTED}: any property named
 * in `keys`, `data`/`stringData` of any object whose `kind` is `Secret`, the `value` of `env` list
 * entries, and credentials inside any string (a URL's password, a bearer token: see
 * `redactCredentialText`). Objects nested deeper than the walk goes are replaced whole. It copies
 * only what it changes and never mutates its input; errors are copied (same prototype) with their
 * message, stack and cause redacted when those carry credentials; other class instances (dates,
 * buffers) pass through.
 */
export function createRedactor(keys: readonly string[]): <T>(value: T) => T {
  const sensitive = new Set(keys.map((k) => k.toLowerCase()));

  const walk = (value: unknown, depth: number, envList: boolean): unknown => {
    if (typeof value === 'string') return redactCredentialText(value);
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      if (depth > MAX_DEPTH) return REDACTED_TOO_DEEP;
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const next = walk(item, depth + 1, envList);
        if (next !== item) (copy ??= [...value])[i] = next;
      }
      return copy ?? value;
    }
    if (value instanceof Error) return redactError(value, depth);
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    if (depth > MAX_DEPTH) return REDACTED_TOO_DEEP;
    const obj = value as Record<string, unknown>;
    const isSecret = obj.kind === 'Secret';
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(obj)) {
      const item = obj[key];
      let next: unknown;
      if (
        item !== undefined &&
        (sensitive.has(key.toLowerCase()) ||
          (isSecret && (key === 'data' || key === 'stringData')) ||
          (envList && key === 'value'))
      ) {
        next = REDACTED;
      } else {
        next = walk(item, depth + 1, Array.isArray(item) && key.toLowerCase() === 'env');
      }
      if (next !== item) (copy ??= { ...obj })[key] = next;
    }
    return copy ?? obj;
  };

  // An error's message, stack and cause are free text from anywhere (a URL parser quoting its input,
  // a server's answer): a copy with those redacted, same prototype, so serializers still see an error.
  const redactError = (err: Error, depth: number): unknown => {
    if (depth > MAX_DEPTH) return REDACTED_TOO_DEEP;
    const message = redactCredentialText(err.message);
    const stack = typeof err.stack === 'string' ? redactCredentialText(err.stack) : err.stack;
    const hasCause = Object.prototype.hasOwnProperty.call(err, 'cause');
    const cause = hasCause ? walk(err.cause, depth + 1, false) : undefined;
    const own = err as unknown as Record<string, unknown>;
    const fields: Record<string, unknown> = {};
    let changed = message !== err.message || stack !== err.stack || (hasCause && cause !== err.cause);
    for (const key of Object.keys(own)) {
      const item = own[key];
      fields[key] = item !== undefined && sensitive.has(key.toLowerCase()) ? REDACTED : walk(item, depth + 1, false);
      if (fields[key] !== item) changed = true;
    }
    if (!changed) return err;
    const copy = Object.create(Object.getPrototypeOf(err) as object) as Error;
    Object.assign(copy, fields);
    Object.defineProperty(copy, 'message', { value: message, writable: true, configurable: true, enumerable: false });
    Object.defineProperty(copy, 'stack', { value: stack, writable: true, configurable: true, enumerable: false });
    if (hasCause)
      Object.defineProperty(copy, 'cause', { value: cause, writable: true, configurable: true, enumerable: false });
    return copy;
  };

  return <T>(value: T): T => walk(value, 0, false) as T;
}
