import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { InvalidOptionError } from '../core/errors.js';
import { FakeClock } from '../core/fake-clock.js';
import { LeaderElector } from './leader-elector.js';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  type LeaderElectorOptions,
} from './leader-elector-options.js';
import { FakeLeaseApi } from './testing/fake-lease-api.js';

const base = (): LeaderElectorOptions => ({
  client: new FakeLeaseApi({ clock: new FakeClock() }).client(),
  name: 'lock',
  namespace: 'ops',
});

test("defaults are client-go's 15 s lease, 10 s renew deadline and 2 s retry period", () => {
  assert.equal(DEFAULT_LEASE_DURATION_MS, 15_000);
  assert.equal(DEFAULT_RENEW_DEADLINE_MS, 10_000);
  assert.equal(DEFAULT_RETRY_PERIOD_MS, 2_000);
  const e = new LeaderElector(base());
  assert.deepEqual(e.timings, {
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    workStopTimeoutMs: 5_000,
  });
});

test('the default identity is hostname_<random>, different for two electors on one host', () => {
  const a = new LeaderElector(base());
  const b = new LeaderElector(base());
  assert.ok(a.identity.startsWith(`${hostname()}_`), a.identity);
  assert.match(a.identity.slice(hostname().length + 1), /^[0-9a-f-]{36}$/);
  assert.notEqual(a.identity, b.identity);
  assert.equal(new LeaderElector({ ...base(), identity: 'pod-0' }).identity, 'pod-0');
});

const rejected: [string, Partial<LeaderElectorOptions>, string, RegExp][] = [
  [
    'renewDeadline equal to leaseDuration',
    { leaseDurationMs: 10_000, renewDeadlineMs: 10_000 },
    'renewDeadlineMs',
    /less than leaseDurationMs \(10000\)/,
  ],
  ['renewDeadline above leaseDuration', { leaseDurationMs: 5_000 }, 'renewDeadlineMs', /less than leaseDurationMs/],
  [
    'renewDeadline not above 1.2 × retryPeriod',
    { renewDeadlineMs: 2_400, retryPeriodMs: 2_000 },
    'retryPeriodMs',
    /1\.2 × retryPeriodMs \(2000\) must be less than renewDeadlineMs \(2400\)/,
  ],
  ['a zero leaseDuration', { leaseDurationMs: 0 }, 'leaseDurationMs', /> 0/],
  ['a negative renewDeadline', { renewDeadlineMs: -1 }, 'renewDeadlineMs', /> 0/],
  ['a zero retryPeriod', { retryPeriodMs: 0 }, 'retryPeriodMs', /> 0/],
  ['a NaN retryPeriod', { retryPeriodMs: Number.NaN }, 'retryPeriodMs', /> 0/],
  ['an infinite leaseDuration', { leaseDurationMs: Number.POSITIVE_INFINITY }, 'leaseDurationMs', /finite/],
  ['a negative workStopTimeout', { workStopTimeoutMs: -5 }, 'workStopTimeoutMs', />= 0/],
  ['an empty name', { name: '' }, 'name', /non-empty/],
  ['an empty namespace', { namespace: '' }, 'namespace', /non-empty/],
  ['an empty identity', { identity: '' }, 'identity', /non-empty/],
];

for (const [what, options, option, message] of rejected) {
  test(`construction rejects ${what}, naming ${option}`, () => {
    assert.throws(
      () => new LeaderElector({ ...base(), ...options }),
      (e: unknown) =>
        e instanceof InvalidOptionError && e.option === option && e.message.includes(option) && message.test(e.message),
    );
  });
}

test('construction accepts the shortest valid chain lease > renew > 1.2 × retry', () => {
  const e = new LeaderElector({ ...base(), leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 });
  assert.deepEqual(e.timings, {
    leaseDurationMs: 3_000,
    renewDeadlineMs: 2_000,
    retryPeriodMs: 500,
    workStopTimeoutMs: 1_000,
  });
});

test('construction starts nothing: no timer, no request', () => {
  const clock = new FakeClock();
  const api = new FakeLeaseApi({ clock });
  new LeaderElector({ client: api.client('a'), name: 'lock', namespace: 'ops', clock });
  assert.equal(clock.pendingTimers, 0);
  assert.equal(api.requests.size, 0);
});
