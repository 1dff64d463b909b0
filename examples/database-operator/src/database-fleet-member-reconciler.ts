/**
 * The Database reconciler over a fleet: one operator reconciles the Databases of every member
 * cluster. It is the single-cluster `DatabaseReconciler`, not a copy: each member gets its own
 * instance bound to that member's cache-backed client (`ctx.cluster.client`, where the fleet
 * controller's `.owns(...)` informers run) and to an Event recorder writing into that member, so
 * a Database's Secret, StatefulSet, status and Events all land in the cluster the Database is in.
 */
import type { Client, ClusterView, ObjectReconcileContext, ReconcileRequest, Result } from 'operator-runtime';
import type { Database } from './database.js';
import { DatabaseReconciler, type DatabaseEventSink, type DatabaseReconcilerOptions } from './database-reconciler.js';

/** What the reconciler needs of a reconcile's cluster (`ctx.cluster`, a `ClusterView`, is one). */
export type MemberClusterRef = Pick<ClusterView, 'name' | 'client'>;

/** A fleet controller's context for a Database: the one context type every controller gets. */
export type MemberReconcileContext = ObjectReconcileContext<Database>;

/** A fleet controller's request: the key and its member cluster. */
export interface MemberReconcileRequest extends ReconcileRequest {
  readonly cluster: string;
}

export interface FleetDatabaseReconcilerOptions extends Omit<DatabaseReconcilerOptions, 'client' | 'recorder'> {
  /** The Event recorder for a member (called once per member client). */
  recorderFor(cluster: MemberClusterRef): DatabaseEventSink;
}

export class FleetDatabaseReconciler {
  // By client, not name: a member that rejoins (a rotated kubeconfig) comes with a new client,
  // and the old instance goes with the old client.
  private readonly byClient = new WeakMap<Client, DatabaseReconciler>();

  constructor(private readonly options: FleetDatabaseReconcilerOptions) {}

  reconcile(request: MemberReconcileRequest, ctx: MemberReconcileContext): Promise<Result | void> {
    return this.reconcilerFor(ctx.cluster).reconcile(request, ctx);
  }

  private reconcilerFor(cluster: MemberClusterRef): DatabaseReconciler {
    let reconciler = this.byClient.get(cluster.client);
    if (!reconciler) {
      const { recorderFor, ...shared } = this.options;
      reconciler = new DatabaseReconciler({ ...shared, client: cluster.client, recorder: recorderFor(cluster) });
      this.byClient.set(cluster.client, reconciler);
    }
    return reconciler;
  }
}
