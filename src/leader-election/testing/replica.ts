/**
 * A replica of a test operator, for the integration tests and the failover bench: one LeaderElector
 * in its own process. While leading it does "leader-only work": appends a `work` record to a shared
 * log every --work-interval-ms, bracketed by `start` and `stop` records (`stop` is written the moment
 * the leader signal aborts). The log is one JSON object per line, appended with O_APPEND, so records
 * of all replicas interleave whole.
 *
 *   node --import tsx src/leader-election/testing/replica.ts --kubeconfig F --namespace N --name L \
 *     --identity I --log F [--lease-ms 15000 --renew-ms 10000 --retry-ms 2000] [--reenter]
 *
 * Exit status: 0 after SIGTERM/SIGINT (the Lease released), 3 when leadership was lost, 2 for bad
 * options, 1 for anything else.
 */
import { appendFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sleep } from '../../core/abort.js';
import { realClock } from '../../core/clock.js';
import { InvalidOptionError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { KubeClient } from '../../client/kube-client.js';
import { LeaderElector } from '../leader-elector.js';
import { LeadershipLostError } from '../leadership-lost-error.js';
import { EXIT_BAD_OPTIONS, EXIT_LEADERSHIP_LOST } from './replica-group.js';

const { values: args } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    namespace: { type: 'string', default: 'default' },
    name: { type: 'string' },
    identity: { type: 'string' },
    log: { type: 'string' },
    'lease-ms': { type: 'string' },
    'renew-ms': { type: 'string' },
    'retry-ms': { type: 'string' },
    'work-interval-ms': { type: 'string', default: '100' },
    reenter: { type: 'boolean', default: false },
  },
});

const identity = args.identity ?? `replica-${process.pid}`;
const logFile = args.log;
const record = (ev: string, extra: Record<string, unknown> = {}): void => {
  if (logFile)
    appendFileSync(logFile, `${JSON.stringify({ t: Date.now(), id: identity, pid: process.pid, ev, ...extra })}\n`);
};
const ms = (v: string | undefined): number | undefined => (v === undefined ? undefined : Number(v));

/** The elector's structured log as JSON lines on stderr (the harness keeps one file per replica). */
function stderrLogger(bindings: Record<string, unknown>): Logger {
  const write =
    (level: string) =>
    (obj: Record<string, unknown>, msg?: string): void => {
      const err = obj.err instanceof Error ? { err: `${obj.err.name}: ${obj.err.message}` } : {};
      process.stderr.write(
        `${JSON.stringify({ t: new Date().toISOString(), level, ...bindings, ...obj, ...err, msg })}\n`,
      );
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (b) => stderrLogger({ ...bindings, ...b }),
  };
}

async function main(): Promise<number> {
  if (!args.kubeconfig || !args.name) throw new InvalidOptionError('kubeconfig/name', 'both are required');
  const client = await KubeClient.fromKubeconfig({ path: args.kubeconfig });
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  const workIntervalMs = Number(args['work-interval-ms']);
  const elector = new LeaderElector({
    client,
    name: args.name,
    namespace: args.namespace,
    identity,
    leaseDurationMs: ms(args['lease-ms']),
    renewDeadlineMs: ms(args['renew-ms']),
    retryPeriodMs: ms(args['retry-ms']),
    reenterCandidacy: args.reenter,
    logger: stderrLogger({}),
    onNewLeader: (leader) => record('leader-seen', { leader }),
    onStartedLeading: async (leaderSignal) => {
      record('start');
      leaderSignal.addEventListener('abort', () => record('stop'), { once: true });
      while (!leaderSignal.aborted) {
        record('work');
        await sleep(realClock, workIntervalMs, leaderSignal).catch(() => {});
      }
    },
    onStoppedLeading: (reason) => record('stopped-leading', { reason }),
  });
  record('up');
  // RealClock's timers are unref'd, so a standby that is only waiting would let Node exit.
  const keepAlive = setInterval(() => {}, 60_000);
  try {
    await elector.start(stop.signal);
    return 0;
  } catch (err) {
    if (err instanceof LeadershipLostError) return EXIT_LEADERSHIP_LOST;
    throw err;
  } finally {
    clearInterval(keepAlive);
    await client.close();
  }
}

main().then(
  (code) => {
    record('exit', { code });
    process.exit(code);
  },
  (err: unknown) => {
    const code = err instanceof InvalidOptionError ? EXIT_BAD_OPTIONS : 1;
    process.stderr.write(`${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n`);
    record('exit', { code, error: err instanceof Error ? err.message : String(err) });
    process.exit(code);
  },
);
