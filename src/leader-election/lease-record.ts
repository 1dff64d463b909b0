/**
 * The `coordination.k8s.io/v1` Lease as the elector reads and writes it, and the pure functions that
 * build each write from the object that was read (so every write carries the resourceVersion it read).
 */
import type { Lease, LeaseSpec } from 'kubernetes-types/coordination/v1.js';

export type { Lease, LeaseSpec };

/** How the client addresses Leases. */
export const LEASE_TYPE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' } as const;

/**
 * metav1.MicroTime: RFC 3339 with exactly six fractional digits, in UTC. `Date.toISOString()` gives
 * three, which the API server would reject for a MicroTime field.
 */
export function formatMicroTime(epochMs: number): string {
  const iso = new Date(Math.floor(epochMs)).toISOString(); // 2026-01-01T00:00:00.123Z
  return `${iso.slice(0, -1)}000Z`;
}

/** The holder the record names, '' when nobody holds it (never acquired, or released). */
export function holderOf(lease: Lease | undefined): string {
  return lease?.spec?.holderIdentity ?? '';
}

export function resourceVersionOf(lease: Lease): string {
  return lease.metadata?.resourceVersion ?? '';
}

/** Whole seconds for `leaseDurationSeconds`, rounded up so nobody is told to wait less than we need. */
export function leaseDurationSeconds(leaseDurationMs: number): number {
  return Math.max(1, Math.ceil(leaseDurationMs / 1000));
}

/** A new Lease naming `identity` as holder (the create when the Lease does not exist yet). */
export function newLease(at: {
  name: string;
  namespace: string;
  identity: string;
  leaseDurationMs: number;
  nowMs: number;
}): Lease {
  const now = formatMicroTime(at.nowMs);
  return {
    ...LEASE_TYPE,
    metadata: { name: at.name, namespace: at.namespace },
    spec: {
      holderIdentity: at.identity,
      leaseDurationSeconds: leaseDurationSeconds(at.leaseDurationMs),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    },
  };
}

/**
 * `current` taken over by `identity`: a new term (acquireTime now), one more transition when the
 * holder changes. Everything else of `current`, its resourceVersion included, is kept.
 */
export function acquiredLease(current: Lease, identity: string, leaseDurationMs: number, nowMs: number): Lease {
  const now = formatMicroTime(nowMs);
  const previous = holderOf(current);
  const transitions = current.spec?.leaseTransitions ?? 0;
  return withSpec(current, {
    holderIdentity: identity,
    leaseDurationSeconds: leaseDurationSeconds(leaseDurationMs),
    acquireTime: now,
    renewTime: now,
    leaseTransitions: previous === identity ? transitions : transitions + 1,
  });
}

/** `current` with a fresh renewTime (the holder's periodic write). */
export function renewedLease(current: Lease, identity: string, leaseDurationMs: number, nowMs: number): Lease {
  return withSpec(current, {
    holderIdentity: identity,
    leaseDurationSeconds: leaseDurationSeconds(leaseDurationMs),
    renewTime: formatMicroTime(nowMs),
  });
}

/**
 * `current` given up: no holder and a one-second duration, as client-go's release writes it, so
 * candidates that only look at the duration also take over quickly.
 */
export function releasedLease(current: Lease, nowMs: number): Lease {
  const now = formatMicroTime(nowMs);
  return withSpec(current, { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now });
}

function withSpec(current: Lease, spec: LeaseSpec): Lease {
  return { ...current, ...LEASE_TYPE, spec: { ...current.spec, ...spec } };
}
