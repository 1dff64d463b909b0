/**
 * Bounded reads of response bodies. A misbehaving server or proxy can answer with any amount of
 * data; reading it whole first and judging it afterwards let a 200 MiB body grow RSS by ~600 MiB.
 * Here the limit is enforced while the body streams in, and the stream is destroyed (which closes
 * the connection) the moment it is crossed.
 */
import { OperatorRuntimeError } from '../core/errors.js';

/** A response body as undici hands it over: chunks, and a way to stop reading. */
export interface BodyStream extends AsyncIterable<Uint8Array> {
  destroy(err?: Error): unknown;
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
    super('ERR_RESPONSE_TOO_LARGE', `${method} ${path}: ${what} exceeds ${limitBytes} bytes (${option}); the rest was not read`);
    this.method = method;
    this.path = path;
    this.limitBytes = limitBytes;
  }
}

/**
 * Reads the whole body into one buffer, or throws `tooLarge()` as soon as it would exceed
 * `limitBytes` (a `content-length` above the limit fails before anything is read). Either way a
 * body that is not read to its end is destroyed.
 */
export async function readBodyLimited(body: BodyStream, limitBytes: number, contentLength: string | string[] | undefined, tooLarge: () => Error): Promise<Buffer> {
  const declared = typeof contentLength === 'string' && /^\d+$/.test(contentLength) ? Number(contentLength) : undefined;
  if (declared !== undefined && declared > limitBytes) {
    body.destroy();
    throw tooLarge();
  }
  // With a declared length the bytes go straight into their final buffer: no second copy at the end.
  const into = declared !== undefined ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Uint8Array[] = [];
  let total = 0;
  let done = false;
  try {
    for await (const chunk of body) {
      total += chunk.length;
      if (total > limitBytes || (into && total > into.length)) throw tooLarge();
      if (into) into.set(chunk, total - chunk.length);
      else chunks.push(chunk);
    }
    done = true;
  } finally {
    if (!done) body.destroy();
  }
  if (into) return total === into.length ? into : into.subarray(0, total);
  return Buffer.concat(chunks, total);
}

/**
 * Reads at most `limitBytes` of the body as UTF-8 text and destroys the rest unread: for error
 * answers, where the status says what happened and a page of text is all a message can use.
 * Never throws; a body that fails midway yields what arrived before.
 */
export async function readBodyPrefix(body: BodyStream, limitBytes: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  let done = false;
  try {
    for await (const chunk of body) {
      const room = limitBytes - total;
      if (chunk.length > room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        total += Math.max(room, 0);
        truncated = true;
        break;
      }
      chunks.push(chunk);
      total += chunk.length;
    }
    done = !truncated;
  } catch {
    // The status alone still says what happened.
  } finally {
    if (!done) body.destroy();
  }
  // Not fatal: a cut may split a multi-byte character, which becomes U+FFFD.
  return { text: new TextDecoder('utf-8').decode(Buffer.concat(chunks, total)), truncated };
}
