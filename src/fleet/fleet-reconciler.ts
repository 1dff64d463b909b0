/**
 * What a fleet controller's reconciler is given: the request's cluster and typed access to its
 * object — the one context every controller built with `.for(kind)` gets, with a request that always
 * names its cluster.
 */
import type { ObjectReconcileContext, ObjectReconcileFunction, ObjectReconciler } from '../controller/reconciler.js';
import type { FleetRequest } from './fleet-request.js';

export type { ClusterView } from '../cluster/cluster-view.js';

/** The context of a fleet controller's reconcile: `ObjectReconcileContext`, whose `cluster` is the request's member. */
export type FleetReconcileContext<T> = ObjectReconcileContext<T>;

export type FleetReconciler<T> = ObjectReconciler<T, FleetRequest>;

export type FleetReconcileFunction<T> = ObjectReconcileFunction<T, FleetRequest>;
