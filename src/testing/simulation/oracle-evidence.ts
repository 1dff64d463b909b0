/**
 * What every oracle needs to point a finding at its cause: the scenario step and the fault in force
 * at the time of the evidence, and one way to name an object.
 *
 * A fault's time is the fake time of the call it fired at (`run.calls[fault.at].atMs`); a fault
 * whose call was never made never fired. Evidence at the end of a run (a final object, the quiet
 * window) is at time `Infinity`: the last step and the last fault.
 */
import type { KubeObject } from '../../core/object-key.js';
import { describeFault } from './fault.js';
import type { Finding, RunRecord } from './simulation-records.js';

/** Time of evidence that is the run's end state. */
export const END_OF_RUN = Number.POSITIVE_INFINITY;

export type Attribution = Pick<Finding, 'step' | 'fault'>;

/** Returns `(timeMs) => { step, fault }` for one run. */
export function evidenceAttributor(run: RunRecord): (timeMs: number) => Attribution {
  const fired = run.faults
    .flatMap((fault) => {
      const call = run.calls[fault.at];
      return call ? [{ atMs: call.atMs, at: fault.at, text: describeFault(fault) }] : [];
    })
    .sort((a, b) => a.atMs - b.atMs || a.at - b.at);
  return (timeMs) => {
    let step = -1;
    run.stepTimesMs.forEach((t, i) => {
      if (t <= timeMs) step = i;
    });
    let fault: string | undefined;
    for (const f of fired) if (f.atMs <= timeMs) fault = f.text;
    return { step, ...(fault !== undefined ? { fault } : {}) };
  };
}

/** `kind namespace/name` (`kind name` cluster-scoped): how findings name an object. */
export function findingKey(obj: KubeObject): string {
  const m = obj.metadata;
  return `${obj.kind ?? '?'} ${m?.namespace ? `${m.namespace}/` : ''}${m?.name ?? '?'}`;
}

/** `group/kind namespace/name`: one object across runs and API versions of its kind. */
export function identityOf(obj: KubeObject): string {
  return `${groupOf(obj.apiVersion)}/${findingKey(obj)}`;
}

export function groupOf(apiVersion: string | undefined): string {
  const slash = (apiVersion ?? '').indexOf('/');
  return slash < 0 ? '' : apiVersion!.slice(0, slash);
}

/** Whether `obj` is of one of `kinds` (group and kind match; any version of it). */
export function isOfKinds(obj: KubeObject, kinds: readonly { apiVersion: string; kind: string }[]): boolean {
  return kinds.some((k) => k.kind === obj.kind && groupOf(k.apiVersion) === groupOf(obj.apiVersion));
}

/** Short JSON of a value for a message (cut at `max` characters). */
export function brief(value: unknown, max = 120): string {
  const text = value === undefined ? 'absent' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
