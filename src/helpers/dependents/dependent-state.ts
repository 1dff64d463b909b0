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
  | (DependentStateBase & { readonly state: 'ready' | 'notReady'; readonly operation: WriteOperation })
  | (DependentStateBase & { readonly state: 'waiting'; readonly waitingFor: readonly string[] })
  | (DependentStateBase & { readonly state: 'failed'; readonly error: unknown });

interface DependentStateBase {
  readonly name: string;
  /** The primary's condition that reports it (`ConfigMapReady`). */
  readonly conditionType: string;
  /** For humans: the readiness message, what it waits for, or the error's message. */
  readonly message: string;
}

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
