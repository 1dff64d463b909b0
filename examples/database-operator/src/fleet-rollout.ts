/**
 * The DatabaseFleet rollout as one pure, deterministic decision: given the fleet's version and what
 * each selected member cluster's Databases show, the one action to take now and the status to
 * report. No I/O and no clock, so every rule is a table test and the invariants are properties
 * (fleet-rollout.test.ts); database-fleet-reconciler.ts does the reads and writes around it.
 *
 * Rules:
 * - Clusters are taken in order of their names; at most one is in flight (a Database's version
 *   set there, not yet Ready on it). While one is, no other cluster's Databases are touched.
 * - A Database is done when `spec.version` is the target, `status.observedGeneration` equals its
 *   generation (its reconciler has acted on that spec; Database status has no version field, so
 *   this is what ties "Ready" to the version) and its `Ready` condition is True. A cluster is
 *   UpToDate when every selected Database there is done (a cluster without any is UpToDate).
 * - A Degraded Database (phase Degraded, or a `Degraded` condition True) in the cluster the rollout
 *   is on halts it, before or after the version was set there; the rollout resumes by itself when
 *   the Database recovers.
 * - A cluster that is unreachable (caches not synced, or its Databases could not be read) halts
 *   the rollout too: its Databases cannot be checked, so the fleet cannot be Consistent, and if the
 *   rollout was on it, it may still be in flight. Only the in-flight cluster's own step goes on.
 * - A cluster that already runs the target counts as done; clusters not selected are not reported.
 */
import type { Condition, ConditionInput } from 'operator-runtime';
import type { ClusterState, FleetClusterStatus, FleetPhase } from './database-fleet.js';

/** What the decision needs of one Database (spec and status as its own reconciler wrote them). */
export interface ObservedDatabase {
  readonly namespace: string;
  readonly name: string;
  readonly generation: number;
  readonly specVersion: string;
  readonly observedGeneration?: number;
  readonly phase?: string;
  readonly conditions?: readonly Condition[];
}

export type ObservedCluster =
  | { readonly name: string; readonly reachable: true; readonly databases: readonly ObservedDatabase[] }
  /** `message` says why (never a credential: an error's code or reason). */
  | { readonly name: string; readonly reachable: false; readonly message: string };

export interface RolloutInput {
  readonly targetVersion: string;
  /** Take no action (status is still computed). @defaultValue false */
  readonly paused?: boolean;
  /** The selected clusters, in any order. */
  readonly clusters: readonly ObservedCluster[];
  /**
   * `status.currentCluster` as last written: if that cluster is unreachable now it may still be in
   * flight, so the rollout stays halted on it.
   */
  readonly previousCurrentCluster?: string;
}

export interface DatabaseRef {
  readonly namespace: string;
  readonly name: string;
}

export type RolloutAction =
  /** Set `spec.version` to the target on these Databases of `cluster` (those not on it yet). */
  | { readonly kind: 'upgrade'; readonly cluster: string; readonly databases: readonly DatabaseRef[] }
  /** The version is set everywhere in `cluster`; its Databases are not all Ready on it yet. */
  | { readonly kind: 'wait'; readonly cluster: string; readonly message: string }
  | {
      readonly kind: 'halt';
      readonly cluster: string;
      readonly cause: 'Degraded' | 'Unreachable';
      readonly message: string;
    }
  | { readonly kind: 'paused' }
  /** Every selected cluster runs the target. */
  | { readonly kind: 'done' };

export interface RolloutDecision {
  readonly action: RolloutAction;
  readonly phase: FleetPhase;
  /** The cluster the rollout is on (in flight or halted at). */
  readonly currentCluster?: string;
  /** Every selected cluster, sorted by name, as it will be once `action` is taken. */
  readonly clusters: readonly FleetClusterStatus[];
  /** Ready, Progressing and Degraded (metav1.Condition semantics; the caller sets observedGeneration). */
  readonly conditions: readonly ConditionInput[];
}

interface Classified {
  readonly observed: ObservedCluster;
  readonly state: ClusterState;
  /** Some selected Database there has the target in its spec (the cluster may be in flight). */
  readonly touched: boolean;
  /** Databases whose spec is not on the target yet. */
  readonly behind: readonly DatabaseRef[];
  readonly status: FleetClusterStatus;
}

export function isDatabaseDegraded(db: ObservedDatabase): boolean {
  return db.phase === 'Degraded' || condition(db, 'Degraded')?.status === 'True';
}

/** On the target, acted on by its reconciler, and Ready. */
export function isDatabaseDone(db: ObservedDatabase, targetVersion: string): boolean {
  return (
    db.specVersion === targetVersion &&
    db.observedGeneration === db.generation &&
    condition(db, 'Ready')?.status === 'True' &&
    !isDatabaseDegraded(db)
  );
}

function condition(db: ObservedDatabase, type: string): Condition | undefined {
  return db.conditions?.find((c) => c.type === type);
}

/** Code-point order: the same on every machine and locale. */
function byName<T extends { readonly name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function keyOf(db: DatabaseRef): string {
  return `${db.namespace}/${db.name}`;
}

function classify(cluster: ObservedCluster, target: string): Classified {
  if (!cluster.reachable) {
    return {
      observed: cluster,
      state: 'Unreachable',
      touched: false,
      behind: [],
      status: {
        name: cluster.name,
        state: 'Unreachable',
        databases: 0,
        ready: 0,
        versions: [],
        message: cluster.message,
      },
    };
  }
  const dbs = [...cluster.databases].sort((a, b) => byName({ name: keyOf(a) }, { name: keyOf(b) }));
  const done = dbs.filter((d) => isDatabaseDone(d, target));
  const degraded = dbs.filter(isDatabaseDegraded);
  const behind = dbs.filter((d) => d.specVersion !== target).map((d) => ({ namespace: d.namespace, name: d.name }));
  const versions = [...new Set(dbs.map((d) => d.specVersion))].sort();
  const touched = dbs.some((d) => d.specVersion === target);
  let state: ClusterState;
  let message: string;
  if (done.length === dbs.length) {
    state = 'UpToDate';
    message = dbs.length === 0 ? 'no selected Databases' : `${dbs.length}/${dbs.length} Databases Ready on ${target}`;
  } else if (degraded.length > 0) {
    state = 'Degraded';
    const first = degraded[0]!;
    const why = condition(first, 'Degraded')?.message || condition(first, 'Ready')?.message;
    message =
      `Database ${keyOf(first)} is Degraded${why ? `: ${why}` : ''}` +
      (degraded.length > 1 ? ` (and ${degraded.length - 1} more)` : '');
  } else if (touched) {
    state = 'Upgrading';
    message = `${done.length}/${dbs.length} Databases Ready on ${target}`;
  } else {
    state = 'Pending';
    message = `${behind.length} Databases to upgrade to ${target}`;
  }
  return {
    observed: cluster,
    state,
    touched,
    behind,
    status: { name: cluster.name, state, databases: dbs.length, ready: done.length, versions, message },
  };
}

/** The one action to take now, and the status to report after it. Deterministic: same input, same output. */
export function decideRollout(input: RolloutInput): RolloutDecision {
  const target = input.targetVersion;
  const classified = [...input.clusters].sort(byName).map((c) => classify(c, target));
  const statuses = classified.map((c) => c.status);
  const allUpToDate = classified.every((c) => c.state === 'UpToDate');

  // The cluster in flight: touched but not done. Never more than one by this function's actions;
  // if edits by others made more, the first is waited on and none is added.
  const inFlight = classified.find((c) => c.touched && c.state !== 'UpToDate');
  const previous = classified.find((c) => c.observed.name === input.previousCurrentCluster);
  let action: RolloutAction;
  let current: Classified | undefined;
  if (inFlight) {
    current = inFlight;
    action = step(inFlight);
  } else if (previous?.state === 'Unreachable') {
    current = previous;
    action = halt(previous);
  } else if (allUpToDate) {
    action = { kind: 'done' };
  } else {
    // Nothing in flight: the next cluster, unless any is unreachable (its state is unknown).
    current = classified.find((c) => c.state === 'Unreachable') ?? classified.find((c) => c.state !== 'UpToDate')!;
    action = step(current);
  }

  if (input.paused && action.kind !== 'done') action = { kind: 'paused' };

  const clusters =
    action.kind === 'upgrade'
      ? statuses.map((s) =>
          s.name === action.cluster
            ? {
                ...s,
                state: 'Upgrading' as const,
                versions: [...new Set([...s.versions, target])].sort(),
                message: `version ${target} set on ${action.databases.length} Databases; ${s.ready}/${s.databases} Ready on it`,
              }
            : s,
        )
      : statuses;
  const phase: FleetPhase =
    action.kind === 'done'
      ? 'Consistent'
      : action.kind === 'paused'
        ? 'Paused'
        : action.kind === 'halt'
          ? 'Halted'
          : 'RollingOut';
  return {
    action,
    phase,
    ...(current && action.kind !== 'done' ? { currentCluster: current.observed.name } : {}),
    clusters,
    conditions: conditionsFor(action, target, clusters.length),
  };
}

/** What to do about the cluster the rollout is on. */
function step(cluster: Classified): RolloutAction {
  if (cluster.state === 'Unreachable' || cluster.state === 'Degraded') return halt(cluster);
  if (cluster.behind.length > 0) return { kind: 'upgrade', cluster: cluster.observed.name, databases: cluster.behind };
  return {
    kind: 'wait',
    cluster: cluster.observed.name,
    message: `waiting for cluster ${cluster.observed.name}: ${cluster.status.message}`,
  };
}

function halt(cluster: Classified): RolloutAction {
  const cause = cluster.state === 'Unreachable' ? 'Unreachable' : 'Degraded';
  return {
    kind: 'halt',
    cluster: cluster.observed.name,
    cause,
    message: `cluster ${cluster.observed.name} is ${cause === 'Unreachable' ? 'unreachable' : 'Degraded'}: ${cluster.status.message}`,
  };
}

function conditionsFor(action: RolloutAction, target: string, clusterCount: number): ConditionInput[] {
  switch (action.kind) {
    case 'done':
      return [
        {
          type: 'Ready',
          status: 'True',
          reason: 'VersionConsistent',
          message:
            clusterCount === 0
              ? 'no member cluster is selected'
              : `every selected cluster (${clusterCount}) runs ${target} on all its Databases`,
        },
        { type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: `${target} is rolled out` },
        { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
      ];
    case 'paused':
      return [
        { type: 'Ready', status: 'False', reason: 'Paused', message: `the rollout of ${target} is paused` },
        { type: 'Progressing', status: 'False', reason: 'Paused', message: 'spec.paused is true' },
        { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
      ];
    case 'halt': {
      const reason = action.cause === 'Unreachable' ? 'ClusterUnreachable' : 'ClusterDegraded';
      return [
        { type: 'Ready', status: 'False', reason: 'RolloutHalted', message: action.message },
        { type: 'Progressing', status: 'False', reason, message: `halted at cluster ${action.cluster}` },
        { type: 'Degraded', status: 'True', reason, message: action.message },
      ];
    }
    case 'upgrade':
    case 'wait':
      return [
        {
          type: 'Ready',
          status: 'False',
          reason: 'RollingOut',
          message: `rolling ${target} out; on cluster ${action.cluster}`,
        },
        {
          type: 'Progressing',
          status: 'True',
          reason: action.kind === 'upgrade' ? 'UpgradingCluster' : 'WaitingForCluster',
          message: action.kind === 'upgrade' ? `setting ${target} on cluster ${action.cluster}` : action.message,
        },
        { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
      ];
  }
}
