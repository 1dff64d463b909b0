import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sleep, whenAborted } from '../core/abort.js';
import { FakeClock } from '../core/fake-clock.js';
import { LeadershipLostError } from '../leader-election/leadership-lost-error.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { RunnableGroup } from './runnable-group.js';
import { runTerm, termRunnable, type TermOptions } from './term.js';

/** Stopping the term's work takes this long on the fake clock, so "settled after the work" can be seen. */
const WORK_STOP_MS = 500;

interface Bed {
  readonly clock: FakeClock;
  readonly stopping: AbortController;
  readonly events: string[];
  readonly failures: unknown[];
  readonly workReasons: unknown[];
  readonly logger: ReturnType<typeof recordingLogger>;
  readonly options: TermOptions;
}

function bed(): Bed {
  const clock = new FakeClock(0);
  const stopping = new AbortController();
  const events: string[] = [];
  const failures: unknown[] = [];
  const workReasons: unknown[] = [];
  const logger = recordingLogger();
  const controller = {
    name: 'controller/db',
    runnable: {
      async start(signal: AbortSignal) {
        await whenAborted(signal);
        workReasons.push(signal.reason);
        await sleep(clock, WORK_STOP_MS);
        events.push('work stopped');
      },
    },
  };
  const options: TermOptions = {
    work: () => new RunnableGroup('leader-only', { onFailure: (err) => failures.push(err) }).add(controller),
    stopping: stopping.signal,
    fail: (reason) => failures.push(reason),
    logger,
    startMessage: 'starting leader-only runnables',
    lostMessage: 'leadership lost: stopping leader-only runnables',
  };
  return { clock, stopping, events, failures, workReasons, logger, options };
}

const lost = new LeadershipLostError('ns/lease', 'renew-deadline-exceeded');

const cases: readonly {
  readonly name: string;
  /** Ends the term the way the case says. */
  readonly end: (term: AbortController, stopping: AbortController) => void;
  readonly failures: readonly unknown[];
  readonly lostLogged: boolean;
}[] = [
  {
    name: 'a term lost while the manager runs fails it with the reason, which the work sees (fencing)',
    end: (term) => term.abort(lost),
    failures: [lost],
    lostLogged: true,
  },
  {
    name: 'the manager stopping ends the term without a failure',
    end: (_term, stopping) => stopping.abort(),
    failures: [],
    lostLogged: false,
  },
  {
    name: 'a term lost after the manager began stopping is no failure',
    end: (term, stopping) => {
      stopping.abort();
      term.abort(lost);
    },
    failures: [],
    lostLogged: false,
  },
];

for (const c of cases) {
  test(`runTerm: ${c.name}; the term settles only after its work stopped`, async () => {
    const b = bed();
    const term = new AbortController();
    const running = runTerm(term.signal, b.options).then(() => b.events.push('term settled'));
    await Promise.resolve();
    c.end(term, b.stopping);
    await b.clock.advance(WORK_STOP_MS);
    await running;
    assert.deepEqual(b.events, ['work stopped', 'term settled']);
    assert.deepEqual(b.failures, c.failures);
    if (c.failures.length > 0)
      assert.deepEqual(b.workReasons, c.failures, 'the reason reaches the runnables as it was');
    const lostLines = b.logger.entries.filter((e) => e.level === 'error' && e.msg === b.options.lostMessage);
    assert.equal(lostLines.length, c.lostLogged ? 1 : 0);
    assert.ok(b.logger.entries.some((e) => e.msg === b.options.startMessage && e.obj.runnables === 1));
  });
}

test("termRunnable: stopping it stops the term's work first, and only then the holder (which releases its Lease)", async () => {
  const b = bed();
  const group = new AbortController();
  const runnable = termRunnable(async (signal, onStarted) => {
    const work = onStarted(new AbortController().signal);
    await whenAborted(signal);
    b.events.push('holder stopped');
    await work;
  }, b.options);
  const running = runnable.start(group.signal);
  await Promise.resolve();
  b.stopping.abort();
  group.abort();
  await b.clock.advance(WORK_STOP_MS);
  await running;
  assert.deepEqual(b.events, ['work stopped', 'holder stopped']);
  assert.deepEqual(b.failures, []);
});

test('termRunnable: a holder that rejects fails the manager with its error', async () => {
  const b = bed();
  const broken = new Error('lease client broken');
  const running = termRunnable(async () => {
    throw broken;
  }, b.options).start(b.stopping.signal);
  await running;
  assert.deepEqual(b.failures, [broken]);
});
