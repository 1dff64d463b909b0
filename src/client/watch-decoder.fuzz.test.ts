/**
 * Fuzz (issue 18): the watch decoder under random chunking and garbage. Whatever the bytes and
 * wherever the chunks are cut, the decoder must deliver exactly the events a reference split of the
 * whole stream at its newlines yields up to the first bad line, lose none of them when the bad line
 * shows up (or overflows) in the same chunk, and throw nothing but `WatchDecodeError` (ERROR events:
 * `ApiError`). Synchronous code cannot hang; each property is bounded in time anyway.
 * Seeded (`FUZZ_SEED=<n>` replays a run) and bounded in time (`FUZZ_TIME_MS`, per property).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, fuzzTimeMs } from '../core/testing/fuzz.js';
import { ApiError } from './api-error.js';
import { WatchDecoder, WatchDecodeError, toWatchEvent, type RawWatchEvent } from './watch-decoder.js';

const TIME_MS = fuzzTimeMs(2000);
const enc = new TextEncoder();

const check = (name: string, property: fc.IRawProperty<unknown[]>): Promise<void> =>
  checkProperty(name, property, { timeMs: TIME_MS, file: import.meta.filename });

const text = fc.string({ unit: 'binary', maxLength: 12 });
const eventArb = fc.record({
  type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'),
  object: fc.record({
    metadata: fc.record({ name: text, resourceVersion: fc.string({ maxLength: 6 }) }),
    data: fc.dictionary(text, text, { maxKeys: 3, noNullPrototype: true }),
  }),
});
/** One event line, with the separators a server or proxy may use. */
const lineArb = fc
  .tuple(eventArb, fc.constantFrom('\n', '\r\n', '\n\n', ' \n'))
  .map(([e, end]) => JSON.stringify(e) + end);

/** Cuts `bytes` at the given points (taken modulo its length). */
function chunk(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => (bytes.length ? c % bytes.length : 0)))]
    .filter((c) => c > 0)
    .sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of at) {
    out.push(bytes.subarray(from, c));
    from = c;
  }
  out.push(bytes.subarray(from));
  return out;
}

/** Feeds the chunks as a watch would: stop at the first error. Anything but WatchDecodeError fails the property. */
function decode(chunks: Uint8Array[], maxLineBytes?: number): { events: RawWatchEvent[]; failed: boolean } {
  const d = new WatchDecoder({ maxLineBytes });
  const events: RawWatchEvent[] = [];
  try {
    for (const c of chunks) events.push(...d.push(c));
    events.push(...d.end());
  } catch (err) {
    if (!(err instanceof WatchDecodeError))
      throw new Error(`threw ${String(err)}, not WatchDecodeError`, { cause: err });
    // Sticky: the same failure again, never a silent recovery.
    assert.throws(() => d.end(), WatchDecodeError);
    return { events, failed: true };
  }
  return { events, failed: false };
}

/** The reference: split the whole stream at its newlines and judge each line on its own. */
function reference(bytes: Uint8Array, maxLineBytes: number): { events: RawWatchEvent[]; failed: boolean } {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const events: RawWatchEvent[] = [];
  let from = 0;
  while (from < bytes.length) {
    let nl = bytes.indexOf(0x0a, from);
    if (nl < 0) nl = bytes.length;
    const line = bytes.subarray(from, nl);
    from = nl + 1;
    if (line.length > maxLineBytes) return { events, failed: true };
    if (line.every((b) => b === 0x20 || b === 0x0d || b === 0x09)) continue;
    let v: unknown;
    try {
      v = JSON.parse(utf8.decode(line));
    } catch {
      return { events, failed: true };
    }
    const e = v as { type?: unknown; object?: unknown };
    const isObj = (o: unknown): o is Record<string, unknown> =>
      typeof o === 'object' && o !== null && !Array.isArray(o);
    if (
      !isObj(e) ||
      !['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].includes(e.type as string) ||
      !isObj(e.object)
    )
      return { events, failed: true };
    if (
      e.type === 'BOOKMARK' &&
      typeof (e.object.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion !== 'string'
    )
      return { events, failed: true };
    events.push({ type: e.type, object: e.object } as RawWatchEvent);
  }
  return { events, failed: false };
}

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

test('valid events survive any chunking, multi-byte characters cut in half included', async () => {
  await check(
    'valid streams',
    fc.property(fc.array(lineArb, { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 30 }), (lines, cuts) => {
      const bytes = enc.encode(lines.join(''));
      const got = decode(chunk(bytes, cuts));
      assert.equal(got.failed, false);
      assert.deepEqual(
        got.events,
        lines.map((l) => JSON.parse(l) as RawWatchEvent),
      );
    }),
  );
});

test('with garbage, oversized lines and random chunking: the same events as the reference split, then a WatchDecodeError', async () => {
  const segment = fc.oneof(
    { weight: 4, arbitrary: lineArb.map((l) => enc.encode(l)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '{"type":"ADDED"}\n',
          '[1]\n',
          'null\n',
          '{"type":"BOOKMARK","object":{}}\n',
          '{"type":"ERROR","object":{"code":"x"}}\n',
        )
        .map((s) => enc.encode(s)),
    },
    {
      weight: 1,
      arbitrary: fc.nat({ max: 600 }).map((n) => enc.encode(`{"type":"ADDED","object":{"k":"${'x'.repeat(n)}"}}\n`)),
    },
  );
  await check(
    'garbage streams',
    fc.property(
      fc.array(segment, { maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 30 }),
      fc.integer({ min: 1, max: 400 }),
      (segments, cuts, maxLineBytes) => {
        const bytes = concat(segments);
        const want = reference(bytes, maxLineBytes);
        const whole = decode([bytes], maxLineBytes);
        const chunked = decode(chunk(bytes, cuts), maxLineBytes);
        assert.deepEqual(whole, want);
        assert.deepEqual(chunked, want);
      },
    ),
  );
});

test('an ERROR event with any object becomes an ApiError, never another exception', async () => {
  await check(
    'ERROR events',
    fc.property(
      fc.oneof(
        fc.jsonValue(),
        fc.record({ code: fc.anything(), reason: fc.anything(), message: fc.anything(), details: fc.anything() }),
      ),
      (object) => {
        assert.throws(
          () => toWatchEvent({ type: 'ERROR', object } as RawWatchEvent),
          (e: unknown) =>
            e instanceof ApiError &&
            typeof e.status === 'number' &&
            typeof e.message === 'string' &&
            typeof e.reason === 'string',
        );
      },
    ),
  );
});
