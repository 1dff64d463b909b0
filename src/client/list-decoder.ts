/**
 * Decodes a list response (`{"kind":…,"metadata":{…},"items":[{…},{…}]}`) item by item as its bytes
 * arrive, instead of holding the whole body as one string and parsing it in one `JSON.parse`. A
 * `resourceVersion=0` list is served whole by the API server's watch cache (it ignores `limit`):
 * 10,000 Database-like objects are a 22 MB body, which used to be held as text and parsed in one
 * blocking step, with the text, the parser's garbage and the decoded objects all live at once. Here
 * each item is parsed on its own once its last byte has arrived, and handed on; what stays is the
 * item being read and the small top-level fields.
 *
 * Only the framing is scanned here (depth, strings and their escapes, commas); each item and each
 * top-level value is parsed by the client's lossless `parseJson`, so a malformed item is reported by
 * the same parser as a whole body would be. Items are cut at ASCII structural bytes, so a multi-byte
 * character is never split between two decoded texts.
 */
import { OperatorRuntimeError } from '../core/errors.js';
import { parseJson } from './lossless-json.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Where the scanner is in the top-level object. */
type Expect =
  | 'document' // before the opening brace
  | 'key' // a key or the closing brace
  | 'colon'
  | 'value' // the first byte of a top-level value
  | 'in-value' // inside a top-level value other than items
  | 'item' // the first byte of an item, or the end of the items array
  | 'in-item'
  | 'after-items' // a comma or the closing brace
  | 'end'; // only whitespace may follow

/** The body is not a list this decoder can read (not JSON, cut short, or an item too long). */
export class ListDecodeError extends OperatorRuntimeError {
  declare readonly code: 'ERR_LIST_DECODE';
  constructor(message: string) {
    super('ERR_LIST_DECODE', message);
  }
}

export interface ListDecoderOptions {
  /** Longest single item (or top-level value) accepted, in bytes. */
  readonly maxItemBytes: number;
  /** Called with each item as soon as it is decoded, in order. */
  readonly onItem: (item: unknown) => void;
}

export class ListDecoder {
  private expect: Expect = 'document';
  /** Nesting depth: 1 inside the top-level object, 2 inside the items array. */
  private depth = 0;
  private inString = false;
  /** The previous chunk ended inside a string on an unpaired backslash. */
  private escapeNext = false;
  /** Pieces of the text being captured (a key, a top-level value or an item), from earlier chunks. */
  private pieces: Uint8Array[] = [];
  private pieceBytes = 0;
  /** Where the capture began in the current chunk (0 when it began in an earlier one), or -1. */
  private captureStart = -1;
  private key: string | undefined;
  /** Whether the string being scanned is a top-level key. */
  private readingKey = false;
  private readonly fields: Record<string, unknown> = {};

  constructor(private readonly options: ListDecoderOptions) {}

  /** Scans one chunk; throws `ListDecodeError` (or the parser's SyntaxError) on a malformed body. */
  push(chunk: Uint8Array): void {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        i = this.skipString(chunk, i);
        continue;
      }
      const b = chunk[i]!;
      if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
        i++;
        continue;
      }
      switch (this.expect) {
        case 'document':
          if (b !== OPEN_BRACE) throw new ListDecodeError('a list response is a JSON object');
          this.depth = 1;
          this.expect = 'key';
          i++;
          continue;
        case 'key':
          if (b === CLOSE_BRACE) {
            this.depth = 0;
            this.expect = 'end';
          } else if (b === QUOTE) {
            this.inString = true;
            this.readingKey = true;
            this.captureStart = i;
          } else if (b !== COMMA) throw new ListDecodeError('expected a key in the list object');
          i++;
          continue;
        case 'colon':
          if (b !== COLON) throw new ListDecodeError('expected ":" after a key in the list object');
          this.expect = 'value';
          i++;
          continue;
        case 'value':
          if (this.key === 'items' && b === OPEN_BRACKET) {
            this.depth = 2;
            this.expect = 'item';
            i++;
            continue;
          }
          this.captureStart = i;
          this.expect = 'in-value';
          continue; // the value's first byte is scanned below
        case 'item':
          if (b === CLOSE_BRACKET) {
            this.depth = 1;
            this.expect = 'after-items';
            i++;
            continue;
          }
          this.captureStart = i;
          this.expect = 'in-item';
          continue;
        case 'after-items':
          if (b === COMMA) this.expect = 'key';
          else if (b === CLOSE_BRACE) {
            this.depth = 0;
            this.expect = 'end';
          } else throw new ListDecodeError('expected "," or "}" after the items');
          i++;
          continue;
        case 'end':
          throw new ListDecodeError('unexpected bytes after the list object');
        case 'in-value':
        case 'in-item':
          i = this.scanValue(chunk, i, b);
          continue;
      }
    }
    if (this.captureStart !== -1) {
      const rest = chunk.subarray(this.captureStart);
      this.pieceBytes += rest.length;
      if (this.pieceBytes > this.options.maxItemBytes)
        throw new ListDecodeError(`a list item exceeds ${this.options.maxItemBytes} bytes`);
      this.pieces.push(rest);
      this.captureStart = 0;
    }
  }

  /** The list's top-level fields with `items` as decoded (empty: each was handed to `onItem`). */
  end(): Record<string, unknown> {
    if (this.expect !== 'end') throw new ListDecodeError('the list response ended before its closing brace');
    return this.fields;
  }

  /** One byte of a top-level value or an item, outside strings; returns the next index. */
  private scanValue(chunk: Uint8Array, i: number, b: number): number {
    const base = this.expect === 'in-item' ? 2 : 1;
    if (this.depth === base && (b === COMMA || b === (base === 2 ? CLOSE_BRACKET : CLOSE_BRACE))) {
      const text = this.takeCapture(chunk, i);
      if (base === 2) {
        this.options.onItem(parseJson(text));
        if (b === COMMA) this.expect = 'item';
        else {
          this.depth = 1;
          this.expect = 'after-items';
        }
      } else {
        this.fields[this.key!] = parseJson(text);
        if (b === COMMA) this.expect = 'key';
        else {
          this.depth = 0;
          this.expect = 'end';
        }
      }
      return i + 1;
    }
    if (b === QUOTE) this.inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) this.depth++;
    else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      this.depth--;
      if (this.depth < base) throw new ListDecodeError('unbalanced brackets in the list response');
    }
    return i + 1;
  }

  /** Scans inside a string from `i`; returns the index after its closing quote, or the chunk's end. */
  private skipString(chunk: Uint8Array, i: number): number {
    if (this.escapeNext) {
      this.escapeNext = false;
      i++;
    }
    for (;;) {
      const quote = chunk.indexOf(QUOTE, i);
      if (quote === -1) {
        // The string goes on in the next chunk; an odd run of backslashes at the end escapes its first byte.
        this.escapeNext = oddBackslashRun(chunk, chunk.length, i);
        return chunk.length;
      }
      if (oddBackslashRun(chunk, quote, i)) {
        i = quote + 1;
        continue;
      }
      this.inString = false;
      if (this.readingKey) {
        this.readingKey = false;
        this.key = parseJson(this.takeCapture(chunk, quote + 1)) as string;
        this.expect = 'colon';
      }
      return quote + 1;
    }
  }

  /** The captured text, from its start to `end` (exclusive) in this chunk; the capture is over. */
  private takeCapture(chunk: Uint8Array, end: number): string {
    const last = chunk.subarray(this.captureStart, end);
    this.captureStart = -1;
    if (this.pieceBytes + last.length > this.options.maxItemBytes)
      throw new ListDecodeError(`a list item exceeds ${this.options.maxItemBytes} bytes`);
    if (this.pieces.length === 0) return utf8(last);
    this.pieces.push(last);
    const text = utf8(Buffer.concat(this.pieces, this.pieceBytes + last.length));
    this.pieces = [];
    this.pieceBytes = 0;
    return text;
  }
}

/** Whether the backslashes right before `end` (not looking before `from`) are an odd run. */
function oddBackslashRun(chunk: Uint8Array, end: number, from: number): boolean {
  let j = end - 1;
  while (j >= from && chunk[j] === BACKSLASH) j--;
  return (end - 1 - j) % 2 === 1;
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
}
