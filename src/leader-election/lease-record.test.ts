import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  acquiredLease,
  formatMicroTime,
  leaseDurationSeconds,
  newLease,
  releasedLease,
  renewedLease,
} from './lease-record.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 67);

test('MicroTime is RFC 3339 in UTC with exactly six fractional digits', () => {
  assert.equal(formatMicroTime(T0), '2026-01-02T03:04:05.067000Z');
  assert.match(formatMicroTime(Date.now()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
});

test('leaseDurationSeconds rounds up so nobody is told to wait less than the holder needs', () => {
  assert.equal(leaseDurationSeconds(15_000), 15);
  assert.equal(leaseDurationSeconds(3_500), 4);
  assert.equal(leaseDurationSeconds(200), 1);
});

test('a new Lease names the holder with 0 transitions and equal acquire and renew times', () => {
  const l = newLease({ name: 'lock', namespace: 'ops', identity: 'a', leaseDurationMs: 15_000, nowMs: T0 });
  assert.deepEqual(l, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'lock', namespace: 'ops' },
    spec: {
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-02T03:04:05.067000Z',
      renewTime: '2026-01-02T03:04:05.067000Z',
      leaseTransitions: 0,
    },
  });
});

test('taking over from another holder counts a transition and keeps the resourceVersion and metadata read', () => {
  const read = {
    metadata: { name: 'lock', namespace: 'ops', resourceVersion: '42', labels: { x: 'y' } },
    spec: { holderIdentity: 'b', leaseTransitions: 3, leaseDurationSeconds: 15 },
  };
  const l = acquiredLease(read, 'a', 15_000, T0);
  assert.equal(l.metadata?.resourceVersion, '42');
  assert.deepEqual(l.metadata?.labels, { x: 'y' });
  assert.equal(l.spec?.holderIdentity, 'a');
  assert.equal(l.spec?.leaseTransitions, 4);
  assert.equal(
    acquiredLease({ ...read, spec: { ...read.spec, holderIdentity: 'a' } }, 'a', 15_000, T0).spec?.leaseTransitions,
    3,
    'same holder: no transition',
  );
});

test('a renew changes only renewTime; a release empties the holder with a one-second duration', () => {
  const held = acquiredLease(
    { metadata: { name: 'lock', namespace: 'ops', resourceVersion: '7' }, spec: {} },
    'a',
    15_000,
    T0,
  );
  const renewed = renewedLease(held, 'a', 15_000, T0 + 2_000);
  assert.equal(renewed.spec?.acquireTime, held.spec?.acquireTime);
  assert.equal(renewed.spec?.renewTime, '2026-01-02T03:04:07.067000Z');
  assert.equal(renewed.metadata?.resourceVersion, '7');
  const released = releasedLease(renewed, T0 + 3_000);
  assert.equal(released.spec?.holderIdentity, '');
  assert.equal(released.spec?.leaseDurationSeconds, 1);
  assert.equal(released.spec?.leaseTransitions, held.spec?.leaseTransitions);
  assert.equal(released.metadata?.resourceVersion, '7');
});
