import { DEFAULT_REDACT_KEYS, REDACTED } from '../logging/redact.js';
import { escapeRegExp } from '../core/escape-reg-exp.js';

/** Longest error message the console keeps (the rest is cut, after redaction). @defaultValue 500 */
export const DEFAULT_MAX_MESSAGE_LENGTH = 500;

/** The logger's credential keys, plus spellings that show up in free text. */
const KEYS = [...DEFAULT_REDACT_KEYS, 'passwd', 'secret', 'api-key', 'api_key', 'apikey', 'x-api-key'];
const KEY_VALUE = new RegExp(
  `(["']?(?:${KEYS.map(escapeRegExp).join('|')})["']?\\s*[:=]\\s*)("[^"]*"|'[^']*'|[^\\s,;&}\\]]+)`,
  'gi',
);
const SCHEME_CREDENTIALS = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]*:[^/\s@]*@/gi;
const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

/**
 * Free text (an error message) with credentials replaced by `[Redacted]`: `key=value` / `key: value`
 * for the logger's credential keys ({@link DEFAULT_REDACT_KEYS}), `Bearer`/`Basic` credentials,
 * `user:password@` in URLs, PEM private keys and JWTs. The logger redacts by property name; a
 * message is one string, so here it is done by pattern — best effort, which is why the console
 * also binds to loopback by default.
 */
export function redactMessage(text: string, maxLength = DEFAULT_MAX_MESSAGE_LENGTH): string {
  const out = text
    .replace(PEM_PRIVATE_KEY, REDACTED)
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(SCHEME_CREDENTIALS, `$1 ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(KEY_VALUE, `$1${REDACTED}`);
  return out.length > maxLength ? `${out.slice(0, maxLength)}…` : out;
}

/** The message of a thrown value (with its `code` when it has one), redacted. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return redactMessage(
      typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message,
    );
  }
  return redactMessage(typeof err === 'string' ? err : safeString(err));
}

function safeString(value: unknown): string {
  try {
    return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
