/**
 * The key sink a traced controller gives one source's handlers: each key goes into the queue with
 * its cause noted — the event, the kind and resourceVersion of the object it happened to, and the
 * fleet member it came from — for the span of the key's next reconcile.
 */
import type { KubeObject } from '../core/object-key.js';
import { objectKey } from '../core/object-key.js';
import type { Controller } from './controller.js';
import type { ControllerSource } from './controller-description.js';
import type { ControllerCluster } from './controller-host.js';
import type { KeySink } from './enqueue-handlers.js';
import type { ObjectEvent } from './predicates.js';
import type { ReconcileTrigger } from './reconcile-tracing.js';

export function tracedSink(
  controller: Controller,
  sink: KeySink,
  source: ControllerSource,
  cluster: ControllerCluster,
): KeySink {
  const type: ReconcileTrigger['type'] = source.declaredBy === 'owns' ? 'owner_change' : 'watch_event';
  const member = cluster.view.name || undefined;
  return {
    add(key, options, cause) {
      if (cause) controller.recordTrigger(cluster.keyPrefix + key, triggerOf(type, source.type.kind, cause, member));
      sink.add(key, options);
    },
  };
}

function triggerOf(
  type: ReconcileTrigger['type'],
  kind: string,
  event: ObjectEvent<KubeObject>,
  cluster: string | undefined,
): ReconcileTrigger {
  const meta = event.object.metadata;
  return {
    type,
    event: event.type,
    kind,
    object: objectKey({ namespace: meta?.namespace, name: meta?.name ?? '' }),
    ...(meta?.resourceVersion !== undefined && { resourceVersion: meta.resourceVersion }),
    ...(cluster !== undefined && { cluster }),
  };
}
