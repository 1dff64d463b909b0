/**
 * Hash ranges for ring members, for server-side sharding: each member gets a set of ranges of the
 * uid-hash space that it lists and watches with one `shardSelector`. The space is cut into
 * `segments` equal slices; each slice goes to a member by rendezvous hashing with bounded loads:
 * (slice, member) pairs are taken in order of descending weight and a member takes a slice only
 * while it holds fewer than its share (floor(segments / members), or one more for the first
 * `segments mod members` members to ask). So the split is balanced to within one slice, and it is
 * consistent: a join or leave moves about 1/N of the slices plus a few that the load bound
 * reshuffles (measured in range-assignment.test.ts). Pure and deterministic: every replica that
 * knows the same members computes the same ranges.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { fnv1a64, mergeRanges, splitHashSpace, type HashRange } from '../client/shard-selector.js';

/** Slices of the hash space per assignment: balance within 1/64 of the space, and selectors of about 64/N ranges. @defaultValue 64 */
export const DEFAULT_HASH_SEGMENTS = 64;

export interface RangeAssignmentOptions {
  /** @defaultValue DEFAULT_HASH_SEGMENTS */
  readonly segments?: number;
}

/**
 * The ranges (merged, in order) of each member; every hash is in exactly one member's ranges.
 * Member order and duplicates do not matter. No members: an empty map. Throws
 * `InvalidArgumentError` for a segment count that is not an integer in 1–65,536.
 */
export function assignHashRanges(
  members: Iterable<string>,
  options: RangeAssignmentOptions = {},
): Map<string, HashRange[]> {
  const slicesOf = assignHashSlices(members, options);
  const ranges = splitHashSpace(options.segments ?? DEFAULT_HASH_SEGMENTS);
  return new Map([...slicesOf].map(([member, slices]) => [member, mergeRanges(slices.map((i) => ranges[i]!))]));
}

/**
 * The same assignment as slice numbers, ascending: slice `i` is `splitHashSpace(segments)[i]`, i.e.
 * with the default 64 slices the hashes whose top 6 bits are `i`.
 */
export function assignHashSlices(
  members: Iterable<string>,
  options: RangeAssignmentOptions = {},
): Map<string, number[]> {
  const segments = options.segments ?? DEFAULT_HASH_SEGMENTS;
  if (!Number.isSafeInteger(segments) || segments < 1 || segments > 65_536)
    throw new InvalidArgumentError(`segments must be an integer in 1–65,536, got ${segments}`);
  const ids = [...new Set(members)].sort();
  const assignment = new Map<string, number[]>();
  if (ids.length === 0) return assignment;
  // Each member takes `base` slices, and the first `extra` to want one more take base + 1: exact shares.
  const base = Math.floor(segments / ids.length);
  let extra = segments % ids.length;
  const pairs: { weight: bigint; member: number; segment: number }[] = [];
  for (let segment = 0; segment < segments; segment++) {
    for (let member = 0; member < ids.length; member++)
      pairs.push({ weight: mix64(fnv1a64(`${ids[member]!}\u0000${segment}`)), member, segment });
  }
  pairs.sort((a, b) =>
    a.weight > b.weight ? -1 : a.weight < b.weight ? 1 : a.member - b.member || a.segment - b.segment,
  );
  const owner = new Array<number>(segments).fill(-1);
  const load = new Array<number>(ids.length).fill(0);
  let left = segments;
  for (const p of pairs) {
    if (left === 0) break;
    if (owner[p.segment] !== -1) continue;
    if (load[p.member]! >= base) {
      if (load[p.member]! > base || extra === 0) continue;
      extra--;
    }
    owner[p.segment] = p.member;
    load[p.member]!++;
    left--;
  }
  for (const id of ids) assignment.set(id, []);
  for (let segment = 0; segment < segments; segment++) assignment.get(ids[owner[segment]!]!)!.push(segment);
  return assignment;
}

const MASK64 = (1n << 64n) - 1n;

/**
 * murmur3's 64-bit finalizer. FNV-1a of strings that differ only in their last characters differ
 * mostly in low bits; ranking by the raw hash would favour members by name, not by draw.
 */
function mix64(h: bigint): bigint {
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & MASK64;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & MASK64;
  h ^= h >> 33n;
  return h;
}
