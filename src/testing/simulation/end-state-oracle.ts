/**
 * End-state oracle: the faults must not change where the operator ends up. The final objects of the
 * run, normalized (`normalizeObject` by default), are compared with those of the fault-free run of
 * the same scenario; each differing object is named with the first differing path and both values,
 * and objects only one run has are reported as missing or extra. Kinds in `ignoredKinds` (Events,
 * Leases by default) are left out. Without a fault-free run there is nothing to compare.
 */
import type { KubeObject } from '../../core/object-key.js';
import { DEFAULT_END_STATE_IGNORED_KINDS, normalizeObject } from './normalize-object.js';
import { brief, END_OF_RUN, evidenceAttributor, findingKey, identityOf } from './oracle-evidence.js';
import type { Finding, RunRecord } from './simulation-records.js';

export interface EndStateOracleOptions {
  readonly normalize?: (obj: KubeObject) => unknown;
  /** Kinds (by `kind`) left out. @defaultValue {@link DEFAULT_END_STATE_IGNORED_KINDS} */
  readonly ignoredKinds?: readonly string[];
}

export function endStateOracle(
  run: RunRecord,
  faultFree: RunRecord | undefined,
  options: EndStateOracleOptions = {},
): Finding[] {
  if (!faultFree) return [];
  const normalize = options.normalize ?? normalizeObject;
  const ignored = new Set(options.ignoredKinds ?? DEFAULT_END_STATE_IGNORED_KINDS);
  const index = (objects: readonly KubeObject[]): Map<string, KubeObject> =>
    new Map(objects.filter((o) => !ignored.has(o.kind ?? '')).map((o) => [identityOf(o), o]));
  const mine = index(run.finalObjects);
  const expected = index(faultFree.finalObjects);
  const at = evidenceAttributor(run)(END_OF_RUN);
  const findings: Finding[] = [];
  const add = (obj: KubeObject, message: string): void => {
    findings.push({ oracle: 'end-state', key: findingKey(obj), ...at, message });
  };
  for (const [id, want] of expected) {
    const got = mine.get(id);
    if (!got) {
      add(
        want,
        `${findingKey(want)} exists at the end of the fault-free run but not of this one: the faults made the operator lose (or never create) it`,
      );
      continue;
    }
    const diff = firstDifference(normalize(got), normalizedOnce(want, normalize));
    if (diff) {
      add(
        got,
        `${findingKey(got)} ends differently than in the fault-free run: ${diff.path || '(the object)'} is ${brief(diff.got)} here but ${brief(diff.want)} without faults`,
      );
    }
  }
  for (const [id, got] of mine) {
    if (!expected.has(id))
      add(
        got,
        `${findingKey(got)} exists at the end of this run but not of the fault-free one: a leftover of a retried or interrupted step (a duplicate create, a child never cleaned up)`,
      );
  }
  return findings;
}

/**
 * The fault-free run's objects, normalized once for every seed compared with them (by object and
 * normalization: a record's final objects do not change).
 */
const normalized = new WeakMap<
  KubeObject,
  { readonly normalize: (obj: KubeObject) => unknown; readonly value: unknown }
>();

function normalizedOnce(obj: KubeObject, normalize: (obj: KubeObject) => unknown): unknown {
  const known = normalized.get(obj);
  if (known?.normalize === normalize) return known.value;
  const value = normalize(obj);
  normalized.set(obj, { normalize, value });
  return value;
}

/** The first path (depth first, keys sorted) at which two JSON values differ, or undefined. */
export function firstDifference(
  got: unknown,
  want: unknown,
  path = '',
): { path: string; got: unknown; want: unknown } | undefined {
  if (Object.is(got, want)) return undefined;
  if (Array.isArray(got) && Array.isArray(want)) {
    for (let i = 0; i < Math.max(got.length, want.length); i++) {
      const d = firstDifference(got[i], want[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isRecord(got) && isRecord(want)) {
    for (const k of [...new Set([...Object.keys(got), ...Object.keys(want)])].sort()) {
      const d = firstDifference(got[k], want[k], path ? `${path}.${k}` : k);
      if (d) return d;
    }
    return undefined;
  }
  return { path, got, want };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
