import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LeadershipLostError } from '../leader-election/leadership-lost-error.js';
import { MemberTermBridge } from './member-term-bridge.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('work waits for the member term, runs under its signal, and ends cleanly when the caller stops', async () => {
  const bridge = new MemberTermBridge();
  const stop = new AbortController();
  const seen: AbortSignal[] = [];
  const running = bridge.run(stop.signal, (s) => void seen.push(s));
  await tick();
  assert.equal(seen.length, 0, 'no term yet: no work');
  const term = new AbortController();
  const termRunning = bridge.runnable.start(term.signal);
  await tick();
  assert.ok(seen[0] && !seen[0].aborted);
  stop.abort();
  await running;
  assert.ok(seen[0].aborted);
  term.abort();
  await termRunning;
});

test('membership lost: the work is aborted and run rejects with the fencing reason, which stops the manager', async () => {
  const bridge = new MemberTermBridge();
  const term = new AbortController();
  const termRunning = bridge.runnable.start(term.signal);
  let workSignal: AbortSignal | undefined;
  const running = bridge.run(new AbortController().signal, (s) => void (workSignal = s));
  await tick();
  term.abort(new LeadershipLostError('ring-member', 'renew-deadline-exceeded'));
  await assert.rejects(running, { code: 'ERR_LEADERSHIP_LOST' });
  assert.ok(workSignal?.aborted);
  await termRunning;
});

test('a caller that stops before any term starts resolves without running the work', async () => {
  const bridge = new MemberTermBridge();
  const stop = new AbortController();
  let ran = false;
  const running = bridge.run(stop.signal, () => void (ran = true));
  stop.abort();
  await running;
  assert.equal(ran, false);
});
