/**
 * The primary's conditions from its dependents' states: one condition per dependent
 * (`<Name>Ready`, True when ready, False with the reason otherwise) and the kstatus trio
 * (setKstatusConditions): Ready when all are, Reconciling while any is not ready or failed with a
 * retryable error, Stalled when one failed with a TerminalError. Pure: a new array back.
 */
import { setCondition, type Condition, type SetConditionOptions } from '../conditions.js';
import { setKstatusConditions, type KstatusProgress } from '../kstatus.js';
import type { DependentState } from './dependent-state.js';

export interface DependentConditionsOptions extends SetConditionOptions {
  /** The generation the reconcile acted on (the primary's metadata.generation as read). */
  readonly observedGeneration: number;
}

/** Condition reasons per state, CamelCase as metav1.Condition wants them. */
const REASONS: Record<DependentState['state'], string> = {
  ready: 'Ready',
  notReady: 'NotReady',
  waiting: 'WaitingForDependencies',
  failed: 'ReconcileFailed',
};

/** Longest message kept on a condition: enough for an API error, short of metav1's 32 KiB limit. */
const MAX_MESSAGE = 1024;

export function dependentConditions(
  conditions: readonly Condition[] | undefined,
  states: readonly DependentState[],
  options: DependentConditionsOptions,
): Condition[] {
  const { observedGeneration } = options;
  let next = [...(conditions ?? [])];
  for (const s of states) {
    next = setCondition(
      next,
      {
        type: s.conditionType,
        status: s.state === 'ready' ? 'True' : 'False',
        reason: REASONS[s.state],
        message: s.message.slice(0, MAX_MESSAGE),
        observedGeneration,
      },
      options,
    );
  }
  return setKstatusConditions(next, overallProgress(states), options);
}

/** The kstatus state of the whole graph. */
export function overallProgress(states: readonly DependentState[]): KstatusProgress {
  const failed = states.filter((s) => s.state === 'failed');
  const terminal = failed.find((s) => isTerminal(s.error));
  if (terminal) return { state: 'Stalled', reason: 'DependentFailed', message: summary([terminal]) };
  if (failed.length > 0) return { state: 'Reconciling', reason: 'DependentFailed', message: summary(failed) };
  const pending = states.filter((s) => s.state !== 'ready');
  if (pending.length > 0) return { state: 'Reconciling', reason: 'DependentsNotReady', message: summary(pending) };
  return {
    state: 'Ready',
    reason: 'DependentsReady',
    message: `${states.length} of ${states.length} dependents ready`,
  };
}

function summary(states: readonly DependentState[]): string {
  return states
    .map((s) => `${s.name}: ${s.message}`)
    .join('; ')
    .slice(0, MAX_MESSAGE);
}

// The controller module's TerminalError, known by its stable code: helpers sit below controller.
function isTerminal(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ERR_TERMINAL';
}
