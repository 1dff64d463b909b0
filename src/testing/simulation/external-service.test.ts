/**
 * The external service as a library piece (external-service.ts): slow (latency, work that takes
 * time), failing (503 before the effect), lying (an answer lost after the effect, reads from a
 * replica behind), deterministic under the run's seed and the fake clock, honest in the fault-free
 * run, its writes crash points of the sweep, bad options and unknown names refused by name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../../core/errors.js';
import { Manager } from '../../manager/manager.js';
import { sweepCrashPoints } from './crash-sweep.js';
import { ExternalServiceError, type ExternalRecord } from './external-service.js';
import { replaySeed, runSimulation, type SimulationOptions } from './simulate.js';
import { bucketScenario, bucketSimulation, STORAGE_SERVICE } from './test-support/bucket-operator.js';

const options = bucketSimulation();
const fixed: SimulationOptions = { ...options, scenario: bucketScenario(3) };

test('a seed replays exactly, the service included: the same calls, misbehaviour and records', async () => {
  const a = await replaySeed(options, 7);
  const b = await replaySeed(options, 7);
  assert.deepEqual(a.record.trace, b.record.trace);
  // Uids are the store's (random); the rest of each record replays.
  const masked = (run: typeof a) =>
    JSON.stringify(run.record.services).replace(/"owner-uid":"[^"]+"/g, '"owner-uid":"<uid>"');
  assert.equal(masked(a), masked(b));
  assert.ok(
    a.record.calls.some((c) => c.kind === `service:${STORAGE_SERVICE}`),
    'service calls are numbered calls',
  );
});

test('the fault-free run sees a slow but honest service; seeded runs see it fail and lie', async () => {
  const faultFree = await runSimulation(fixed, { seed: 0, faults: [] });
  assert.deepEqual(faultFree.findings, []);
  assert.ok(!faultFree.record.trace.some((l) => / fault service /.test(l)), 'no misbehaviour without a seed');
  const calls = faultFree.record.calls.filter((c) => c.kind === `service:${STORAGE_SERVICE}`);
  assert.ok(calls.length > 0);
  const created = faultFree.record.services![STORAGE_SERVICE]!.created;
  assert.ok(created.length > 0 && created.every((r: ExternalRecord) => r.state === 'pending'), 'work takes time');
  const trace: string[] = [];
  const lost = (l: string) => / loses the answer to .* \(applied\)/.test(l);
  for (let seed = 1; seed <= 30 && !trace.some(lost); seed++)
    trace.push(...(await replaySeed(options, seed)).record.trace);
  assert.ok(trace.some(lost), 'an answer lost within 30 seeds');
  assert.ok(trace.some((l) => / fails .* \(503, not applied\)/.test(l)));
  assert.ok(trace.some((l) => / from a replica 2000 ms behind/.test(l)));
});

test("the sweep crashes the operator after each of the service's writes too", async () => {
  const sweep = await sweepCrashPoints(fixed, { kinds: ['crash'] });
  assert.deepEqual(sweep.failures, [], sweep.format());
  assert.ok(sweep.coverage.sites.has(`create service:${STORAGE_SERVICE}`), sweep.format());
});

test('an undeclared service is refused by name; a bad rate names the option', async () => {
  let message = '';
  await runSimulation(
    {
      ...fixed,
      setup: (setup) => {
        try {
          setup.service('payments');
        } catch (err) {
          message ||= String(err);
        }
        const { client, clock, logger, registry } = setup;
        return new Manager({ client, clock, logger, registry, metricsPort: 0, healthPort: 0 });
      },
    },
    { seed: 0, faults: [] },
  );
  assert.match(
    message,
    /external service "payments", which the simulation's services do not declare \(declared: storage\)/,
  );
  await assert.rejects(
    runSimulation({ ...fixed, services: { storage: { failureRate: 1.5 } } }, { seed: 0, faults: [] }),
    (err: unknown) => err instanceof InvalidOptionError && /services\.storage\.failureRate/.test(String(err)),
  );
  assert.equal(
    new ExternalServiceError('storage', 503, 'service unavailable').message,
    'storage: 503 service unavailable',
  );
});
