/**
 * Rendezvous (highest-random-weight) hashing: a key belongs to the member whose hash of
 * (member, key) is highest. Chosen over a virtual-node ring because it needs no tuning (no vnode
 * count) and is balanced in expectation: when a member joins it takes exactly the keys for which it
 * now scores highest (about 1/N of all), and when one leaves only its own keys move, each to its
 * second choice. The cost, O(members) per key, is negligible for the handful of replicas a ring has.
 */

import { fnv1a64Halves } from '../client/shard-selector.js';

/** 64-bit FNV-1a of the UTF-8 bytes of `text` (the hash KEP-5866's shardSelector uses), as 16 hex digits. */
export function fnv1a64Hex(text: string): string {
  const [hi, lo] = fnv1a64Halves(text);
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** murmur3's 32-bit finalizer: spreads every input bit over the output. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The weight of `member` for `key`, a 53-bit integer. FNV-1a of strings that differ only at the end
 * differ mostly in low bits; the finalizers spread that so the highest weight is a fair draw.
 */
export function rendezvousWeight(member: string, key: string): number {
  const [hi, lo] = fnv1a64Halves(`${member}\u0000${key}`);
  const a = fmix32(lo ^ 0x9e3779b9);
  const b = fmix32(hi ^ a);
  return b * 0x20_0000 + (a >>> 11);
}

/** The member that owns `key` among `members` (undefined when there are none); ties go to the smaller id. */
export function ownerOf(key: string, members: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const member of members) {
    const weight = rendezvousWeight(member, key);
    if (weight > bestWeight || (weight === bestWeight && best !== undefined && member < best)) {
      best = member;
      bestWeight = weight;
    }
  }
  return best;
}
