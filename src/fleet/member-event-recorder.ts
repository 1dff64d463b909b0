/**
 * Events about objects in member clusters, written to the member the object lives in (its own API
 * server, where `kubectl describe` there shows them), and fed to the console with the cluster's
 * name. `manager.memberEventRecorder(component)` makes one and declares the member RBAC it needs.
 */
import type { Client } from '../client/contracts.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { EventRecorder, type RecordedEvent } from '../controller/event-recorder.js';
import type { ClusterView } from './fleet-reconciler.js';

export interface MemberEventRecorderOptions {
  /** `source.component` / `reportingComponent` of every Event. */
  readonly component: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Told about each event accepted for writing, with its `cluster` (the console's feed); must not throw. */
  readonly onRecorded?: (event: RecordedEvent) => void;
}

export class MemberEventRecorder {
  // Keyed by the member's API client: a rotated kubeconfig (a new engagement, a new client) gets a
  // fresh recorder, and one of a member that left goes with its client, with no hook to forget it.
  private readonly recorders = new WeakMap<Client, EventRecorder>();

  constructor(private readonly options: MemberEventRecorderOptions) {}

  /** The recorder for Events in `cluster` (a reconcile's `ctx.cluster`, or one of `manager.fleet.clusters()`). */
  in(cluster: Pick<ClusterView, 'name' | 'apiClient'>): EventRecorder {
    let recorder = this.recorders.get(cluster.apiClient);
    if (!recorder) {
      const { component, clock, logger, onRecorded } = this.options;
      recorder = new EventRecorder({
        client: cluster.apiClient,
        component,
        cluster: cluster.name,
        ...omitUndefined({ clock, onRecorded, logger: logger?.child({ cluster: cluster.name }) }),
      });
      this.recorders.set(cluster.apiClient, recorder);
    }
    return recorder;
  }
}
