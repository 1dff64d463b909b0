/**
 * Test helper: runs a `LeaderElector` on a fake clock and records what it did — terms (when the
 * leader signal was handed out and when it aborted), leaders seen, and how `start()` ended.
 */
import type { FakeClock } from '../../core/fake-clock.js';
import { LeaderElector } from '../leader-elector.js';
import type { LeaderElectorOptions, LeadershipEndReason } from '../leader-elector-options.js';
import type { FakeLeaseApi } from './fake-lease-api.js';

export const TEST_NAMESPACE = 'ops';
export const TEST_LEASE = 'my-operator';

export interface RecordedTerm {
  readonly startMs: number;
  endMs: number | undefined;
  reason: LeadershipEndReason | undefined;
  readonly signal: AbortSignal;
}

export interface Candidate {
  readonly elector: LeaderElector;
  readonly terms: RecordedTerm[];
  readonly leadersSeen: string[];
  /** 'running' until start() settles, then 'resolved' or the rejection. */
  outcome: 'running' | 'resolved' | Error;
  readonly done: Promise<void>;
  /** Aborts start()'s signal. */
  stop(): void;
}

export function startCandidate(
  clock: FakeClock,
  api: FakeLeaseApi,
  identity: string,
  options: Partial<LeaderElectorOptions> = {},
): Candidate {
  const terms: RecordedTerm[] = [];
  const leadersSeen: string[] = [];
  const ac = new AbortController();
  const elector = new LeaderElector({
    client: api.client(identity),
    name: TEST_LEASE,
    namespace: TEST_NAMESPACE,
    identity,
    clock,
    random: () => 0,
    ...options,
    onStartedLeading: (signal) => {
      const term: RecordedTerm = { startMs: clock.monotonicNow(), endMs: undefined, reason: undefined, signal };
      terms.push(term);
      signal.addEventListener('abort', () => (term.endMs = clock.monotonicNow()), { once: true });
      return options.onStartedLeading?.(signal);
    },
    onStoppedLeading: (reason) => {
      const term = terms.at(-1);
      if (term) term.reason = reason;
      options.onStoppedLeading?.(reason);
    },
    onNewLeader: (leader) => {
      leadersSeen.push(leader);
      options.onNewLeader?.(leader);
    },
  });
  const candidate: Candidate = {
    elector,
    terms,
    leadersSeen,
    outcome: 'running',
    done: Promise.resolve(),
    stop: () => ac.abort(),
  };
  (candidate as { done: Promise<void> }).done = elector.start(ac.signal).then(
    () => void (candidate.outcome = 'resolved'),
    (err: unknown) => void (candidate.outcome = err instanceof Error ? err : new Error(String(err))),
  );
  return candidate;
}
