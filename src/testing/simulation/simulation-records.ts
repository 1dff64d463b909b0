/**
 * What one simulated run records, as plain data: the oracles read these and nothing else, and a
 * replay compares two traces line for line. The fault layer (simulated-cluster.ts) writes calls and
 * writes; the driver (simulate.ts) writes reconcile spans; the history recorder writes the store's
 * history in etcd's shape so the consistency audit's `analyzeHistory` checks it unchanged.
 */
import type { KubeObject } from '../../core/object-key.js';
import type { HistoryEvent } from '../chaos/consistency-audit.js';
import type { Fault } from './fault.js';
import type { ExternalServiceState } from './external-service.js';

/** One API call the operator made, in order (the `at` of a fault counts these). */
export interface CallRecord {
  readonly at: number;
  /** 0 for the first process, +1 per restart or new leader. */
  readonly incarnation: number;
  readonly verb: 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  /** `ok`, or the error's code/status (`409`, `crashed`, `timeout`, …). */
  readonly outcome: string;
  /** Fake time of the call. */
  readonly atMs: number;
  /** The store's resourceVersion when the call was made (how far a stale restart must look back to miss a write). */
  readonly storeRevision?: string;
}

/** A successful write by the operator, with what it was based on (for the lost-update oracle). */
export interface WriteRecord {
  readonly at: number;
  readonly incarnation: number;
  readonly verb: 'create' | 'update' | 'patch' | 'delete';
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly subresource?: string;
  /** `metadata.resourceVersion` the request carried as a precondition, if any. */
  readonly preconditionResourceVersion?: string;
  /** The newest resourceVersion of this object the incarnation had seen (get, list, watch or a write's answer) when it wrote; undefined if it had seen none. */
  readonly observedResourceVersion?: string;
  /** resourceVersion the object had in the store just before the write. */
  readonly replacedResourceVersion?: string;
  /** resourceVersion of the answer (for a delete that leaves the object terminating, of that object). */
  readonly resultResourceVersion?: string;
  readonly atMs: number;
  /** The `at` of the first call made after the write completed (a crash there follows the write). */
  readonly nextCallAt?: number;
}

/** One reconcile of one key by one controller of one incarnation; `startSeq`/`endSeq` order events of the run totally. */
export interface ReconcileSpan {
  readonly controller: string;
  readonly key: string;
  readonly incarnation: number;
  readonly startSeq: number;
  /** undefined: still running when the run ended (or its process died in it). */
  readonly endSeq?: number;
  readonly startedAtMs: number;
  readonly endedAtMs?: number;
  /** Index into the scenario of the last step applied when the reconcile started (-1 before the first). */
  readonly step: number;
  readonly outcome?: string;
}

/** Everything one run produced. */
export interface RunRecord {
  readonly seed: number;
  readonly faults: readonly Fault[];
  readonly calls: readonly CallRecord[];
  readonly writes: readonly WriteRecord[];
  readonly reconciles: readonly ReconcileSpan[];
  /** The store's history, every kind the simulation knows, in etcd's shape. */
  readonly history: readonly HistoryEvent[];
  /** Every object in the store when the run ended (after settling). */
  readonly finalObjects: readonly KubeObject[];
  /** Fake time (ms since the run started) when `finalObjects` were read; the clock's epoch time is 2026-01-01T00:00:00Z plus this. */
  readonly endMs?: number;
  /** Writes and reconciles in the quiet window at the end, per `controller namespace/name` key. */
  readonly quietWindow: {
    readonly writes: number;
    readonly reconcilesByKey: ReadonlyMap<string, number>;
    /** Its length in fake time (0 when the run was cut short). */
    readonly ms?: number;
    /** Whether the run settled before it (false: `settleMs` ran out with the operator still busy). */
    readonly settled?: boolean;
  };
  /** Fake time at which each scenario step was applied (index = step). */
  readonly stepTimesMs: readonly number[];
  /** Objects the scenario deleted (`apiVersion kind namespace/name`). */
  readonly deletedByScenario: readonly string[];
  /** One line per call and reconcile: two replays of one seed give equal traces. */
  readonly trace: readonly string[];
  /** What each external service (external-service.ts) held at the end, by name. */
  readonly services?: Readonly<Record<string, ExternalServiceState>>;
  /** Set when the run spent its budget (run-budget.ts) and was stopped: the quiescence finding that says so. */
  readonly cutShort?: Finding;
}

/** What an oracle reports: which object, which step, which fault, and what is wrong. */
export interface Finding {
  readonly oracle: OracleName;
  /** `kind namespace/name` (or a controller's queue key). */
  readonly key?: string;
  /** Scenario step index it concerns (last step applied at the time), when known. */
  readonly step?: number;
  /** The fault closest before it, described (`describeFault`), when known. */
  readonly fault?: string;
  readonly message: string;
}

export type OracleName =
  | 'convergence'
  | 'quiescence'
  | 'end-state'
  | 'concurrent-reconcile'
  | 'finalizer'
  | 'lost-update'
  | 'invariant'
  | 'operator-error'
  | 'differential';
