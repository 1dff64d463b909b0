/**
 * One reconcile of the dependents' graph: each dependent starts as soon as everything it depends on
 * is ready, so independent ones run in parallel (all under the reconcile's signal) and a not-ready
 * or failed one holds back only what depends on it. Nothing here throws for a dependent's failure:
 * it becomes that dependent's state, and the caller decides (status first, then rethrow).
 */
import { throwIfAborted } from '../../core/abort.js';
import { applyOwned } from '../apply-owned.js';
import type { MetaObject } from '../meta-object.js';
import type { ReadyCheck, WriteOutcome } from './dependent.js';
import {
  buildDesired,
  describeObject,
  readCurrent,
  withOwner,
  type DependentNode,
  type RunContext,
} from './dependent-node.js';
import { SPEC_HASH_ANNOTATION, specHash } from '../spec-hash.js';
import type { DependentState } from './dependent-state.js';
import { drifted } from './drifted.js';

export interface GraphPass {
  /** In the order of `nodes`. */
  readonly states: DependentState[];
  /** Each reconciled dependent's object (as written or read). */
  readonly objects: Map<string, MetaObject>;
}

export async function reconcileGraph(
  nodes: readonly DependentNode[],
  primary: MetaObject,
  run: RunContext,
): Promise<GraphPass> {
  const objects = new Map<string, MetaObject>();
  const outcomes = new Map<string, Promise<DependentState>>();
  // `nodes` is in dependency order, so every dependency's promise exists when a node's is made.
  for (const node of nodes) {
    outcomes.set(
      node.name,
      (async (): Promise<DependentState> => {
        const before = await Promise.all(node.dependsOn.map((d) => outcomes.get(d)!));
        const blocking = before.filter((s) => s.state !== 'ready').map((s) => s.name);
        const base = { name: node.name, conditionType: node.conditionType };
        if (blocking.length > 0)
          return { ...base, state: 'waiting', waitingFor: blocking, message: `waiting for ${blocking.join(', ')}` };
        try {
          throwIfAborted(run.signal);
          const { object, operation } = await reconcileOne(node, primary, objects, run);
          objects.set(node.name, object);
          const verdict = readiness(node.spec.readyWhen?.(object, primary) ?? true);
          const message = verdict.message ?? `${describeObject(object)} ${verdict.ready ? 'is ready' : 'is not ready'}`;
          return { ...base, state: verdict.ready ? 'ready' : 'notReady', operation, message };
        } catch (error) {
          return { ...base, state: 'failed', error, message: error instanceof Error ? error.message : String(error) };
        }
      })(),
    );
  }
  const states = await Promise.all(nodes.map((n) => outcomes.get(n.name)!));
  return { states, objects };
}

async function reconcileOne(
  node: DependentNode,
  primary: MetaObject,
  objects: ReadonlyMap<string, MetaObject>,
  run: RunContext,
): Promise<WriteOutcome<MetaObject>> {
  // `built` is a copy of its own: the annotation and owner reference go onto it, with no copy more.
  const built = await buildDesired(node, primary, objects);
  const write = node.spec.write ?? 'apply';
  // The hash covers what `desired` built, not the owner reference: a primary's uid (new after a
  // restore, random in a simulation) is not part of the desired state.
  const hash = write === 'apply' ? specHash(built) : undefined;
  if (hash !== undefined)
    built.metadata = {
      ...built.metadata,
      annotations: { ...built.metadata?.annotations, [SPEC_HASH_ANNOTATION]: hash },
    };
  const desired = withOwner(node, primary, built);
  const current = await readCurrent(node, desired, run);
  let outcome: WriteOutcome<MetaObject>;
  if (write === 'create') {
    outcome = current
      ? { operation: 'unchanged', object: current }
      : {
          operation: 'created',
          object: await run.client.create(desired, { signal: run.signal, fieldManager: run.fieldManager }),
        };
  } else if (write === 'apply') {
    // The hash says our desired state did not change; `drifted` says nobody changed a field we
    // own. Both hold: no request.
    if (current && current.metadata?.annotations?.[SPEC_HASH_ANNOTATION] === hash && !drifted(desired, current)) {
      outcome = { operation: 'unchanged', object: current };
    } else {
      const applied = await applyOwned(run.client, desired, {
        fieldManager: run.fieldManager,
        specHash: false,
        signal: run.signal,
      });
      outcome = { operation: current ? 'applied' : 'created', object: applied.object };
    }
  } else {
    outcome = await write({ client: run.client, desired, current, fieldManager: run.fieldManager, signal: run.signal });
  }
  if (outcome.operation !== 'unchanged') {
    run.logger?.info(
      { dependent: node.name, kind: desired.kind, object: desired.metadata?.name, operation: outcome.operation },
      'dependent written',
    );
    run.onWrite?.({ name: node.name, operation: outcome.operation, object: outcome.object });
  }
  return outcome;
}

function readiness(check: ReadyCheck): { ready: boolean; message?: string } {
  return typeof check === 'boolean' ? { ready: check } : check;
}
