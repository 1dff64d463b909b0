import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_MAX_WATCH_LINE_BYTES,
  WatchDecoder,
  WatchDecodeError,
  toWatchEvent,
  type RawWatchEvent,
} from './watch-decoder.js';
import { ApiError, isGone } from './api-error.js';

const enc = new TextEncoder();

function stream(): Uint8Array {
  const lines = [
    {
      type: 'ADDED',
      object: { kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '1' }, data: { k: 'héllo ✓ 𝄞' } },
    },
    { type: 'MODIFIED', object: { kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '2' } } },
    { type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '3' } } },
    { type: 'DELETED', object: { kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '4' } } },
  ];
  return enc.encode(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

function decodeAll(chunks: Uint8Array[]): RawWatchEvent[] {
  const d = new WatchDecoder();
  const out: RawWatchEvent[] = [];
  for (const c of chunks) out.push(...d.push(c));
  out.push(...d.end());
  return out;
}

test('a stream split at every byte offset decodes to the same events', () => {
  const bytes = stream();
  const whole = decodeAll([bytes]);
  assert.equal(whole.length, 4);
  for (let i = 0; i <= bytes.length; i++) {
    assert.deepEqual(decodeAll([bytes.subarray(0, i), bytes.subarray(i)]), whole, `split at ${i}`);
  }
});

test('a stream split at every pair of offsets, and byte by byte, decodes to the same events', () => {
  const bytes = stream();
  const whole = decodeAll([bytes]);
  for (let i = 0; i <= bytes.length; i += 7) {
    for (let j = i; j <= bytes.length; j += 3) {
      assert.deepEqual(decodeAll([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]), whole);
    }
  }
  assert.deepEqual(decodeAll(Array.from(bytes, (b) => Uint8Array.of(b))), whole);
});

test('the decoder copies a partial line so a reused chunk buffer cannot corrupt it', () => {
  const bytes = stream();
  const d = new WatchDecoder();
  const buf = new Uint8Array(10);
  const out: RawWatchEvent[] = [];
  for (let i = 0; i < bytes.length; i += 10) {
    const part = bytes.subarray(i, i + 10);
    buf.set(part);
    out.push(...d.push(buf.subarray(0, part.length)));
    buf.fill(0x7b); // what a pooled buffer might hold next
  }
  assert.deepEqual(out, decodeAll([bytes]));
});

test('a multi-megabyte object arriving in 16 KiB chunks decodes intact', () => {
  const big = 'x'.repeat(5 * 1024 * 1024);
  const line = enc.encode(
    JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'big' }, data: { big } } }) + '\n',
  );
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < line.length; i += 16 * 1024) chunks.push(line.subarray(i, i + 16 * 1024));
  const [event] = decodeAll(chunks);
  assert.equal((event!.object as { data: { big: string } }).data.big.length, big.length);
});

test('a last event without a trailing newline is still delivered at end of stream', () => {
  const events = decodeAll([enc.encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}')]);
  assert.equal(events.length, 1);
});

test('blank lines and CRLF line endings are tolerated', () => {
  const events = decodeAll([enc.encode('\n{"type":"ADDED","object":{}}\r\n\r\n{"type":"DELETED","object":{}}\n')]);
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED', 'DELETED'],
  );
});

test('a malformed line throws WatchDecodeError with its offset and no content from the line', () => {
  const d = new WatchDecoder();
  d.push(enc.encode('{"type":"ADDED","object":{}}\n'));
  assert.throws(
    () => d.push(enc.encode('{"type":"ADDED","object":{"data":{"password":"hunter2"}\n')),
    (e: unknown) =>
      e instanceof WatchDecodeError &&
      e.code === 'ERR_WATCH_DECODE' &&
      e.offset === 29 &&
      !e.message.includes('hunter2') &&
      e.cause === undefined,
  );
});

test('an event of unknown type, without object, or a truncated final line throws instead of being dropped', () => {
  assert.throws(() => new WatchDecoder().push(enc.encode('{"type":"WAT","object":{}}\n')), WatchDecodeError);
  assert.throws(() => new WatchDecoder().push(enc.encode('{"type":"ADDED"}\n')), WatchDecodeError);
  assert.throws(() => new WatchDecoder().push(enc.encode('[1,2]\n')), WatchDecodeError);
  assert.throws(
    () => new WatchDecoder().push(enc.encode('{"type":"BOOKMARK","object":{"metadata":{}}}\n')),
    WatchDecodeError,
  );
  const d = new WatchDecoder();
  d.push(enc.encode('{"type":"ADDED","obj'));
  assert.throws(() => d.end(), WatchDecodeError);
});

test('invalid UTF-8 in a line is a decode error', () => {
  assert.throws(() => new WatchDecoder().push(Uint8Array.of(0x7b, 0xff, 0x7d, 0x0a)), WatchDecodeError);
});

test('a line longer than maxLineBytes fails instead of buffering without bound', () => {
  const d = new WatchDecoder({ maxLineBytes: 100 });
  d.push(new Uint8Array(60).fill(0x20));
  assert.throws(() => d.push(new Uint8Array(60).fill(0x20)), WatchDecodeError);
});

test('an ERROR event becomes a thrown ApiError carrying the Status code and reason', () => {
  const [raw] = new WatchDecoder().push(
    enc.encode(
      '{"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}\n',
    ),
  );
  assert.throws(
    () => toWatchEvent(raw!),
    (e: unknown) => e instanceof ApiError && e.status === 410 && isGone(e),
  );
  const [ok] = new WatchDecoder().push(enc.encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'));
  assert.equal(toWatchEvent(ok!).type, 'ADDED');
});

test('events before a malformed line in the same chunk are delivered first, then the error is thrown', () => {
  const d = new WatchDecoder();
  const events = d.push(
    enc.encode('{"type":"ADDED","object":{}}\n{"type":"ADDED","object":{"x":\n{"type":"DELETED","object":{}}\n'),
  );
  assert.deepEqual(
    events.map((e) => e.type),
    ['ADDED'],
  );
  assert.throws(() => d.push(enc.encode('{"type":"ADDED","object":{}}\n')), WatchDecodeError);
  assert.throws(() => d.end(), WatchDecodeError, 'the failure is sticky');
});

test('events decoded from a chunk that ends in an oversized line are returned before the error (regression: they were thrown away)', () => {
  const d = new WatchDecoder({ maxLineBytes: 100 });
  const chunk = enc.encode(
    '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED","object":{"metadata":{"name":"b"}}}\n' +
      ' '.repeat(150),
  );
  const events = d.push(chunk);
  assert.deepEqual(
    events.map((e) => (e.object as { metadata: { name: string } }).metadata.name),
    ['a', 'b'],
  );
  assert.throws(
    () => d.push(enc.encode('\n')),
    (e: unknown) => e instanceof WatchDecodeError && /exceeds 100 bytes/.test(e.message),
  );
  assert.throws(() => d.end(), WatchDecodeError, 'the failure is sticky');
});

test('the line limit does not depend on chunking: a whole long line in one chunk fails like a split one', () => {
  const line = enc.encode(`{"type":"ADDED","object":{"metadata":{"name":"${'n'.repeat(200)}"}}}\n`);
  assert.throws(() => new WatchDecoder({ maxLineBytes: 100 }).push(line), WatchDecodeError);
  const split = new WatchDecoder({ maxLineBytes: 100 });
  assert.throws(() => {
    split.push(line.subarray(0, 50));
    split.push(line.subarray(50));
  }, WatchDecodeError);
});

test('the default watch line limit is 16 MiB', () => {
  assert.equal(DEFAULT_MAX_WATCH_LINE_BYTES, 16 * 1024 * 1024);
});
