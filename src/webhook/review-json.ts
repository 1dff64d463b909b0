/**
 * Decoding and encoding review bodies without losing a number. `JSON.parse` rounds every integer
 * beyond 2^53 (an int64 field such as 9223372036854775807 comes back as 9223372036854776000), so
 * a body is first scanned once: its shape (how many containers and members, how deep) prices
 * what decoding it will cost before anything is allocated, and a number `JSON.parse` cannot
 * hold exactly sends the body to lossless-json, which keeps such numbers as `LosslessNumber`
 * (their text) and writes them back byte for byte. Bodies without one (nearly all) take the
 * native parser, five times faster.
 */
import { isSafeNumber, LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

/** What one pass over a body found (outside strings). */
export interface JsonShape {
  /** `{` and `[`. */
  readonly containers: number;
  /** `,` and `:`: one per member or element beyond the first. */
  readonly separators: number;
  readonly maxDepth: number;
  /** A number with 16 or more digits or an exponent: one `JSON.parse` might round. */
  readonly riskyNumbers: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** One pass over UTF-8 JSON text; it does not validate (the parser does), it only counts. */
export function scanJson(body: Uint8Array): JsonShape {
  let containers = 0;
  let separators = 0;
  let depth = 0;
  let maxDepth = 0;
  let risky = false;
  let inString = false;
  let digits = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c >= 0x30 && c <= 0x39) {
      if (++digits >= 16) risky = true;
      continue;
    }
    if ((c === 0x65 || c === 0x45) && digits > 0)
      risky = true; // e/E after a digit: an exponent
    else if (c !== 0x2e) digits = 0; // '.' keeps counting: 0.1000000000000000055 has 19 digits
    switch (c) {
      case QUOTE:
        inString = true;
        break;
      case 0x7b: // {
      case 0x5b: // [
        containers++;
        if (++depth > maxDepth) maxDepth = depth;
        break;
      case 0x7d:
      case 0x5d:
        depth--;
        break;
      case 0x2c: // ,
      case 0x3a: // :
        separators++;
        break;
    }
  }
  return { containers, separators, maxDepth, riskyNumbers: risky };
}

/**
 * Bytes of memory (RSS) decoding a body of this shape may take, fitted above what Node 20 took
 * (RSS growth of `JSON.parse` over 7 MiB bodies: `[{},{},…]` 34 bytes per byte, i.e. ~100 per
 * container; a list of ordinary objects 3; of numbers 3.6; of strings 2.2): 96 bytes per
 * container, 12 per separator (a member's slot, a heap number), twice the text (strings), and the
 * body's buffer and string themselves (twice more).
 */
export function decodedBytesEstimate(bytes: number, shape: JsonShape): number {
  return 4 * bytes + copiedBytesEstimate(shape);
}

/** Bytes a copy of the decoded containers takes (a mutator's or converter's copy shares the strings). */
export function copiedBytesEstimate(shape: JsonShape): number {
  return 96 * shape.containers + 12 * shape.separators;
}

const numberParser = (text: string): unknown => (isSafeNumber(text) ? Number(text) : new LosslessNumber(text));

/** Whether a decoded body holds big numbers (then encode what comes of it with {@link encodeJson}'s lossless path). */
export interface Decoded {
  readonly value: unknown;
  readonly lossless: boolean;
}

/** Decodes `text` (throws a SyntaxError or RangeError for what is not JSON or too deep for the lossless parser). */
export function decodeJson(text: string, shape: JsonShape): Decoded {
  if (!shape.riskyNumbers) return { value: JSON.parse(text) as unknown, lossless: false };
  return { value: parseLossless(text, null, numberParser), lossless: true };
}

/**
 * JSON text of `value`: big numbers (`LosslessNumber`, bigint) written as the digits they hold.
 * `lossless` says whether `value` may hold any; a bigint a handler put in is found either way.
 */
export function encodeJson(value: unknown, lossless: boolean): string {
  if (!lossless) {
    try {
      return JSON.stringify(value);
    } catch (err) {
      if (!(err instanceof TypeError && /BigInt/i.test(err.message))) throw err;
    }
  }
  return stringifyLossless(value) ?? 'null';
}
