import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isLosslessNumber } from 'lossless-json';
import { decodedBytesEstimate, decodeJson, encodeJson, scanJson } from './review-json.js';

const scan = (text: string) => scanJson(Buffer.from(text));

describe('review JSON', () => {
  test('the scan counts containers and separators outside strings only, escapes included', () => {
    assert.deepEqual(scan('{"a":[1,2,{}],"b\\"{[":"x,:]}"}'), {
      containers: 3,
      separators: 5,
      maxDepth: 3,
      riskyNumbers: false,
    });
  });

  test('a number JSON.parse may round is found outside strings, not inside them', () => {
    assert.equal(scan('{"n":9007199254740993}').riskyNumbers, true);
    assert.equal(scan('{"n":1e400}').riskyNumbers, true);
    assert.equal(scan('{"n":0.1000000000000000055}').riskyNumbers, true);
    assert.equal(scan('{"n":123456789012345,"s":"9007199254740993","e":"1e5"}').riskyNumbers, false);
  });

  test('integers beyond 2^53 decode to LosslessNumber and encode byte for byte; safe numbers stay numbers', () => {
    const text =
      '{"a":9007199254740993,"b":1733079000123456789,"c":9223372036854775807,"d":[-9223372036854775808,1.5,7]}';
    const decoded = decodeJson(text, scan(text));
    assert.equal(decoded.lossless, true);
    const v = decoded.value as { a: unknown; d: unknown[] };
    assert.ok(isLosslessNumber(v.a));
    assert.equal(v.d[1], 1.5);
    assert.equal(encodeJson(decoded.value, decoded.lossless), text);
  });

  test('any integer survives decode and encode exactly (random bigints)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }), (n) => {
        const text = `{"n":${n}}`;
        const d = decodeJson(text, scan(text));
        assert.equal(encodeJson(d.value, d.lossless), text);
      }),
    );
  });

  test('a bigint a handler wrote is encoded as digits even from the fast path', () => {
    assert.equal(encodeJson({ n: 9223372036854775807n }, false), '{"n":9223372036854775807}');
  });

  test('the decode estimate of a `[{},{},…]` body is above what Node 20 took for it (34 bytes of RSS per body byte)', () => {
    const body = `[${Array.from({ length: 1000 }, () => '{}').join(',')}]`;
    assert.ok(decodedBytesEstimate(body.length, scan(body)) > 34 * body.length);
  });
});
