/**
 * Streaming decoder for the API server's watch body: one JSON event per line. Chunks may split a
 * line (or a multi-byte UTF-8 character) anywhere; a line is only decoded once it is complete, and
 * a large object is assembled from its chunks once rather than by repeated string concatenation.
 * A malformed line or an ERROR event throws a typed error: an event is never silently dropped.
 */
import { InvalidOptionError, OperatorRuntimeError } from '../core/errors.js';
import { ApiError, type StatusBody } from './api-error.js';
import { parseJson } from './lossless-json.js';

/** A watch event as the API server sends it, before ERROR events are turned into exceptions. */
export type RawWatchEvent =
  | { readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; readonly object: Record<string, unknown> }
  | { readonly type: 'ERROR'; readonly object: StatusBody };

/** The events a watch iterator yields. BOOKMARK objects carry only metadata.resourceVersion reliably. */
export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: { metadata: { resourceVersion: string } } & Partial<T> };

/**
 * A watch line that is not a well-formed event. The message says where and why, never the line's
 * content: a watch on Secrets would otherwise put their data into logs.
 */
export class WatchDecodeError extends OperatorRuntimeError {
  declare readonly code: 'ERR_WATCH_DECODE';
  /** Byte offset of the line's start in the stream. */
  readonly offset: number;
  /** Length of the offending line in bytes. */
  readonly lineBytes: number;
  constructor(message: string, offset: number, lineBytes: number) {
    super('ERR_WATCH_DECODE', `${message} (watch line at byte ${offset}, ${lineBytes} bytes)`);
    this.offset = offset;
    this.lineBytes = lineBytes;
  }
}

export interface WatchDecoderOptions {
  /**
   * Largest line accepted before failing, so a broken stream cannot grow memory without bound.
   * @defaultValue DEFAULT_MAX_WATCH_LINE_BYTES
   */
  readonly maxLineBytes?: number;
}

/**
 * 16 MiB: ten times etcd's default request limit (1.5 MiB, which bounds one object), with room for
 * the event envelope and JSON escaping, while one bad line can no longer cost 128 MiB of buffers.
 */
export const DEFAULT_MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;
const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

export class WatchDecoder {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineStart = 0;
  private readonly maxLineBytes: number;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  private failure: WatchDecodeError | undefined;

  constructor(options: WatchDecoderOptions = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_WATCH_LINE_BYTES;
    if (!(Number.isSafeInteger(this.maxLineBytes) && this.maxLineBytes > 0))
      throw new InvalidOptionError('maxWatchLineBytes', 'must be a positive integer');
  }

  /**
   * Feeds one chunk; returns the events completed by it, in order. When a line in the chunk is
   * malformed, or the chunk leaves an unfinished line longer than the limit, the events before it
   * are still returned and the error is thrown by the next call (push or end): nothing that arrived
   * intact is lost, and the failure is never skipped. After a failure every call throws it again.
   */
  push(chunk: Uint8Array): RawWatchEvent[] {
    if (this.failure) throw this.failure;
    const events: RawWatchEvent[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE, from); nl >= 0; nl = chunk.indexOf(NEWLINE, from)) {
      try {
        const tail = chunk.subarray(from, nl);
        // Checked for whole lines too, so the outcome never depends on how the stream was chunked.
        if (this.pendingBytes === 0 && tail.length > this.maxLineBytes)
          throw new WatchDecodeError(`line exceeds ${this.maxLineBytes} bytes`, this.lineStart, tail.length);
        const line = this.pendingBytes === 0 ? tail : this.takePending(tail);
        const event = this.decodeLine(line);
        if (event) events.push(event);
        this.lineStart += line.length + 1;
      } catch (err) {
        this.failure = err as WatchDecodeError;
        this.pending = [];
        this.pendingBytes = 0;
        if (events.length === 0) throw err;
        return events;
      }
      from = nl + 1;
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      if (this.pendingBytes + rest.length > this.maxLineBytes) {
        // Regression guard: this used to throw here and lose the events decoded above.
        this.failure = new WatchDecodeError(
          `line exceeds ${this.maxLineBytes} bytes`,
          this.lineStart,
          this.pendingBytes + rest.length,
        );
        this.pending = [];
        this.pendingBytes = 0;
        if (events.length === 0) throw this.failure;
        return events;
      }
      this.pendingBytes += rest.length;
      // Copy: the caller (undici) may reuse the chunk's memory after we return.
      this.pending.push(Uint8Array.prototype.slice.call(rest));
    }
    return events;
  }

  /** Ends the stream: a last line without its newline is still an event, a partial one an error. */
  end(): RawWatchEvent[] {
    if (this.failure) throw this.failure;
    if (this.pendingBytes === 0) return [];
    try {
      const event = this.decodeLine(this.takePending(new Uint8Array(0)));
      return event ? [event] : [];
    } catch (err) {
      this.failure = err as WatchDecodeError;
      throw err;
    }
  }

  private takePending(tail: Uint8Array): Uint8Array {
    const total = this.pendingBytes + tail.length;
    if (total > this.maxLineBytes)
      throw new WatchDecodeError(`line exceeds ${this.maxLineBytes} bytes`, this.lineStart, total);
    const out = new Uint8Array(total);
    let at = 0;
    for (const part of this.pending) {
      out.set(part, at);
      at += part.length;
    }
    out.set(tail, at);
    this.pending = [];
    this.pendingBytes = 0;
    return out;
  }

  private decodeLine(line: Uint8Array): RawWatchEvent | undefined {
    // Blank lines (and a lone '\r') carry nothing; tolerate them as encoding/json.Decoder does.
    if (isBlank(line)) return undefined;
    let text: string;
    try {
      text = this.utf8.decode(line);
    } catch {
      throw new WatchDecodeError('line is not valid UTF-8', this.lineStart, line.length);
    }
    let parsed: unknown;
    try {
      parsed = parseJson(text);
    } catch {
      // The SyntaxError's message quotes the input, so it is deliberately not kept as the cause.
      throw new WatchDecodeError('line is not valid JSON', this.lineStart, line.length);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new WatchDecodeError('line is not a JSON object', this.lineStart, line.length);
    }
    const { type, object } = parsed as { type?: unknown; object?: unknown };
    if (typeof type !== 'string' || !EVENT_TYPES.has(type)) {
      throw new WatchDecodeError(
        `unknown watch event type ${JSON.stringify(String(type)).slice(0, 40)}`,
        this.lineStart,
        line.length,
      );
    }
    if (typeof object !== 'object' || object === null || Array.isArray(object)) {
      throw new WatchDecodeError(`${type} event has no object`, this.lineStart, line.length);
    }
    if (
      type === 'BOOKMARK' &&
      typeof (object as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion !== 'string'
    ) {
      throw new WatchDecodeError('BOOKMARK event without metadata.resourceVersion', this.lineStart, line.length);
    }
    return { type, object } as RawWatchEvent;
  }
}

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x0d && b !== 0x09) return false;
  return true;
}

/** Turns decoded events into what the iterator yields: an ERROR event becomes a thrown ApiError. */
export function toWatchEvent<T>(raw: RawWatchEvent, where?: { method?: string; path?: string }): WatchEvent<T> {
  if (raw.type === 'ERROR') throw ApiError.fromStatus(raw.object, 500, where);
  return raw as WatchEvent<T>;
}
