/**
 * The oracles that judge one simulated run, after its faults stopped and it settled. Each reads only
 * the RunRecord (and, for end state, the fault-free run of the same scenario) and returns Findings
 * that name the object, the scenario step and the fault in force at the time of the evidence (see
 * oracle-evidence.ts), and say what to fix.
 *
 * - convergence: every live primary object has converged (default: `status.observedGeneration ===
 *   metadata.generation`). Objects being deleted are the finalizer oracle's.
 * - quiescence: no writes in the quiet window; no key reconciled more than
 *   `maxQuietReconcilesPerKey` times in it.
 * - end-state: end-state-oracle.ts. concurrent-reconcile: concurrent-reconcile-oracle.ts.
 * - finalizer: no live object still terminating at the end; nothing the scenario deleted still there.
 * - lost-update: lost-update-oracle.ts.
 * - invariant: the user's checks over the final objects.
 */
import type { KubeObject } from '../../core/object-key.js';
import { concurrentReconcileOracle } from './concurrent-reconcile-oracle.js';
import { endStateOracle } from './end-state-oracle.js';
import { lostUpdateOracle } from './lost-update-oracle.js';
import { DEFAULT_END_STATE_IGNORED_KINDS } from './normalize-object.js';
import { END_OF_RUN, evidenceAttributor, findingKey, isOfKinds } from './oracle-evidence.js';
import type { Finding, RunRecord } from './simulation-records.js';

/**
 * Reconciles of one key allowed in the quiet window. With no writes and no faults nothing should
 * trigger a reconcile, but three are legitimate: an event delivered just as the window opened, a
 * resync, and a requeue-after of an operator waiting on something external. A fourth means the key
 * is requeued forever (an error retried with backoff, `requeue: true` on every result), which a
 * window of any useful length exposes well above this; an operator that polls on purpose faster
 * than the window raises the option.
 */
export const DEFAULT_MAX_QUIET_RECONCILES_PER_KEY = 3;

/** No write in the quiet window: a settled operator has nothing left to change. @defaultValue 0 */
export const DEFAULT_MAX_QUIET_WRITES = 0;

export interface OracleOptions {
  /** The kinds the operator reconciles: convergence is asked of these. */
  readonly primaryKinds: readonly { apiVersion: string; kind: string }[];
  /** @defaultValue `status.observedGeneration === metadata.generation` */
  readonly converged?: (obj: KubeObject) => boolean;
  /** For end-state comparison. @defaultValue normalizeObject */
  readonly normalize?: (obj: KubeObject) => unknown;
  /** Kinds (by `kind`) left out of end-state comparison. @defaultValue {@link DEFAULT_END_STATE_IGNORED_KINDS} */
  readonly endStateIgnoredKinds?: readonly string[];
  /** @defaultValue {@link DEFAULT_MAX_QUIET_RECONCILES_PER_KEY} */
  readonly maxQuietReconcilesPerKey?: number;
  /**
   * Writes allowed in the quiet window: an operator with time-driven work (a schedule that fires
   * inside the window) writes on purpose; its hot loops are still the reconcile bounds' to catch.
   * @defaultValue {@link DEFAULT_MAX_QUIET_WRITES}
   */
  readonly maxQuietWrites?: number;
  /** The user's invariants over the final objects: each returned string is a violation. */
  readonly invariants?: (objects: readonly KubeObject[], run: RunRecord) => readonly string[];
}

/** Every oracle's findings for `run` (`faultFree`: the same scenario without faults, for end state). */
export function judgeRun(run: RunRecord, faultFree: RunRecord | undefined, options: OracleOptions): Finding[] {
  return [
    ...convergenceOracle(run, options),
    ...quiescenceOracle(run, options),
    ...endStateOracle(run, faultFree, {
      ...(options.normalize ? { normalize: options.normalize } : {}),
      ignoredKinds: options.endStateIgnoredKinds ?? DEFAULT_END_STATE_IGNORED_KINDS,
    }),
    ...concurrentReconcileOracle(run),
    ...finalizerOracle(run),
    ...lostUpdateOracle(run),
    ...invariantOracle(run, options),
  ];
}

export function defaultConverged(obj: KubeObject): boolean {
  return observedGenerationOf(obj) === obj.metadata?.generation;
}

export function convergenceOracle(
  run: RunRecord,
  options: Pick<OracleOptions, 'primaryKinds' | 'converged'>,
): Finding[] {
  const converged = options.converged ?? defaultConverged;
  const at = evidenceAttributor(run)(END_OF_RUN);
  return run.finalObjects
    .filter((o) => isOfKinds(o, options.primaryKinds) && o.metadata?.deletionTimestamp === undefined)
    .filter((o) => !converged(o))
    .map((o) => ({
      oracle: 'convergence' as const,
      key: findingKey(o),
      ...at,
      message:
        `${findingKey(o)} did not converge after the faults stopped: metadata.generation is ${String(o.metadata?.generation)}, ` +
        `status.observedGeneration is ${String(observedGenerationOf(o))} — the final spec was never reconciled into status ` +
        '(a reconcile that gave up, an event never acted on, or a status write lost to a conflict and not retried)',
    }));
}

export function quiescenceOracle(
  run: RunRecord,
  options: Pick<OracleOptions, 'maxQuietReconcilesPerKey' | 'maxQuietWrites'>,
): Finding[] {
  const max = options.maxQuietReconcilesPerKey ?? DEFAULT_MAX_QUIET_RECONCILES_PER_KEY;
  const at = evidenceAttributor(run)(END_OF_RUN);
  const maxWrites = options.maxQuietWrites ?? DEFAULT_MAX_QUIET_WRITES;
  const findings: Finding[] = [];
  const unsettled =
    run.quietWindow.settled === false ? ' (and the run did not settle within settleMs before the window)' : '';
  const windowMs = run.quietWindow.ms ?? 0;
  const rate = (count: number): string =>
    windowMs > 0 ? `, ${(count / (windowMs / 1_000)).toFixed(1)} reconciles/s over ${windowMs} ms` : '';
  if (run.quietWindow.writes > maxWrites) {
    findings.push({
      oracle: 'quiescence',
      ...at,
      message:
        `the operator made ${run.quietWindow.writes} write(s) in the quiet window (at most ${maxWrites} expected), with no faults and no scenario steps${unsettled}: ` +
        'it never settles (a reconcile that writes every time — a timestamp, an unordered list, a status that flips between two values)',
    });
  }
  for (const [key, count] of [...run.quietWindow.reconcilesByKey].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (count <= max) continue;
    findings.push({
      oracle: 'quiescence',
      key,
      ...at,
      message: `${key} was reconciled ${count} times in the quiet window (at most ${max} expected${rate(count)})${unsettled}: a requeue that never ends (an error retried forever, or requeue on every result)`,
    });
  }
  return findings;
}

export function finalizerOracle(run: RunRecord): Finding[] {
  const at = evidenceAttributor(run)(END_OF_RUN);
  const findings: Finding[] = [];
  const deleted = new Set(run.deletedByScenario);
  for (const o of run.finalObjects) {
    if (o.metadata?.deletionTimestamp === undefined) continue;
    const byScenario = deleted.has(scenarioId(o)) ? ' (the scenario deleted it)' : '';
    findings.push({
      oracle: 'finalizer',
      key: findingKey(o),
      ...at,
      message:
        `${findingKey(o)} is stuck terminating${byScenario}: marked for deletion but finalizers ${JSON.stringify(o.metadata.finalizers ?? [])} were never removed ` +
        '(the cleanup failed or was skipped after a fault; a finalizer must be removed once cleanup is done, also by a restarted process)',
    });
  }
  const removed = deletedKeysInHistory(run);
  const live = new Map(run.finalObjects.map((o) => [scenarioId(o), o]));
  for (const id of run.deletedByScenario) {
    const o = live.get(id);
    // Terminating ones are reported above; one deleted and re-created (a DELETE in the history) is
    // a new object, judged by the other oracles.
    if (!o || o.metadata?.deletionTimestamp !== undefined || removed.has(id)) continue;
    findings.push({
      oracle: 'finalizer',
      key: findingKey(o),
      ...at,
      message: `${findingKey(o)} was deleted by the scenario but is still present and was never removed from the store: the delete did not take effect`,
    });
  }
  return findings;
}

export function invariantOracle(run: RunRecord, options: Pick<OracleOptions, 'invariants'>): Finding[] {
  if (!options.invariants) return [];
  const at = evidenceAttributor(run)(END_OF_RUN);
  return options.invariants(run.finalObjects, run).map((message) => ({ oracle: 'invariant' as const, ...at, message }));
}

/** `apiVersion kind namespace/name`, as `RunRecord.deletedByScenario` names objects. */
function scenarioId(o: KubeObject): string {
  const m = o.metadata;
  return `${o.apiVersion ?? ''} ${o.kind ?? ''} ${m?.namespace ? `${m.namespace}/` : ''}${m?.name ?? ''}`;
}

/** Scenario ids of every object the history saw deleted (from the DELETE's previous value). */
function deletedKeysInHistory(run: RunRecord): Set<string> {
  const ids = new Set<string>();
  for (const e of run.history) {
    if (e.type !== 'DELETE' || !e.prev) continue;
    try {
      ids.add(scenarioId(JSON.parse(Buffer.from(e.prev.value).toString('utf8')) as KubeObject));
    } catch {
      // Not JSON: not an object the scenario names.
    }
  }
  return ids;
}

function observedGenerationOf(obj: KubeObject): unknown {
  const status = (obj as { status?: { observedGeneration?: unknown } }).status;
  return status?.observedGeneration;
}
