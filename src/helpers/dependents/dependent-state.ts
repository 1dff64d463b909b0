import type { Result } from '../../core/result.js';
import type { WriteOperation } from './dependent.js';

/**
 * Where one dependent stands after a reconcile:
 * - `ready`: written (or found as desired) and `readyWhen` says so;
 * - `notReady`: written, `readyWhen` says not yet: its dependents wait;
 * - `waiting`: not reconciled, because a dependency is not ready or failed;
 * - `failed`: building, reading or writing it threw (`error`, rethrown by `reconcile`).
 */
export type DependentState =
  | {
      readonly state: 'ready' | 'notReady';
      readonly name: string;
      /** The primary's condition that reports it (`ConfigMapReady`). */
      readonly conditionType: string;
      /** For humans: `readyWhen`'s message, or that the object is (not) ready. */
      readonly message: string;
      readonly operation: WriteOperation;
    }
  | {
      readonly state: 'waiting';
      readonly name: string;
      readonly conditionType: string;
      /** `waiting for <names>`. */
      readonly message: string;
      /** Its dependencies that are not ready or failed. */
      readonly waitingFor: readonly string[];
    }
  | {
      readonly state: 'failed';
      readonly name: string;
      readonly conditionType: string;
      /** The error's message. */
      readonly message: string;
      readonly error: unknown;
    };

/** What `Dependents.reconcile` found and did. `D` maps each dependent's name to its object type. */
export interface DependentsReport<P, D> {
  /** `done()` when every dependent is ready, else a requeue (`notReadyRequeueAfterMs`). */
  readonly result: Result;
  /** True when every dependent is ready. */
  readonly ready: boolean;
  /** One entry per dependent, in dependency order. */
  readonly states: readonly DependentState[];
  /** The primary after the status write (as given when nothing was written or `status: false`). */
  readonly primary: P;
  /** The object a dependent was reconciled to, typed from its kind; undefined if it was not reached. */
  object<N extends keyof D & string>(name: N): D[N] | undefined;
}
