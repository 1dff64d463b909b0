import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep } from '../core/abort.js';
import { FakeClock } from '../core/fake-clock.js';
import { Workqueue } from './workqueue.js';
import { seededRandom } from '../core/seeded-random.js';

interface RunReport {
  overlaps: string[];
  starts: number;
  requests: number;
  stale: string[];
}

/**
 * Random adds, delayed adds and rate-limited adds over a few hot keys, served by many workers that
 * take a random (fake) time per key. Records every overlap of two workers on one key, and checks
 * liveness: each key's last processing started after its last add request.
 */
async function run(seed: number, workers: number): Promise<RunReport> {
  const random = seededRandom(seed);
  const clock = new FakeClock(0);
  const q = new Workqueue({ clock });
  const keys = Array.from({ length: 12 }, (_, i) => `ns/key-${i}`);
  const running = new Set<string>();
  const lastRequest = new Map<string, number>();
  const lastStart = new Map<string, number>();
  const report: RunReport = { overlaps: [], starts: 0, requests: 0, stale: [] };
  let seq = 0;

  const worker = async (): Promise<void> => {
    for (;;) {
      const next = await q.get();
      if (next.shutdown) return;
      const key = next.key;
      if (running.has(key)) report.overlaps.push(`${key} at ${clock.now()}`);
      running.add(key);
      lastStart.set(key, ++seq);
      report.starts++;
      try {
        await sleep(clock, Math.floor(random() * 20));
      } finally {
        running.delete(key);
        q.forget(key); // a success, so per-key backoff stays short
        q.done(key);
      }
    }
  };
  const pool = Array.from({ length: workers }, worker);

  for (let step = 0; step < 400; step++) {
    const burst = Math.floor(random() * 4);
    for (let i = 0; i < burst; i++) {
      const key = keys[Math.floor(random() * keys.length)]!;
      const op = random();
      lastRequest.set(key, ++seq);
      report.requests++;
      if (op < 0.7) q.add(key);
      else if (op < 0.9) q.addAfter(key, Math.floor(random() * 30));
      else q.addRateLimited(key);
    }
    await clock.advance(Math.floor(random() * 5));
  }
  // Let every delayed and in-flight key finish.
  for (let i = 0; i < 100 && (q.length > 0 || q.processingCount > 0 || q.waitingCount > 0); i++)
    await clock.advance(50);
  for (const [key, requested] of lastRequest) {
    if (!((lastStart.get(key) ?? -1) > requested)) report.stale.push(key);
  }
  const shutdown = q.shutdown({ drainTimeoutMs: 0 });
  await Promise.all(pool);
  assert.deepEqual(await shutdown, { drained: true });
  return report;
}

test('a key in flight is never handed to a second worker (random adds, 16 workers, 20 seeds)', async () => {
  for (let seed = 1; seed <= 20; seed++) {
    const report = await run(seed, 16);
    assert.deepEqual(report.overlaps, [], `seed ${seed}: two workers held one key`);
    assert.deepEqual(report.stale, [], `seed ${seed}: a key was not processed after its last add`);
    assert.ok(report.starts > 50, `seed ${seed}: the run did real work (${report.starts} starts)`);
    assert.ok(
      report.starts <= report.requests,
      `seed ${seed}: adds coalesce (${report.starts} starts for ${report.requests} adds)`,
    );
  }
});
