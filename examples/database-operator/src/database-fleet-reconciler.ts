/**
 * The DatabaseFleet reconciler: a host-cluster controller (`.for(DATABASE_FLEET)`) that reads the
 * Databases of every selected member cluster, asks fleet-rollout.ts for the one action to take,
 * takes it (sets `spec.version` on one cluster's Databases), reports every cluster in the status and
 * says what it did in Events. Member clusters reach it as the library's `ClusterView`s — the
 * manager's `manager.fleet` in the operator, FakeClients in tests.
 *
 * Member changes do not queue a fleet by themselves (they are in other clusters' caches): while a
 * rollout is in flight or halted the fleet is requeued every `rolloutPollMs`, and when Consistent
 * every `consistencyCheckMs`, so drift is found without a watch.
 */
import {
  ApiError,
  OperatorRuntimeError,
  TerminalError,
  requeueAfter,
  retryOnConflict,
  setCondition,
  writeStatus,
  type Client,
  type Clock,
  type ClusterView,
  type ConditionInput,
  type EventRecorder,
  type ObjectReconcileContext,
  type ObjectReconciler,
  type ReconcileRequest,
  type Result,
} from 'operator-runtime';
import {
  InvalidLabelSelectorError,
  MATCH_ALL_LABELS,
  labelSelectorFromObject,
  matchesLabels,
  type LabelSelector,
} from 'operator-runtime/cache';
import type { FleetView } from 'operator-runtime/fleet';
import { DATABASE, type Database } from './database.js';
import type { DatabaseFleet, DatabaseFleetStatus } from './database-fleet.js';
import { rolloutEvents } from './fleet-rollout-events.js';
import { decideRollout, type ObservedCluster, type RolloutDecision } from './fleet-rollout.js';

export const FLEET_CONTROLLER_NAME = 'databasefleet';
/** Who sets `spec.version` on member Databases (managedFields), apart from the Database operator itself. */
export const FLEET_FIELD_MANAGER = 'database-fleet';
/** How often a fleet is looked at while a rollout is in flight or halted. @defaultValue 2000 */
export const DEFAULT_ROLLOUT_POLL_MS = 2000;
/** How often a Consistent (or paused) fleet is checked for drift. @defaultValue 30,000 */
export const DEFAULT_CONSISTENCY_CHECK_MS = 30_000;

export interface DatabaseFleetReconcilerOptions {
  /** The host cluster's client (the manager's): reads DatabaseFleets from its cache, writes their status. */
  readonly client: Client;
  /** The member clusters engaged now (the manager's `manager.fleet`). */
  readonly fleet: Pick<FleetView, 'clusters'>;
  /** Where the fleet's Events go: an `EventRecorder` in the host cluster. */
  readonly recorder: Pick<EventRecorder, 'event'>;
  /** @defaultValue {@link DEFAULT_ROLLOUT_POLL_MS} */
  readonly rolloutPollMs?: number;
  /** @defaultValue {@link DEFAULT_CONSISTENCY_CHECK_MS} */
  readonly consistencyCheckMs?: number;
  /** @defaultValue the real clock */
  readonly clock?: Clock;
}

/** A member's Databases as read this reconcile, by `namespace/name`. */
interface Observed {
  readonly cluster: ObservedCluster;
  readonly databases: ReadonlyMap<string, Database>;
}

export class DatabaseFleetReconciler implements ObjectReconciler<DatabaseFleet> {
  constructor(private readonly options: DatabaseFleetReconcilerOptions) {}

  async reconcile(_request: ReconcileRequest, ctx: ObjectReconcileContext<DatabaseFleet>): Promise<Result | void> {
    const { signal, log } = ctx;
    const fleet = await ctx.get();
    if (!fleet) return; // deleted: it owns nothing in the members, their Databases stay as they are
    const target = fleet.spec.version;

    let clusterSelector: LabelSelector;
    let databaseSelector: LabelSelector;
    try {
      clusterSelector = labelSelectorFromObject(fleet.spec.clusterSelector);
      databaseSelector = fleet.spec.databaseSelector
        ? labelSelectorFromObject(fleet.spec.databaseSelector)
        : MATCH_ALL_LABELS;
    } catch (err) {
      if (!(err instanceof InvalidLabelSelectorError)) throw err;
      // The schema checks the shape only; an operator or key it cannot check waits for a spec change.
      await this.writeStatus(fleet, { ...fleet.status, targetVersion: target }, [invalidSpec(err.message)], signal);
      this.options.recorder.event(fleet, 'Warning', 'InvalidSelector', err.message);
      throw new TerminalError(`invalid selector: ${err.message}`);
    }

    const members = this.options.fleet
      .clusters()
      .filter((c) => matchesLabels(clusterSelector, c.labels))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const observed = await Promise.all(members.map((m) => observeMember(m, databaseSelector, signal)));
    const decision = decideRollout({
      targetVersion: target,
      paused: fleet.spec.paused ?? false,
      clusters: observed.map((o) => o.cluster),
      ...(fleet.status?.currentCluster ? { previousCurrentCluster: fleet.status.currentCluster } : {}),
    });
    const { action } = decision;
    log.info(
      { action: action.kind, cluster: 'cluster' in action ? action.cluster : undefined, phase: decision.phase },
      'fleet rollout decision',
    );

    if (action.kind === 'upgrade') {
      const member = members.find((m) => m.name === action.cluster)!;
      const databases = observed[members.indexOf(member)]!.databases;
      for (const ref of action.databases) {
        const db = databases.get(`${ref.namespace}/${ref.name}`)!;
        await this.setVersion(member, db, target, signal);
      }
      log.info({ cluster: member.name, databases: action.databases.length, version: target }, 'version set');
    }

    // Said before the status is written: the writes above happened whether or not it succeeds.
    for (const e of rolloutEvents(fleet.status, decision, target))
      this.options.recorder.event(fleet, e.type, e.reason, e.message);

    await this.writeStatus(fleet, statusOf(decision, target), decision.conditions, signal);
    return requeueAfter(
      decision.phase === 'Consistent' || decision.phase === 'Paused'
        ? (this.options.consistencyCheckMs ?? DEFAULT_CONSISTENCY_CHECK_MS)
        : (this.options.rolloutPollMs ?? DEFAULT_ROLLOUT_POLL_MS),
    );
  }

  /**
   * `spec.version` by a merge patch carrying the resourceVersion read: a Database changed since is a
   * 409, re-read from the member's API server and decided again (already on the version: nothing).
   */
  private async setVersion(member: ClusterView, db: Database, version: string, signal: AbortSignal) {
    let current = db;
    let first = true;
    await retryOnConflict(
      async () => {
        if (!first)
          current = await member.apiClient.get(DATABASE, db.metadata.name, {
            namespace: db.metadata.namespace,
            signal,
          });
        first = false;
        if (current.spec.version === version) return;
        await member.client.patch(
          DATABASE,
          current.metadata.name,
          { metadata: { resourceVersion: current.metadata.resourceVersion }, spec: { version } },
          { type: 'merge', namespace: current.metadata.namespace, signal, fieldManager: FLEET_FIELD_MANAGER },
        );
      },
      { signal, ...(this.options.clock ? { clock: this.options.clock } : {}) },
    );
  }

  /**
   * The status through /status with observedGeneration; conditions merged (lastTransitionTime
   * kept); re-read and recomputed on conflict; not written over a status of a newer generation.
   */
  private async writeStatus(
    fleet: DatabaseFleet,
    status: DatabaseFleetStatus,
    conditions: readonly ConditionInput[],
    signal: AbortSignal,
  ): Promise<void> {
    const observedGeneration = fleet.metadata.generation;
    const clock = this.options.clock ? { clock: this.options.clock } : {};
    await writeStatus(
      this.options.client,
      fleet,
      (latest) => {
        let next = latest.status?.conditions ?? [];
        for (const c of conditions) next = setCondition(next, { ...c, observedGeneration }, clock);
        return { ...status, conditions: next };
      },
      { signal, ...clock },
    );
  }
}

function statusOf(decision: RolloutDecision, target: string): DatabaseFleetStatus {
  return {
    phase: decision.phase,
    targetVersion: target,
    ...(decision.currentCluster ? { currentCluster: decision.currentCluster } : {}),
    clusters: decision.clusters.map((c) => ({ ...c, versions: [...c.versions] })),
  };
}

function invalidSpec(message: string): ConditionInput {
  return { type: 'Ready', status: 'False', reason: 'InvalidSelector', message };
}

/** A member's selected Databases from its cache; Unreachable when it has not synced or cannot be listed. */
async function observeMember(member: ClusterView, selector: LabelSelector, signal: AbortSignal): Promise<Observed> {
  if (!member.synced)
    return {
      cluster: { name: member.name, reachable: false, message: "the cluster's caches have not synced" },
      databases: new Map(),
    };
  let items: Database[];
  try {
    ({ items } = await member.client.list(DATABASE, { signal }));
  } catch (err) {
    if (signal.aborted) throw err;
    return {
      cluster: { name: member.name, reachable: false, message: `Databases could not be listed: ${describeError(err)}` },
      databases: new Map(),
    };
  }
  const selected = items.filter((d) => matchesLabels(selector, d.metadata.labels));
  return {
    cluster: {
      name: member.name,
      reachable: true,
      databases: selected.map((d) => ({
        namespace: d.metadata.namespace,
        name: d.metadata.name,
        generation: d.metadata.generation,
        specVersion: d.spec.version,
        ...(d.status?.observedGeneration !== undefined ? { observedGeneration: d.status.observedGeneration } : {}),
        ...(d.status?.phase !== undefined ? { phase: d.status.phase } : {}),
        ...(d.status?.conditions !== undefined ? { conditions: d.status.conditions } : {}),
      })),
    },
    databases: new Map(selected.map((d) => [`${d.metadata.namespace}/${d.metadata.name}`, d])),
  };
}

/** The status is tenant-readable: an HTTP status and reason or an error code, never a message that could carry a URL or credential. */
function describeError(err: unknown): string {
  if (err instanceof ApiError) return `${err.status} ${err.reason}`;
  if (err instanceof OperatorRuntimeError) return err.code;
  return err instanceof Error ? err.name : 'unknown error';
}
