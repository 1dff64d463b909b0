/**
 * What the user (kubectl, another controller) does to the cluster during a simulation, as data: a
 * sequence of creates, merge patches and deletes, each `afterMs` of fake time after the one before.
 * Steps go straight to the store, not through the fault layer: they are not the operator's calls,
 * and no fault touches them. A patch or delete of an object that is not there is skipped (and
 * traced), as `kubectl` would fail and move on.
 */
import type { KubeObject } from '../../core/object-key.js';

/** One object, by type and name. */
export interface ObjectTarget {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

export interface StepTiming {
  /** Fake time since the step before (since the operator started, for the first). @defaultValue the simulation's `stepGapMs` */
  readonly afterMs?: number;
}

/**
 * An object to create: a typed one (`Widget`), or a literal with any fields besides type and
 * metadata (spec, data…), which `KubeObject` alone would refuse as excess properties.
 */
export type ScenarioObject = KubeObject | (KubeObject & { readonly [field: string]: unknown });

export type ScenarioStep =
  | (StepTiming & { readonly type: 'create'; readonly object: ScenarioObject })
  /** A merge patch of the main resource (spec, labels, a child's data drifting). */
  | (StepTiming & { readonly type: 'patch'; readonly target: ObjectTarget; readonly patch: object })
  | (StepTiming & { readonly type: 'delete'; readonly target: ObjectTarget });

export type Scenario = readonly ScenarioStep[];

/** `create Widget default/w1`: how traces and findings name a step. */
export function describeStep(step: ScenarioStep): string {
  const t: { kind?: string; namespace?: string; name?: string } =
    step.type === 'create'
      ? { kind: step.object.kind, namespace: step.object.metadata?.namespace, name: step.object.metadata?.name }
      : step.target;
  return `${step.type} ${t.kind ?? '?'} ${t.namespace ? `${t.namespace}/` : ''}${t.name ?? '?'}`;
}

/** The target of a step (the created object's, for a create). */
export function targetOfStep(step: ScenarioStep): ObjectTarget {
  if (step.type !== 'create') return step.target;
  const m = step.object.metadata;
  return {
    apiVersion: step.object.apiVersion ?? '',
    kind: step.object.kind ?? '',
    ...(m?.namespace ? { namespace: m.namespace } : {}),
    name: m?.name ?? '',
  };
}
