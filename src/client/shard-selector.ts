/**
 * The wire format of the list and watch option `shardSelector` (client-options.ts), beside
 * `labelSelector` and `fieldSelector`: hash ranges for sharding by object: the 64-bit FNV-1a hash of an object's `metadata.uid` (or
 * `metadata.namespace`), ranges `[start, end)` over the hash space `[0, 2^64)`, and the
 * `shardSelector` text of Kubernetes' sharded list and watch (KEP-5866, feature gate
 * `ShardedListAndWatch`, alpha in 1.36), which filters by exactly this hash on the server.
 *
 * Everything here matches the 1.36 server's own code (k8s.io/apimachinery/pkg/sharding and
 * k8s.io/apiserver/pkg/sharding): the hash is FNV-1a 64 over the field's UTF-8 bytes; bounds are
 * `'0x'` + 16 lowercase hex digits, or `'0x10000000000000000'` (2^64) as an end; a range needs
 * start < end; ranges are joined with `||` and must all hash the same field. So the client-side
 * test (`objectInRange`) and the server agree object for object. It lives in the client, not in
 * sharding, because the cache and the fake client evaluate selectors too; sharding's ring and
 * assignment build on it.
 */
import { InvalidArgumentError } from '../core/errors.js';

/** The object field a shard hash is taken of. */
export type ShardKeyField = 'uid' | 'namespace';

/** The hash space's exclusive upper end, 2^64. */
export const HASH_SPACE_END = 1n << 64n;

/** A half-open range `[start, end)` of the 64-bit hash space; `0 <= start < end <= 2^64`. */
export interface HashRange {
  readonly start: bigint;
  readonly end: bigint;
}

/** A parsed shard selector: the field hashed and the ranges (an object matches if it is in any). */
export interface ShardSelector {
  readonly field: ShardKeyField;
  readonly ranges: readonly HashRange[];
}

/** The whole hash space: every object is in it. */
export const FULL_HASH_RANGE: HashRange = { start: 0n, end: HASH_SPACE_END };

const FIELD_PATHS: Readonly<Record<ShardKeyField, string>> = {
  uid: 'object.metadata.uid',
  namespace: 'object.metadata.namespace',
};

const encoder = new TextEncoder();

/**
 * FNV-1a 64 of `value`'s UTF-8 bytes (Go's `hash/fnv.New64a`, which the API server uses), as two
 * unsigned 32-bit halves: no BigInt arithmetic, since it runs on every watch event of a
 * client-filtered informer and on every key the ring assigns.
 */
export function fnv1a64Halves(value: string): [hi: number, lo: number] {
  // Offset basis 0xcbf29ce484222325; prime 0x100000001b3 = 2^40 + 0x1b3, so h * prime mod 2^64 is
  // (h << 40) + h * 0x1b3, each term kept within 2^53 on the halves.
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (const byte of encoder.encode(value)) {
    lo = (lo ^ byte) >>> 0;
    const low = lo * 0x1b3;
    const carry = Math.floor(low / 0x100000000);
    hi = (hi * 0x1b3 + carry + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return [hi, lo];
}

/** FNV-1a 64 of `value`'s UTF-8 bytes as one unsigned 64-bit integer. */
export function fnv1a64(value: string): bigint {
  const [hi, lo] = fnv1a64Halves(value);
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** The hash of `field` of `obj` (an absent field hashes as the empty string, as the server does). */
export function shardHash(
  obj: { readonly metadata?: { readonly uid?: string; readonly namespace?: string } },
  field: ShardKeyField = 'uid',
): bigint {
  return fnv1a64((field === 'uid' ? obj.metadata?.uid : obj.metadata?.namespace) ?? '');
}

/** A checked range `[start, end)`. Throws `InvalidArgumentError` unless `0 <= start < end <= 2^64`. */
export function hashRange(start: bigint, end: bigint): HashRange {
  if (start < 0n || end > HASH_SPACE_END || start >= end) {
    throw new InvalidArgumentError(
      `hash range [${formatHashBound(start)}, ${formatHashBound(end)}) must have 0 <= start < end <= 2^64`,
    );
  }
  return { start, end };
}

/** True when `hash` lies in `[range.start, range.end)`. */
export function hashInRange(hash: bigint, range: HashRange): boolean {
  return hash >= range.start && hash < range.end;
}

/**
 * True when the object's hash lies in `ranges` (one range or any of several): the client-side twin
 * of a server's `shardSelector`, for servers that ignore it and for checking the ones that do not.
 */
export function objectInRange(
  obj: { readonly metadata?: { readonly uid?: string; readonly namespace?: string } },
  ranges: HashRange | readonly HashRange[],
  field: ShardKeyField = 'uid',
): boolean {
  const hash = shardHash(obj, field);
  return asList(ranges).some((r) => hashInRange(hash, r));
}

/** True when the object is selected by the parsed selector. */
export function selectorMatches(
  selector: ShardSelector,
  obj: { readonly metadata?: { readonly uid?: string; readonly namespace?: string } },
): boolean {
  return objectInRange(obj, selector.ranges, selector.field);
}

/**
 * `count` contiguous ranges of (almost) equal size covering the whole hash space in order: range
 * `i` is `[floor(i * 2^64 / count), floor((i + 1) * 2^64 / count))`. Throws `InvalidArgumentError`
 * for a count that is not a positive safe integer.
 */
export function splitHashSpace(count: number): HashRange[] {
  if (!Number.isSafeInteger(count) || count < 1)
    throw new InvalidArgumentError(
      `cannot split the hash space into ${count} ranges: the count must be a positive integer`,
    );
  const n = BigInt(count);
  const ranges: HashRange[] = [];
  for (let i = 0n; i < n; i++) ranges.push({ start: (i * HASH_SPACE_END) / n, end: ((i + 1n) * HASH_SPACE_END) / n });
  return ranges;
}

/** Sorted by start, with overlapping and touching ranges merged: the fewest ranges covering the same hashes. */
export function mergeRanges(ranges: readonly HashRange[]): HashRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: HashRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) {
      if (r.end > last.end) out[out.length - 1] = { start: last.start, end: r.end };
    } else out.push(r);
  }
  return out;
}

/** The hashes in `ranges` as a fraction of the whole space (0–1), e.g. to check a split's balance. */
export function rangeFraction(ranges: HashRange | readonly HashRange[]): number {
  let size = 0n;
  for (const r of mergeRanges(asList(ranges))) size += r.end - r.start;
  return Number(size) / Number(HASH_SPACE_END);
}

/** A bound as the server writes it: `0x` + 16 lowercase hex digits, or `0x10000000000000000` for 2^64. */
export function formatHashBound(bound: bigint): string {
  return `0x${bound.toString(16).padStart(16, '0')}`;
}

/**
 * The `shardSelector` value selecting `ranges` of `field`'s hash, e.g.
 * `shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')`; several ranges are
 * merged first and joined with ` || `. Throws `InvalidArgumentError` for no ranges or an invalid one.
 */
export function formatShardSelector(ranges: HashRange | readonly HashRange[], field: ShardKeyField = 'uid'): string {
  const list = asList(ranges);
  if (list.length === 0) throw new InvalidArgumentError('a shard selector needs at least one hash range');
  for (const r of list) hashRange(r.start, r.end);
  return mergeRanges(list)
    .map((r) => `shardRange(${FIELD_PATHS[field]}, '${formatHashBound(r.start)}', '${formatHashBound(r.end)}')`)
    .join(' || ');
}

/** A `shardSelector` value the server would refuse; the message says what is wrong. */
export class InvalidShardSelectorError extends InvalidArgumentError {
  readonly selector: string;
  /** What is wrong, without the selector. */
  readonly reason: string;

  constructor(selector: string, reason: string) {
    super(`invalid shard selector ${JSON.stringify(selector)}: ${reason}`);
    this.selector = selector;
    this.reason = reason;
  }
}

const RANGE_CALL = /^shardRange\(\s*([A-Za-z_][\w.]*)\s*,\s*'([^']*)'\s*,\s*'([^']*)'\s*\)$/;

/**
 * Parses a `shardSelector` value with the server's rules: one or more
 * `shardRange(object.metadata.uid | object.metadata.namespace, 'start', 'end')` joined by `||`,
 * all on the same field; bounds `0x` + 16 lowercase hex digits (an end may be
 * `0x10000000000000000`); start < end. Throws `InvalidShardSelectorError` otherwise. (The server
 * parses the text as CEL; this accepts the subset it allows, without parentheses around terms.)
 */
export function parseShardSelector(selector: string): ShardSelector {
  const text = selector.trim();
  if (text === '')
    throw new InvalidShardSelectorError(selector, 'it is empty; omit the parameter for an unfiltered list');
  let field: ShardKeyField | undefined;
  const ranges: HashRange[] = [];
  for (const term of text.split('||').map((t) => t.trim())) {
    const m = RANGE_CALL.exec(term);
    if (!m)
      throw new InvalidShardSelectorError(selector, `${JSON.stringify(term)} is not shardRange(field, 'start', 'end')`);
    const path = m[1]!;
    const termField = (Object.keys(FIELD_PATHS) as ShardKeyField[]).find((f) => FIELD_PATHS[f] === path);
    if (!termField)
      throw new InvalidShardSelectorError(
        selector,
        `unsupported field path ${JSON.stringify(path)}; supported: object.metadata.uid, object.metadata.namespace`,
      );
    if (field !== undefined && field !== termField)
      throw new InvalidShardSelectorError(selector, 'all shard ranges must use the same field');
    field = termField;
    const start = parseBound(selector, m[2]!, 'start');
    const end = parseBound(selector, m[3]!, 'end');
    if (start >= end)
      throw new InvalidShardSelectorError(selector, `shard range start ${m[2]!} must be less than end ${m[3]!}`);
    ranges.push({ start, end });
  }
  return { field: field!, ranges };
}

function parseBound(selector: string, text: string, which: 'start' | 'end'): bigint {
  if (text === '0x10000000000000000') return HASH_SPACE_END;
  if (!/^0x[0-9a-f]{16}$/.test(text)) {
    throw new InvalidShardSelectorError(
      selector,
      `${which} ${JSON.stringify(text)} must be '0x' and 16 lowercase hex digits (or '0x10000000000000000' for 2^64)`,
    );
  }
  return BigInt(text);
}

function asList(ranges: HashRange | readonly HashRange[]): readonly HashRange[] {
  return isRangeList(ranges) ? ranges : [ranges];
}

function isRangeList(ranges: HashRange | readonly HashRange[]): ranges is readonly HashRange[] {
  return Array.isArray(ranges);
}
