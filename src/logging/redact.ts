/** What a redacted value is replaced with. */
export const REDACTED = '[Redacted]';

/**
 * Property names whose values never reach a log line, at any depth (compared case-insensitively):
 * HTTP credentials, kubeconfig credentials (`token`, `password`, `client-key-data`, OIDC
 * `id-token`/`refresh-token`/`client-secret`) and the like. A Secret's `data` and `stringData` are
 * redacted separately, wherever an object with `kind: 'Secret'` appears.
 */
export const DEFAULT_REDACT_KEYS: readonly string[] = Object.freeze([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'token',
  'bearerToken',
  'access_token',
  'accessToken',
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

/** How deep the walk goes; a log object nested deeper than this is left as is below it. */
const MAX_DEPTH = 8;

/**
 * A function that returns `value` with credentials replaced by {@link REDACTED}: any property named
 * in `keys`, and `data`/`stringData` of any object whose `kind` is `Secret`. It copies only what it
 * changes and never mutates its input; class instances (errors, dates, buffers) pass through.
 */
export function createRedactor(keys: readonly string[]): <T>(value: T) => T {
  const sensitive = new Set(keys.map((k) => k.toLowerCase()));

  const walk = (value: unknown, depth: number): unknown => {
    if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const next = walk(item, depth + 1);
        if (next !== item) (copy ??= [...value])[i] = next;
      }
      return copy ?? value;
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return value;
    const obj = value as Record<string, unknown>;
    const isSecret = obj.kind === 'Secret';
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(obj)) {
      const item = obj[key];
      let next: unknown;
      if (item !== undefined && (sensitive.has(key.toLowerCase()) || (isSecret && (key === 'data' || key === 'stringData')))) next = REDACTED;
      else next = walk(item, depth + 1);
      if (next !== item) (copy ??= { ...obj })[key] = next;
    }
    return copy ?? obj;
  };

  return <T>(value: T): T => walk(value, 0) as T;
}
