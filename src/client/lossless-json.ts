/**
 * JSON for API server bodies without silent rounding. Kubernetes stores integers as int64; a JS
 * number holds integers exactly only up to 2^53, so `JSON.parse` turns 9223372036854775807 into
 * 9223372036854776000 and a read-modify-write would store the rounded value. Here an integer that
 * is not a safe JS integer arrives as a `bigint` (exact; arithmetic mixing it with numbers throws
 * instead of rounding), and a `bigint` in a body being sent is written as its exact digits.
 *
 * Cost: a body is parsed by plain `JSON.parse` unless it holds a run of 16 or more digits (every
 * integer beyond 2^53 has at least 16); only then is it scanned for such integers outside strings,
 * and only if one is found is it parsed a second, slower way.
 */

/** Any integer outside ±(2^53 − 1) has at least this many digits. */
const LONG_RUN = 16;
import { OperatorRuntimeError } from '../core/errors.js';
import { escapeRegExp } from '../core/escape-reg-exp.js';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/**
 * Marks a big integer rewritten as a string for the second parse. The NUL and the per-process
 * random part make a collision with a real string value impossible in practice; a body that holds
 * the marker anyway is refused rather than misread.
 */
const MARKER = `\u0000operator-runtime-int:${Math.random().toString(36).slice(2)}:`;
const MARKER_JSON = JSON.stringify(MARKER).slice(1, -1);

/** `JSON.parse`, except that integers beyond ±(2^53 − 1) become exact `bigint`s. */
export function parseJson(text: string): unknown {
  if (!hasLongDigitRun(text)) return JSON.parse(text);
  const rewritten = quoteBigIntegers(text);
  if (rewritten === undefined) return JSON.parse(text);
  if (text.includes(MARKER_JSON))
    throw new OperatorRuntimeError('ERR_INVALID_JSON', 'response body holds the lossless-JSON marker');
  return JSON.parse(rewritten, reviveBigIntegers);
}

/** `JSON.stringify`, except that a `bigint` is written as its exact digits (never as a string). */
export function stringifyJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    // Only a bigint is worth a second try; a cycle throws again below, as it should.
    if (!(err instanceof TypeError)) throw err;
  }
  const out = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? MARKER + v.toString() : v));
  return out.replace(new RegExp(`"${escapeRegExp(MARKER_JSON)}(-?\\d+)"`, 'g'), '$1');
}

/**
 * Whether the text holds 16 digits in a row. Such a run covers one of every 16 positions, so only
 * those are looked at, and the run measured around a digit found there: about 1/16 of the text is
 * read (a regex tries every position; measured 5 times slower on a 4.5 MB list).
 */
export function hasLongDigitRun(text: string): boolean {
  const n = text.length;
  for (let i = LONG_RUN - 1; i < n; i += LONG_RUN) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let start = i;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = i + 1;
    while (end < n && end - start < LONG_RUN && isDigit(text.charCodeAt(end))) end++;
    if (end - start >= LONG_RUN) return true;
  }
  return false;
}

function reviveBigIntegers(_key: string, v: unknown): unknown {
  return typeof v === 'string' && v.startsWith(MARKER) ? BigInt(v.slice(MARKER.length)) : v;
}

/**
 * The text with every unsafe integer outside strings wrapped as a marked string, or undefined when
 * it has none. Malformed JSON is left for `JSON.parse` to reject.
 */
function quoteBigIntegers(text: string): string | undefined {
  let out: string[] | undefined;
  let copied = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string, honouring escapes.
      i++;
      while (i < n) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i += 2;
        else if (s === 0x22) break;
        else i++;
      }
      i++;
      continue;
    }
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      i++;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      const end = i;
      // A fraction or an exponent makes it a float: JSON.parse treats it as the server does.
      let isFloat = false;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d || isDigit(d)) {
          isFloat = true;
          i++;
        } else break;
      }
      const digits = end - start - (c === 0x2d ? 1 : 0);
      if (!isFloat && digits >= 16) {
        const token = text.slice(start, end);
        const big = safeBigInt(token);
        if (big !== undefined && (big > MAX_SAFE || big < -MAX_SAFE)) {
          out ??= [];
          out.push(text.slice(copied, start), '"', MARKER_JSON, token, '"');
          copied = end;
        }
      }
      continue;
    }
    i++;
  }
  if (!out) return undefined;
  out.push(text.slice(copied));
  return out.join('');
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function safeBigInt(token: string): bigint | undefined {
  // JSON forbids leading zeros; leave such a token for JSON.parse to refuse.
  if (/^-?0\d/.test(token) || token === '-') return undefined;
  try {
    return BigInt(token);
  } catch {
    return undefined;
  }
}
