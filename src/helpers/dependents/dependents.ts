/**
 * `dependentsOf(kind)`: a primary kind's dependents as one declared graph, and the two calls a
 * reconciler makes with it — `reconcile` (every dependent in dependency order, their states in the
 * primary's conditions) and `cleanup` (reverse order, for `handleFinalizer`).
 * ```ts no-check
 * const dependents = dependentsOf(DATABASE, { fieldManager: 'database-controller' })
 *   .add({ name: 'secret', kind: kinds.Secret, write: 'create', desired: (db) => secretFor(db) })
 *   .add({ name: 'statefulset', kind: kinds.StatefulSet, dependsOn: ['secret'], desired: (db) => setFor(db),
 *          readyWhen: (sts) => sts.status?.readyReplicas === sts.spec?.replicas })
 *   .build();
 * const report = await dependents.reconcile(client, db, { signal, logger: log });
 * return report.result; // done() when all are ready, a requeue while one is not
 * ```
 */
import { isNotFound } from '../../client/api-error.js';
import type { Kind } from '../../client/kind.js';
import { throwIfAborted } from '../../core/abort.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { done, requeueAfter, type Result } from '../../core/result.js';
import { setCondition, validateCondition, type ConditionInput } from '../conditions.js';
import type { MetaObject } from '../meta-object.js';
import { retryOnConflict } from '../retry-on-conflict.js';
import { patchStatus, type StatusObject } from '../status.js';
import { cleanupGraph, type CleanupState } from './cleanup-graph.js';
import type { DependentSpec, DependentsClient, WriteOperation } from './dependent.js';
import { dependentConditions } from './dependent-conditions.js';
import type { DependentNode, RunContext } from './dependent-node.js';
import type { DependentsReport, DependentState } from './dependent-state.js';
import { ancestorsOf, orderDependents } from './dependency-graph.js';
import { InvalidDependentsError } from './invalid-dependents-error.js';
import { reconcileGraph } from './reconcile-graph.js';

/** @defaultValue of `notReadyRequeueAfterMs`: a safety net, as a watch on the dependent's kind (`.owns`) usually comes first. */
export const DEFAULT_NOT_READY_REQUEUE_MS = 5000;
/** @defaultValue of `deletionRequeueAfterMs`. */
export const DEFAULT_DELETION_REQUEUE_MS = 1000;

export interface DependentsOptions {
  /** Who owns the applied fields and makes every write, e.g. `database-controller`. */
  readonly fieldManager: string;
  /**
   * When a reconcile with a dependent not ready asks to come back; `false`: it does not, because a
   * watch on every kind with a `readyWhen` (`.owns(kind)`) brings the reconcile when its status moves.
   * @defaultValue DEFAULT_NOT_READY_REQUEUE_MS
   */
  readonly notReadyRequeueAfterMs?: number | false;
  /** When a cleanup waiting for a deleted dependent to go asks to come back. @defaultValue DEFAULT_DELETION_REQUEUE_MS */
  readonly deletionRequeueAfterMs?: number;
}

/** The status a primary of type `P` holds. */
export type StatusOf<P> = P extends { status?: infer S } ? NonNullable<S> : never;

/** A report before the status write: what `status` fields are computed from. */
export type DependentsOutcome<P, D> = Omit<DependentsReport<P, D>, 'primary' | 'result'>;

export interface ReconcileDependentsOptions<P, D> {
  /** The reconcile's signal: no dependent starts after it aborts. */
  readonly signal?: AbortSignal;
  /** The reconcile's logger: a line per write and deletion. */
  readonly logger?: Logger;
  /** Source of the conditions' lastTransitionTime and of the conflict retry's waits. @defaultValue realClock */
  readonly clock?: Clock;
  /**
   * The primary's status write: by default status.conditions (one per dependent plus Ready,
   * Reconciling, Stalled) and status.observedGeneration, through /status, retried on conflict,
   * nothing sent when unchanged. A function adds the status fields it returns to that write;
   * `false` writes nothing (compute the conditions yourself with `dependentConditions`).
   * @defaultValue true
   */
  readonly status?: boolean | ((outcome: DependentsOutcome<P, D>) => Partial<StatusOf<P>>);
  /**
   * Conditions of your own set in the same write (e.g. `Provisioned`, a check of the spec), at the
   * generation acted on; the dependents' and kstatus conditions are set after them. @defaultValue none
   */
  readonly conditions?: (outcome: DependentsOutcome<P, D>) => readonly ConditionInput[];
  /**
   * Called as each dependent's write returns (not for `unchanged`), before the dependents after it
   * start and whether or not a later one fails: for an Event or a metric about what was written.
   * A throw fails that dependent. @defaultValue none
   */
  readonly onWrite?: (write: DependentWrite<D>) => void;
}

/** A write `reconcile` made, for `onWrite`: the dependent's name, what was sent, the object the server returned. */
export type DependentWrite<D> = {
  readonly [N in keyof D & string]: {
    readonly name: N;
    readonly operation: Exclude<WriteOperation, 'unchanged'>;
    readonly object: D[N];
  };
}[keyof D & string];

export interface CleanupDependentsOptions {
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
}

/** The declared graph of a primary kind's dependents; `D` maps each name to its object type. */
export class Dependents<P extends StatusObject, D> {
  /** The dependents' names in dependency order. */
  readonly names: readonly string[];
  private readonly nodes: readonly DependentNode[];

  /** @internal Built by `DependentsBuilder.build()`, which checks the graph first. */
  constructor(
    private readonly primaryKind: Kind<P>,
    nodes: readonly DependentNode[],
    private readonly options: DependentsOptions,
  ) {
    this.nodes = nodes;
    this.names = nodes.map((n) => n.name);
  }

  /**
   * Reconciles every dependent of `primary` in dependency order (independent ones in parallel); a
   * dependent whose dependency is not ready or failed waits. Writes the states to the primary's
   * status (see `options.status`), then: rethrows the first dependent's error (unchanged, so a
   * TerminalError stays terminal), or returns the report, whose `result` asks to come back while
   * a dependent is not ready.
   */
  async reconcile(
    client: DependentsClient,
    primary: P,
    options: ReconcileDependentsOptions<P, D> = {},
  ): Promise<DependentsReport<P, D>> {
    const { signal, logger } = options;
    const pass = await reconcileGraph(this.nodes, primary, {
      client,
      fieldManager: this.options.fieldManager,
      signal,
      logger,
      ...(options.onWrite ? { onWrite: options.onWrite as RunContext['onWrite'] } : {}),
    });
    throwIfAborted(signal);
    const ready = pass.states.every((s) => s.state === 'ready');
    const object = <N extends keyof D & string>(name: N) => pass.objects.get(name) as D[N] | undefined;
    const outcome: DependentsOutcome<P, D> = { ready, states: pass.states, object };
    const failed = pass.states.find((s): s is Extract<DependentState, { state: 'failed' }> => s.state === 'failed');
    let after = primary;
    if (options.status !== false) {
      try {
        after = await this.writeStatus(client, primary, outcome, options);
      } catch (err) {
        if (!failed) throw err;
        logger?.error({ err }, 'status write after a failed dependent failed too');
      }
    }
    if (failed) throw failed.error;
    const requeueMs = this.options.notReadyRequeueAfterMs ?? DEFAULT_NOT_READY_REQUEUE_MS;
    const result: Result = ready || requeueMs === false ? done() : requeueAfter(requeueMs);
    return { ...outcome, result, primary: after };
  }

  /**
   * Deletes `primary`'s dependents in reverse dependency order, the `cleanup` of `handleFinalizer`:
   * returns nothing once every `delete` dependent is gone (the finalizer can go), a requeue while
   * one is still being deleted. `keep` dependents stay.
   */
  async cleanup(client: DependentsClient, primary: P, options: CleanupDependentsOptions = {}): Promise<Result | void> {
    const states: CleanupState[] = await cleanupGraph(this.nodes, primary, {
      client,
      fieldManager: this.options.fieldManager,
      signal: options.signal,
      logger: options.logger,
    });
    const pending = states.filter((s) => s.state === 'deleting' || s.state === 'waiting');
    if (pending.length === 0) return;
    options.logger?.debug({ dependents: pending.map((s) => `${s.name}:${s.state}`) }, 'dependents still deleting');
    return requeueAfter(this.options.deletionRequeueAfterMs ?? DEFAULT_DELETION_REQUEUE_MS);
  }

  /** status.conditions from the states (plus the caller's fields), re-read and re-applied on conflict. */
  private async writeStatus(
    client: DependentsClient,
    primary: P,
    outcome: DependentsOutcome<P, D>,
    options: ReconcileDependentsOptions<P, D>,
  ): Promise<P> {
    const { signal, clock } = options;
    const observedGeneration = primary.metadata?.generation ?? 0;
    const fields = typeof options.status === 'function' ? options.status(outcome) : {};
    const extraConditions = options.conditions?.(outcome) ?? [];
    let first = true;
    return retryOnConflict(
      async () => {
        let current = primary;
        if (!first) {
          try {
            current = await client.get(this.primaryKind, primary.metadata?.name ?? '', {
              namespace: primary.metadata?.namespace,
              signal,
            });
          } catch (err) {
            if (isNotFound(err)) return primary;
            throw err;
          }
          // The spec moved on since this reconcile read it: its own reconcile writes the status.
          if (current.metadata?.generation !== primary.metadata?.generation) return current;
        }
        first = false;
        const status = (current.status ?? {}) as { conditions?: Parameters<typeof dependentConditions>[0] };
        let own = status.conditions ?? [];
        for (const c of extraConditions) own = setCondition(own, { ...c, observedGeneration }, { clock });
        const conditions = dependentConditions(own, outcome.states, { observedGeneration, clock });
        const next = { ...status, ...fields, conditions } as NonNullable<P['status']>;
        const written = await patchStatus(client, current, next, {
          signal,
          observedGeneration,
          fieldManager: this.options.fieldManager,
        });
        return written.object;
      },
      { signal, ...(clock ? { clock } : {}) },
    );
  }
}

/** Declares a primary's dependents one by one; `build()` checks the graph. */
export class DependentsBuilder<P extends StatusObject, D = Record<never, never>> {
  /** @internal Use `dependentsOf`. */
  constructor(
    private readonly primaryKind: Kind<P>,
    private readonly options: DependentsOptions,
    private readonly specs: readonly DependentSpec<P, MetaObject, string, unknown>[] = [],
  ) {}

  /**
   * Adds a dependent; its object type comes from `kind`, and `dependsOn` names the dependents added
   * before it. Returns a new builder (this one is unchanged).
   */
  add<N extends string, T extends MetaObject>(
    spec: DependentSpec<P, T, N, D>,
  ): DependentsBuilder<P, D & { readonly [K in N]: T }> {
    return new DependentsBuilder<P, D & { readonly [K in N]: T }>(this.primaryKind, this.options, [
      ...this.specs,
      spec as unknown as DependentSpec<P, MetaObject, string, unknown>,
    ]);
  }

  /**
   * The graph, checked: throws `InvalidDependentsError` for a bad or repeated name, a dependency
   * that is not declared, a cycle, or a condition type the API server would refuse.
   */
  build(): Dependents<P, D> {
    const primary = `${this.primaryKind.apiVersion} ${this.primaryKind.kind}`;
    if (!this.options.fieldManager) throw new InvalidDependentsError(primary, 'fieldManager is required');
    const bare = this.specs.map((spec) => ({
      name: spec.name,
      dependsOn: [...(spec.dependsOn ?? [])] as string[],
      spec,
    }));
    const ordered = orderDependents(primary, bare);
    const byName = new Map(bare.map((n) => [n.name, n]));
    const seenTypes = new Map<string, string>();
    const nodes: DependentNode[] = ordered.map((n) => {
      const conditionType = n.spec.conditionType ?? `${pascalCase(n.name)}Ready`;
      try {
        validateCondition({ type: conditionType, status: 'True', reason: 'Ready' });
      } catch (err) {
        throw new InvalidDependentsError(primary, `${n.name}: ${(err as Error).message}`);
      }
      const other = seenTypes.get(conditionType);
      if (other)
        throw new InvalidDependentsError(primary, `${other} and ${n.name} both report condition ${conditionType}`);
      seenTypes.set(conditionType, n.name);
      return {
        name: n.name,
        dependsOn: n.dependsOn,
        ancestors: ancestorsOf(byName, n.name),
        dependents: bare.filter((m) => m.dependsOn.includes(n.name)).map((m) => m.name),
        conditionType,
        spec: n.spec as DependentNode['spec'],
      };
    });
    return new Dependents<P, D>(this.primaryKind, nodes, this.options);
  }
}

/** Starts the declaration of `primary`'s dependents: `.add(…)` each, then `.build()`. */
export function dependentsOf<P extends StatusObject>(
  primary: Kind<P>,
  options: DependentsOptions,
): DependentsBuilder<P> {
  return new DependentsBuilder<P>(primary, options);
}

/** `config-map` and `configMap` → `ConfigMap`. */
function pascalCase(name: string): string {
  return name
    .split('-')
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}
