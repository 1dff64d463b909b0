import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  FULL_HASH_RANGE,
  HASH_SPACE_END,
  InvalidShardSelectorError,
  fnv1a64,
  formatHashBound,
  formatShardSelector,
  hashRange,
  mergeRanges,
  objectInRange,
  parseShardSelector,
  rangeFraction,
  selectorMatches,
  shardHash,
  splitHashSpace,
} from './shard-selector.js';
import { InvalidArgumentError } from '../core/errors.js';

/** FNV-1a 64 of each string's UTF-8 bytes as Go's hash/fnv.New64a computes it (the server's hash), printed with %016x. */
const GO_FNV1A64: readonly [string, string][] = [
  ['', 'cbf29ce484222325'],
  ['a', 'af63dc4c8601ec8c'],
  ['foobar', '85944171f73967e8'],
  ['default', 'ebada5168620c5fe'],
  ['0f5e3c2a-8b1d-4e6f-9a7c-1d2e3f4a5b6c', '66543a0264dee9de'],
  ['ünïcødé-名前', 'e7e02dcccc2412aa'],
  ['database-operator-system', '0fee7489b13ac7a7'],
];

/** Reference FNV-1a 64 in plain BigInt arithmetic, to check the two-halves version on random input. */
function referenceFnv1a64(value: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(value)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & (HASH_SPACE_END - 1n);
  return h;
}

describe('fnv1a64', () => {
  test('matches Go hash/fnv New64a (the API server hash), including multi-byte UTF-8', () => {
    for (const [input, hex] of GO_FNV1A64)
      assert.equal(formatHashBound(fnv1a64(input)), `0x${hex}`, JSON.stringify(input));
  });

  test('matches a BigInt reference on 2,000 random uids and strings', () => {
    for (let i = 0; i < 2000; i++) {
      const s =
        i % 2
          ? randomUUID()
          : String.fromCodePoint(...Array.from({ length: i % 40 }, (_, j) => 32 + ((i * 7919 + j * 104729) % 0x2fff)));
      assert.equal(fnv1a64(s), referenceFnv1a64(s), JSON.stringify(s));
    }
  });

  test('shardHash hashes uid or namespace; an absent field hashes as ""', () => {
    const obj = { metadata: { uid: 'a', namespace: 'default' } };
    assert.equal(shardHash(obj), fnv1a64('a'));
    assert.equal(shardHash(obj, 'namespace'), fnv1a64('default'));
    assert.equal(shardHash({}, 'namespace'), fnv1a64(''));
  });
});

describe('hash ranges', () => {
  test('splitHashSpace(n) gives n contiguous ranges from 0 to 2^64 whose sizes differ by at most 1', () => {
    for (const n of [1, 2, 3, 5, 7, 64]) {
      const ranges = splitHashSpace(n);
      assert.equal(ranges.length, n);
      assert.equal(ranges[0]!.start, 0n);
      assert.equal(ranges[n - 1]!.end, HASH_SPACE_END);
      for (let i = 1; i < n; i++) assert.equal(ranges[i]!.start, ranges[i - 1]!.end);
      const sizes = ranges.map((r) => r.end - r.start);
      const min = sizes.reduce((a, b) => (a < b ? a : b));
      const max = sizes.reduce((a, b) => (a > b ? a : b));
      assert.ok(max - min <= 1n, `n=${n}`);
    }
    assert.deepEqual(splitHashSpace(2), [hashRange(0n, 1n << 63n), hashRange(1n << 63n, HASH_SPACE_END)]);
  });

  test('each object is in exactly one range of a split (10,000 uids, 3 ranges, each within 5% of a third)', () => {
    const ranges = splitHashSpace(3);
    const counts = [0, 0, 0];
    for (let i = 0; i < 10_000; i++) {
      const obj = { metadata: { uid: randomUUID() } };
      const hits = ranges.map((r) => objectInRange(obj, r));
      assert.equal(hits.filter(Boolean).length, 1);
      counts[hits.indexOf(true)]!++;
    }
    for (const c of counts) assert.ok(Math.abs(c - 10_000 / 3) < (10_000 / 3) * 0.05, `counts ${counts.join(',')}`);
  });

  test('range bounds: start inclusive, end exclusive', () => {
    const h = fnv1a64('a');
    assert.ok(objectInRange({ metadata: { uid: 'a' } }, hashRange(h, h + 1n)));
    assert.ok(!objectInRange({ metadata: { uid: 'a' } }, hashRange(h + 1n, HASH_SPACE_END)));
    assert.ok(!objectInRange({ metadata: { uid: 'a' } }, hashRange(0n, h)));
    assert.ok(
      objectInRange({ metadata: { uid: 'a' } }, [hashRange(0n, 1n), hashRange(h, h + 1n)]),
      'any of several ranges',
    );
  });

  test('invalid ranges and counts are InvalidArgumentErrors naming the problem', () => {
    assert.throws(
      () => hashRange(5n, 5n),
      (e: unknown) => e instanceof InvalidArgumentError && /start < end/.test(e.message),
    );
    assert.throws(() => hashRange(0n, HASH_SPACE_END + 1n), InvalidArgumentError);
    assert.throws(() => hashRange(-1n, 3n), InvalidArgumentError);
    assert.throws(
      () => splitHashSpace(0),
      (e: unknown) => e instanceof InvalidArgumentError && /positive integer/.test(e.message),
    );
    assert.throws(() => splitHashSpace(1.5), InvalidArgumentError);
  });

  test('mergeRanges sorts and merges touching and overlapping ranges; rangeFraction measures coverage', () => {
    const q = splitHashSpace(4);
    assert.deepEqual(mergeRanges([q[2]!, q[0]!, q[1]!]), [hashRange(0n, q[2]!.end)]);
    assert.deepEqual(mergeRanges([q[3]!, q[0]!]), [q[0], q[3]]);
    assert.deepEqual(mergeRanges([hashRange(0n, 10n), hashRange(5n, 7n)]), [hashRange(0n, 10n)]);
    assert.equal(rangeFraction([q[3]!, q[0]!]), 0.5);
    assert.equal(rangeFraction(FULL_HASH_RANGE), 1);
  });
});

describe('shard selectors', () => {
  test('formats as the server documents it: 16 lowercase hex digits, 2^64 as 0x10000000000000000, ranges joined by ||', () => {
    const [lower, upper] = splitHashSpace(2);
    assert.equal(
      formatShardSelector(lower!),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    );
    assert.equal(
      formatShardSelector(upper!, 'namespace'),
      "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
    );
    const q = splitHashSpace(4);
    assert.equal(
      formatShardSelector([q[3]!, q[0]!]),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')",
    );
    assert.equal(
      formatShardSelector([q[0]!, q[1]!]),
      "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
      'adjacent ranges merge',
    );
    assert.throws(() => formatShardSelector([]), InvalidArgumentError);
    assert.throws(() => formatShardSelector({ start: 3n, end: 1n }), InvalidArgumentError);
  });

  test('parse(format(x)) round-trips and matches the same objects as the ranges', () => {
    const ranges = [splitHashSpace(5)[1]!, splitHashSpace(5)[3]!];
    const parsed = parseShardSelector(formatShardSelector(ranges, 'uid'));
    assert.equal(parsed.field, 'uid');
    assert.deepEqual(parsed.ranges, ranges);
    for (let i = 0; i < 500; i++) {
      const obj = { metadata: { uid: randomUUID() } };
      assert.equal(selectorMatches(parsed, obj), objectInRange(obj, ranges));
    }
    assert.deepEqual(
      parseShardSelector("  shardRange( object.metadata.namespace ,'0x0000000000000000','0x10000000000000000')  ")
        .ranges,
      [FULL_HASH_RANGE],
    );
  });

  test('rejects what the 1.36 server rejects, saying why', () => {
    const bad: readonly [string, RegExp][] = [
      ['', /empty/],
      ["shardRange(object.metadata.uid, '0x0', '0x8000000000000000')", /16 lowercase hex digits/],
      [
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
        /same field/,
      ],
      ["shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", /unsupported field path/],
      ["shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')", /less than end/],
      ["shardRange(object.metadata.uid, '0x0000000000000000', '0xFFFFFFFFFFFFFFFF')", /lowercase/],
      ["shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')", /16 lowercase hex digits/],
      ['labels.app == "x"', /is not shardRange/],
    ];
    for (const [selector, reason] of bad) {
      assert.throws(
        () => parseShardSelector(selector),
        (e: unknown) =>
          e instanceof InvalidShardSelectorError && e.code === 'ERR_INVALID_ARGUMENT' && reason.test(e.message),
        selector,
      );
    }
  });
});
