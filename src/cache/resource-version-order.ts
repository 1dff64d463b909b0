/**
 * Ordering of resourceVersions, for read-your-own-writes (own-writes.ts) only. Kubernetes calls
 * resourceVersions opaque, but every etcd-backed API server (and kine) hands out etcd's revision:
 * a decimal integer, without leading zeros, that grows with every write to the cluster, so two of
 * them from one server compare as numbers (KEP-5504 "comparable resource version" made this the
 * documented contract; `k8s.io/apimachinery`'s `resourceversion.CompareResourceVersion` parses the
 * same form). Anything else — an aggregated server's own scheme, a fake's — is not ordered here:
 * callers then fall back to equality, which is never wrong, only slower to conclude.
 */

/** A resourceVersion in etcd's form: 1 to 20 decimal digits, no leading zero (uint64 fits in 20). */
const COMPARABLE = /^[1-9][0-9]{0,19}$/;

/** True when `rv` has etcd's form and may be ordered by {@link compareResourceVersions}. */
export function isComparableResourceVersion(rv: string | undefined): rv is string {
  return rv !== undefined && COMPARABLE.test(rv);
}

/**
 * Negative, zero or positive as `a` is older than, the same as or newer than `b`; `undefined`
 * when either is not in etcd's form (unordered: compare for equality only).
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (!isComparableResourceVersion(a) || !isComparableResourceVersion(b)) return undefined;
  // Without leading zeros a longer number is a larger one; equal lengths compare digit by digit.
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** True when `rv` is known to be at least `target` (same string, or ordered and not older). */
export function atLeast(rv: string | undefined, target: string): boolean {
  if (rv === target) return true;
  const c = compareResourceVersions(rv, target);
  return c !== undefined && c >= 0;
}
