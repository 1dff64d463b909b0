import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListDecodeError, ListDecoder } from './list-decoder.js';

/** Decodes `text` fed in the given pieces; returns the top-level fields and the items. */
function decode(text: string | Buffer, cuts: number[] = [], maxItemBytes = 1 << 20) {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const items: unknown[] = [];
  const d = new ListDecoder({ maxItemBytes, onItem: (item) => items.push(item) });
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    d.push(bytes.subarray(at, cut));
    at = cut;
  }
  return { fields: d.end(), items };
}

// Strings holding every character that means something to the framing, escapes, a backslash run
// before a quote, multi-byte UTF-8 (2, 3 and 4 bytes) and nested arrays and objects.
const TRICKY = {
  apiVersion: 'v1',
  kind: 'ConfigMapList',
  metadata: { resourceVersion: '42', continue: 'c,{]"' },
  items: [
    { metadata: { name: 'a' }, data: { k: 'x,}]{["\\\\"\\', u: 'é€😀', n: [[1, [2]], { a: [] }] } },
    { metadata: { name: 'b' }, data: {} },
    {},
    { metadata: { name: 'c', labels: { 'x/y': '\u0000\n\t' } }, spec: { v: -1.5e3, t: true, f: false, z: null } },
  ],
};

test('a list decodes to what JSON.parse gives, cut into pieces at every byte', () => {
  const text = JSON.stringify(TRICKY, null, 1);
  const bytes = Buffer.from(text);
  const { items: _items, ...top } = TRICKY;
  for (let cut = 0; cut <= bytes.length; cut++) {
    const { fields, items } = decode(bytes, [cut]);
    assert.deepEqual(items, TRICKY.items, `cut at ${cut}`);
    assert.deepEqual(fields, top, `cut at ${cut}`);
  }
  // One byte per piece: every state carried across a boundary at once.
  const oneByOne = decode(
    bytes,
    Array.from({ length: bytes.length }, (_, i) => i),
  );
  assert.deepEqual(oneByOne.items, TRICKY.items);
});

test('items in any position, empty, null or absent; whitespace anywhere between tokens', () => {
  assert.deepEqual(decode('{"items":[{"a":1}],"metadata":{"resourceVersion":"1"}}').fields, {
    metadata: { resourceVersion: '1' },
  });
  assert.deepEqual(decode(' {\n"items" : [ ] , "kind":"L" } \n').items, []);
  assert.deepEqual(decode('{"items":null}').fields, { items: null });
  assert.deepEqual(decode('{"kind":"L"}'), { fields: { kind: 'L' }, items: [] });
  assert.deepEqual(decode('{}'), { fields: {}, items: [] });
});

test('integers beyond 2^53 in an item stay exact (the client’s lossless parser decodes each item)', () => {
  const { items } = decode('{"items":[{"spec":{"big":9223372036854775807}}]}');
  assert.deepEqual(items, [{ spec: { big: 9223372036854775807n } }]);
});

test('what is not a list is refused, naming what is wrong and quoting none of the body', () => {
  const refusals: [string, RegExp][] = [
    ['[{"a":1}]', /a list response is a JSON object/],
    ['{"items":[{"a":1}', /ended before its closing brace/],
    ['{"items":[{"a":1}]}}', /unexpected bytes after the list object/],
    ['{"items":[{"a":1}]} x', /unexpected bytes after the list object/],
    ['{"items" "x"}', /expected ":"/],
    ['{1:2}', /expected a key/],
    ['{"items":[]] }', /expected "," or "}" after the items/],
    ['{"items":[{"a":1]}]}', /unbalanced brackets/],
  ];
  for (const [text, message] of refusals) {
    assert.throws(
      () => decode(text),
      (e: unknown) => e instanceof ListDecodeError && message.test(e.message),
      text,
    );
  }
  // A malformed item is the parser's to report.
  assert.throws(() => decode('{"items":[{"a":tru}]}'), SyntaxError);
});

test('an item longer than maxItemBytes is refused while it streams in, whether it arrives in one piece or many', () => {
  const secret = 's3cr3t'.repeat(100);
  const text = `{"items":[{"data":"${secret}"}]}`;
  for (const cuts of [[], [20, 200, 400]]) {
    assert.throws(
      () => decode(text, cuts, 256),
      (e: unknown) =>
        e instanceof ListDecodeError && /exceeds 256 bytes/.test(e.message) && !e.message.includes('s3cr3t'),
    );
  }
  // Many small items under the limit: the list as a whole has no limit here.
  const many = `{"items":[${Array.from({ length: 1000 }, (_, i) => `{"i":${i}}`).join(',')}]}`;
  assert.equal(decode(many, [100, 5000], 64).items.length, 1000);
});
