/**
 * Bounded reads of response bodies. A misbehaving server or proxy can answer with any amount of
 * data; reading it whole first and judging it afterwards let a 200 MiB body grow RSS by ~600 MiB.
 * Here the limit is enforced while the body streams in, and the stream is destroyed (which closes
 * the connection) the moment it is crossed.
 */
import { ListDecoder } from './list-decoder.js';
import { OperatorRuntimeError } from '../core/errors.js';

/** A response body as undici hands it over (a Readable): chunks as 'data' events, and a way to stop reading. */
export interface BodyStream {
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  removeAllListeners(event?: string): unknown;
  destroy(err?: Error): unknown;
}

/**
 * Feeds each chunk to `take` until the body ends (resolves true) or `take` returns false (the body
 * is destroyed; resolves false). Listens to 'data' rather than iterating: async iteration reads
 * through `read()`, which concatenates chunks buffered meanwhile into fresh copies.
 */
function consume(body: BodyStream, take: (chunk: Uint8Array) => boolean): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    // The listeners are unnamed arrows over one object, not closures bound to names: run through
    // tsx (as the benches are), every named closure made per response also costs a defineProperty.
    const reading = new BodyReading(body, resolve, reject);
    body.on('data', (chunk) => {
      if (reading.settled) return;
      let more: boolean;
      try {
        more = take(chunk);
      } catch (err) {
        body.destroy();
        return reading.finish(err as Error, false);
      }
      if (!more) {
        body.destroy();
        reading.finish(undefined, false);
      }
    });
    body.on('end', () => reading.finish(undefined, true));
    body.on('error', (err) => reading.finish(err, false));
    // Closed without 'end' or 'error' (destroyed from elsewhere): the body is incomplete. Every body
    // closes after its 'end', so the Error (its stack capture walks the whole async chain, ~10 µs
    // per response under a reconcile) is built only when the close is the unexpected one.
    body.on('close', () => {
      if (!reading.settled) reading.finish(new Error('response body closed before its end'), false);
    });
  });
}

/** One body being consumed: settles its promise once, and stops listening to 'data' then. */
class BodyReading {
  settled = false;

  constructor(
    private readonly body: BodyStream,
    private readonly resolve: (ended: boolean) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  finish(err: Error | undefined, ended: boolean): void {
    if (this.settled) return;
    this.settled = true;
    this.body.removeAllListeners('data');
    if (err) this.reject(err);
    else this.resolve(ended);
  }
}

/**
 * A response body larger than the client accepts. Names the limit and the request, never any of
 * the body.
 */
export class ResponseTooLargeError extends OperatorRuntimeError {
  declare readonly code: 'ERR_RESPONSE_TOO_LARGE';
  readonly method: string;
  readonly path: string;
  readonly limitBytes: number;
  constructor(method: string, path: string, limitBytes: number, what = 'response body', option = 'maxResponseBytes') {
    super(
      'ERR_RESPONSE_TOO_LARGE',
      `${method} ${path}: ${what} exceeds ${limitBytes} bytes (${option}); the rest was not read`,
    );
    this.method = method;
    this.path = path;
    this.limitBytes = limitBytes;
  }
}

/**
 * Reads at most `limitBytes` of the body as UTF-8 text and destroys the rest unread: for error
 * answers, where the status says what happened and a page of text is all a message can use.
 * Never throws; a body that fails midway yields what arrived before.
 */
export async function readBodyPrefix(
  body: BodyStream,
  limitBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  try {
    await consume(body, (chunk) => {
      const room = limitBytes - total;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        total += Math.max(room, 0);
        truncated = true;
        return false;
      }
      chunks.push(chunk);
      total += chunk.length;
      return true;
    });
  } catch {
    // The status alone still says what happened.
    body.destroy();
  }
  // Not fatal: a cut may split a multi-byte character, which becomes U+FFFD.
  return { text: new TextDecoder('utf-8').decode(Buffer.concat(chunks, total)), truncated };
}

/**
 * Reads the whole body as UTF-8 text, or throws `tooLarge()` as soon as it would exceed
 * `limitBytes` (a `content-length` above the limit fails before anything is read); a body not read
 * to its end is destroyed. Decodes as the chunks arrive, so the raw bytes are dropped as they go
 * instead of living next to the text and a concatenated copy at the end (bench/hostile-response.bench.ts,
 * 30 MiB list: 200–217 MiB peak RSS, against 228–242 MiB when concatenating the bytes first).
 */
export async function readBodyLimited(
  body: BodyStream,
  limitBytes: number,
  contentLength: string | string[] | undefined,
  tooLarge: () => Error,
): Promise<string> {
  const declared = typeof contentLength === 'string' && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;
  if (declared !== undefined && declared > limitBytes) {
    body.destroy();
    throw tooLarge();
  }
  // Most answers arrive as one chunk: that one is decoded in one call of a shared decoder. A
  // streaming decoder (an ICU converter of its own, ten times the cost of the call) is made only
  // once a second chunk shows the body is in pieces.
  let first: Uint8Array | undefined;
  let stream: InstanceType<typeof TextDecoder> | undefined;
  const parts: string[] = [];
  let total = 0;
  await consume(body, (chunk) => {
    total += chunk.length;
    if (total > limitBytes) throw tooLarge();
    if (stream) parts.push(stream.decode(chunk, STREAM));
    else if (first === undefined) first = chunk;
    else {
      stream = new TextDecoder('utf-8');
      parts.push(stream.decode(first, STREAM), stream.decode(chunk, STREAM));
      first = undefined;
    }
    return true;
  });
  if (!stream) return first === undefined ? '' : UTF8.decode(first);
  parts.push(stream.decode());
  return parts.join('');
}

/** Stateless between calls when not streaming: one serves every single-chunk body. */
const UTF8 = new TextDecoder('utf-8');
const STREAM = { stream: true };

/**
 * Reads a list response item by item (list-decoder.ts): each item is decoded as soon as its last
 * byte arrives and passed through `shape`, so the body is never held whole. Returns the list's
 * top-level fields with `items` as shaped. A body that is not a list throws `ListDecodeError` or
 * the parser's `SyntaxError`; an item over `maxItemBytes` throws `ListDecodeError`.
 */
export async function readListBody(
  body: BodyStream,
  maxItemBytes: number,
  shape: (item: unknown) => unknown,
): Promise<Record<string, unknown>> {
  const items: unknown[] = [];
  const decoder = new ListDecoder({ maxItemBytes, onItem: (item) => items.push(shape(item)) });
  await consume(body, (chunk) => {
    decoder.push(chunk);
    return true;
  });
  const fields = decoder.end();
  // `"items": null` (or another non-array) was kept as a top-level field, for the caller to judge.
  return 'items' in fields ? fields : { ...fields, items };
}
