import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fnv1a64Hex, ownerOf } from './rendezvous.js';
import { memberIdOf } from './member-id.js';

const KEYS = Array.from({ length: 10_000 }, (_, i) => `ns-${i % 7}/database-${i}`);
const MEMBERS = ['08dc8307b57be76c', '08dc8507b57bead2', '08dc8607b57bec85', '08dc8007b57be253', '1f00aa0000000001'];

/** The textbook BigInt FNV-1a 64, to hold the 32-bit-halves version to. */
function referenceFnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const b of new TextEncoder().encode(text)) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
}

function assignment(members: readonly string[]): Map<string, string> {
  return new Map(KEYS.map((k) => [k, ownerOf(k, members)!]));
}

test('FNV-1a 64 matches the published values and a BigInt reference, multi-byte UTF-8 included', () => {
  assert.equal(fnv1a64Hex(''), 'cbf29ce484222325');
  assert.equal(fnv1a64Hex('a'), 'af63dc4c8601ec8c');
  assert.equal(fnv1a64Hex('foobar'), '85944171f73967e8');
  for (const s of [
    'hostname_3f2c-ü-€-𝄞',
    'x'.repeat(300),
    'db-operator-7d9f8c-abcde_0b7c1e4e-2c1d-4f55-9a5e-1b2c3d4e5f60',
  ])
    assert.equal(fnv1a64Hex(s), referenceFnv1a64(s), s);
});

test('member ids are 16 hex digits, a valid label value, stable per identity', () => {
  const id = memberIdOf('database-operator-7d9f8c-abcde_0b7c1e4e-2c1d-4f55-9a5e-1b2c3d4e5f60');
  assert.match(id, /^[0-9a-f]{16}$/);
  assert.equal(memberIdOf('database-operator-7d9f8c-abcde_0b7c1e4e-2c1d-4f55-9a5e-1b2c3d4e5f60'), id);
  assert.notEqual(memberIdOf('r1'), memberIdOf('r2'));
});

test('ownership does not depend on the order members are listed in, and nobody owns anything in an empty ring', () => {
  for (const key of KEYS.slice(0, 500)) assert.equal(ownerOf(key, MEMBERS), ownerOf(key, [...MEMBERS].reverse()));
  assert.equal(ownerOf('ns/x', []), undefined);
});

test('10,000 keys over 3 members: each holds a third, within 5% of it', (t) => {
  const counts = new Map<string, number>();
  for (const owner of assignment(MEMBERS.slice(0, 3)).values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  t.diagnostic(`keys per member: ${[...counts.values()].join(', ')}`);
  assert.equal(counts.size, 3);
  for (const [member, n] of counts) assert.ok(Math.abs(n / (KEYS.length / 3) - 1) < 0.05, `${member}: ${n}`);
});

test('a join moves about 1/N of 10,000 keys, all of them to the new member; a leave moves only the leaver’s keys', (t) => {
  for (let n = 2; n <= 4; n++) {
    const before = assignment(MEMBERS.slice(0, n));
    const after = assignment(MEMBERS.slice(0, n + 1));
    const joined = MEMBERS[n]!;
    let moved = 0;
    for (const key of KEYS) {
      if (before.get(key) === after.get(key)) continue;
      moved++;
      assert.equal(after.get(key), joined, `${key} moved to the joiner, not between old members`);
    }
    const fraction = moved / KEYS.length;
    t.diagnostic(
      `join ${n}→${n + 1} (and leave ${n + 1}→${n}): ${moved} of ${KEYS.length} keys moved (${(fraction * 100).toFixed(2)}%, ideal ${(100 / (n + 1)).toFixed(2)}%)`,
    );
    // Expected 1/(n+1); binomial standard deviation at 10,000 keys is under 0.5%.
    assert.ok(
      Math.abs(fraction - 1 / (n + 1)) < 0.02,
      `join ${n}→${n + 1}: moved ${fraction.toFixed(4)}, expected ${(1 / (n + 1)).toFixed(4)}`,
    );

    // The leave is the same pair read backwards: only keys of the leaver change owner.
    for (const key of KEYS) if (after.get(key) !== joined) assert.equal(before.get(key), after.get(key));
  }
});
