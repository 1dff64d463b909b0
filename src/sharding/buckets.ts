/**
 * Buckets of the server-side mode: the 64-bit hash space of `metadata.uid` (FNV-1a, as the API
 * server's `shardSelector` hashes it) cut into {@link HASH_BUCKETS} equal contiguous ranges, dealt
 * to the live members by `assignHashSlices` (rendezvous hashing with bounded loads: shares exact to
 * one bucket, about 1/N of the buckets move on a join or leave). A replica's informer selects the
 * ranges of its buckets, so the server sends it only its share; 64 buckets keep its selector to at
 * most 64 ranges (fewer once adjacent ones merge).
 */
import {
  formatShardSelector,
  mergeRanges,
  shardHash,
  splitHashSpace,
  type HashRange,
} from '../client/shard-selector.js';
import { assignHashSlices } from './range-assignment.js';

/** @defaultValue 64 (a power of two: bucket = the hash's top 6 bits) */
export const HASH_BUCKETS = 64;
const BUCKET_SHIFT = 58n; // 2^64 / 64 = 2^58
const BUCKET_RANGES: readonly HashRange[] = splitHashSpace(HASH_BUCKETS);

/** The bucket of an object: the top bits of the FNV-1a hash of its uid. */
export function bucketOf(obj: { readonly metadata?: { readonly uid?: string } }): number {
  return Number(shardHash(obj, 'uid') >> BUCKET_SHIFT);
}

/** The last assignment computed, by live set: the sharder asks once per object, the answer changes once per membership change. */
let memo: { readonly key: string; readonly owners: readonly (string | undefined)[] } | undefined;

/** Each bucket's owner among `live` (index = bucket). */
function owners(live: readonly string[]): readonly (string | undefined)[] {
  const key = [...live].sort().join(',');
  if (memo?.key === key) return memo.owners;
  const out = new Array<string | undefined>(HASH_BUCKETS).fill(undefined);
  for (const [member, buckets] of assignHashSlices(live, { segments: HASH_BUCKETS }))
    for (const b of buckets) out[b] = member;
  memo = { key, owners: out };
  return out;
}

/** The live member that owns a bucket. */
export function bucketOwner(bucket: number, live: readonly string[]): string | undefined {
  return owners(live)[bucket];
}

/** The buckets `member` owns among `live`. */
export function bucketsOf(member: string, live: readonly string[]): number[] {
  return owners(live).flatMap((owner, bucket) => (owner === member ? [bucket] : []));
}

/** The `shardSelector` selecting `buckets` (adjacent ones merged); undefined for none. */
export function bucketSelector(buckets: Iterable<number>): string | undefined {
  const ranges = mergeRanges([...new Set(buckets)].map((b) => BUCKET_RANGES[b]!));
  return ranges.length > 0 ? formatShardSelector(ranges, 'uid') : undefined;
}
