/**
 * Credentials inside free text: a log line's string values, or server and proxy text that ends up
 * in an error message (a reflecting proxy echoes the request's Authorization header back). Lives in
 * core because both `logging` and `client` need it and may import nothing else in common.
 */

/** What a redacted value is replaced with. */
export const REDACTED = '[Redacted]';

// No \b anchors below: text glued to a credential ("xBearer …", "_https://u:p@…") must not hide it.
// Every pattern is linear on hostile text (see the test): no start position rescans a long run.
// ://userinfo@ — userinfo runs to the last '@' before the authority ends. The scheme is left out
// of the match: matching it too rescans a long run of letters from every start.
const URL_USERINFO = /:\/\/((?:[^\s/?#@]*@)*[^\s/?#@]*)@/g;
// An Authorization header's value, with or without the header's name before it.
const AUTH_SCHEME = /(Bearer|Basic)(\s+)[A-Za-z0-9._~+/-]+=*/g;
// Runs of token characters, in which JSON Web Tokens are looked for without a regex: a backtracking
// JWT pattern is quadratic on hostile text such as "eyJ-eyJ-eyJ-…".
const TOKEN_RUN = /[A-Za-z0-9_.-]{12,}/g;
// key=value (query strings, env lines) and "key": "value" (JSON) for credential-named keys.
const KEY_NAMES = String.raw`(?:access[_-]?token|refresh[_-]?token|id[_-]?token|token|password|passwd|client[_-]?secret|api[_-]?key|x-api-key|secret)`;
const KEY_EQUALS = new RegExp(String.raw`(${KEY_NAMES})=([^\s&"',;]+)`, 'gi');
const KEY_JSON = new RegExp(String.raw`("${KEY_NAMES}"\s*:\s*")((?:[^"\\]|\\.)*)("?)`, 'gi');
// Header lines a proxy may reflect: "X-Api-Key: value".
const HEADER_LINE = /\b((?:x-api-key|api-key|proxy-authorization|cookie|set-cookie)\s*:\s*)([^\r\n]+)/gi;
// Cheap pre-check so the common string (no credential shape at all) costs one scan.
const MAYBE = /:\/\/|bearer|basic|eyJ|=|"|:/i;

/**
 * Replaces the password of `user:password@` in any URL-shaped part of `text` (a user without a
 * password is replaced whole, as it may itself be a token).
 */
export function redactUrlCredentials(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_USERINFO, (_m, info: string) => {
    const colon = info.indexOf(':');
    return colon >= 0 ? `://${info.slice(0, colon)}:${REDACTED}@` : `://${REDACTED}@`;
  });
}

/**
 * Redacts what looks like a credential in free text: URL passwords, `Bearer`/`Basic` values, JWTs,
 * `token=…`-style pairs, `"password": "…"`-style JSON members and reflected key headers. Errs on the
 * side of redacting: the text is for humans, not for parsing.
 */
export function redactCredentialText(text: string): string {
  if (!MAYBE.test(text)) return text;
  return redactUrlCredentials(text)
    .replace(AUTH_SCHEME, `$1$2${REDACTED}`)
    .replace(TOKEN_RUN, (run) => (containsJwt(run) ? REDACTED : run))
    .replace(KEY_EQUALS, `$1=${REDACTED}`)
    .replace(KEY_JSON, `$1${REDACTED}$3`)
    .replace(HEADER_LINE, `$1${REDACTED}`);
}

/**
 * A JSON Web Token (service-account and OIDC tokens) anywhere in a run of token characters, even
 * without "Bearer" before it: a segment with `eyJ` and 4+ characters after it, then a segment of
 * 4+, then a third segment. Linear in the run's length.
 */
function containsJwt(run: string): boolean {
  if (!run.includes('eyJ')) return false;
  const segments = run.split('.');
  for (let i = 0; i + 2 < segments.length; i++) {
    const at = segments[i]!.lastIndexOf('eyJ');
    if (at >= 0 && segments[i]!.length - at >= 7 && segments[i + 1]!.length >= 4) return true;
  }
  return false;
}
