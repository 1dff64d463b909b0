/**
 * kstatus conditions, set as one state: `Reconciling` while work is in progress, `Stalled` when
 * the operator cannot go on until someone changes something, `Ready` when converged. Flux,
 * `kubectl wait --for=condition=Ready` and the generated Argo CD check read an object written this
 * way as its state says (computeKstatus, docs/status.md). Pure, like setCondition: a new array back.
 */
import { READY_CONDITION, RECONCILING_CONDITION, STALLED_CONDITION } from '../core/kstatus-rules.js';
import { InvalidConditionError } from './errors.js';
import { removeCondition, setCondition, type Condition, type SetConditionOptions } from './conditions.js';

/** Where the reconcile stands, with the reason readers show (CamelCase) and a message for humans. */
export type KstatusProgress =
  | {
      /** Work is under way (owned objects not ready yet, a step pending): it will go on by itself. */
      readonly state: 'Reconciling';
      readonly reason: string;
      readonly message?: string;
    }
  | {
      /** An error retrying cannot fix (an unsupported spec, a refused endpoint): a change must come first. */
      readonly state: 'Stalled';
      readonly reason: string;
      readonly message: string;
    }
  | {
      /** Converged: what the spec asks for is what runs. */
      readonly state: 'Ready';
      readonly reason: string;
      readonly message?: string;
    };

export interface KstatusConditionOptions extends SetConditionOptions {
  /**
   * The generation the reconcile acted on (the `metadata.generation` it read at its start): written
   * on every condition set, as status.observedGeneration is by patchStatus/updateStatus.
   */
  readonly observedGeneration: number;
}

/**
 * Returns `conditions` with the kstatus conditions for `progress`, all at `observedGeneration`:
 * - Reconciling: Reconciling=True and Ready=False, both with its reason; no Stalled.
 * - Stalled: Stalled=True and Ready=False, both with its reason; no Reconciling.
 * - Ready: Ready=True; neither Reconciling nor Stalled.
 * Reconciling and Stalled are never both present and Ready is always there (Flux's condition
 * checks FAIL0002–FAIL0005); absent means "not so" (kstatus's abnormal-true polarity). Other
 * conditions are kept as they are.
 */
export function setKstatusConditions(
  conditions: readonly Condition[] | undefined,
  progress: KstatusProgress,
  options: KstatusConditionOptions,
): Condition[] {
  const { observedGeneration } = options;
  if (!Number.isInteger(observedGeneration) || observedGeneration < 0)
    throw new InvalidConditionError('observedGeneration', 'must be an integer >= 0 (the generation acted on)');
  const message = progress.message ?? '';
  const set = (list: Condition[], type: string, status: 'True' | 'False') =>
    setCondition(list, { type, status, reason: progress.reason, message, observedGeneration }, options);
  let next = [...(conditions ?? [])];
  switch (progress.state) {
    case 'Reconciling':
      next = removeCondition(next, STALLED_CONDITION);
      next = set(next, RECONCILING_CONDITION, 'True');
      return set(next, READY_CONDITION, 'False');
    case 'Stalled':
      next = removeCondition(next, RECONCILING_CONDITION);
      next = set(next, STALLED_CONDITION, 'True');
      return set(next, READY_CONDITION, 'False');
    case 'Ready':
      next = removeCondition(removeCondition(next, RECONCILING_CONDITION), STALLED_CONDITION);
      return set(next, READY_CONDITION, 'True');
  }
}
