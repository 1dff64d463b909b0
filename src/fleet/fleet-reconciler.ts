/** What a fleet controller's reconciler is given: the request's cluster and typed access to its object. */
import type { Client } from '../client/contracts.js';
import type { ReconcileContext } from '../controller/reconciler.js';
import type { Result } from '../controller/result.js';
import type { FleetRequest } from './fleet-request.js';

/** What a reconcile (or a host controller, through `manager.fleet`) sees of one engaged member cluster. */
export interface ClusterView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Reads from this cluster's cache (read-your-own-writes as the manager's client), writes to its API server. */
  readonly client: Client;
  /** This cluster's API client itself: reads that must not come from the cache. */
  readonly apiClient: Client;
  /** True once every informer of the cluster has synced since it was engaged. */
  readonly synced: boolean;
}

export interface FleetReconcileContext<T> extends ReconcileContext {
  /** The member cluster of the request; `log` is bound with its name as `cluster`. */
  readonly cluster: ClusterView;
  /** The primary object from this cluster's cache (waiting for its first sync), or undefined when it does not exist. */
  get(): Promise<T | undefined>;
}

export interface FleetReconciler<T> {
  reconcile(request: FleetRequest, context: FleetReconcileContext<T>): Promise<Result | void>;
}

export type FleetReconcileFunction<T> = (
  request: FleetRequest,
  context: FleetReconcileContext<T>,
) => Promise<Result | void>;
