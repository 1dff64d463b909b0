/**
 * controller: reconcile loops. Sources (informer handlers) map events to keys, a rate-limited
 * workqueue hands each key to one worker at a time, and the reconciler's outcome decides what
 * happens next (done, requeue after, backoff, or terminal).
 */
export {
  Controller,
  ReconcileTimeoutError,
  DEFAULT_MAX_CONCURRENT_RECONCILES,
  DEFAULT_GRACEFUL_SHUTDOWN_MS,
  DEFAULT_RECONCILE_TIMEOUT_MS,
  DEFAULT_CONTROLLER_TRACING,
} from './controller.js';
export { objectRequestCodec } from './controller.js';
export type { ControllerOptions, ReconcileObserver, ReconcileRecord, RequestCodec } from './controller.js';
export type { ReconcileOutcomeLabel } from './controller-metrics.js';
export type { ReconcileTrigger } from './reconcile-tracing.js';
export type {
  Reconciler,
  ReconcileRequest,
  ReconcileContext,
  ReconcileFunction,
  ObjectReconciler,
  ObjectReconcileContext,
  ObjectReconcileFunction,
} from './reconciler.js';
export type { ClusterView } from '../cluster/cluster-view.js';
export { done, requeueAfter } from './result.js';
export type { Result } from './result.js';
export { TerminalError, isTerminalError } from './terminal-error.js';
export {
  generationChanged,
  labelsChanged,
  annotationsChanged,
  resourceVersionChanged,
  finalizersOrDeletionChanged,
  and,
  or,
  not,
  DEFAULT_PRIMARY_PREDICATE,
} from './predicates.js';
export type { Predicate, ObjectEvent } from './predicates.js';
export { enqueueHandler, mapToSelf, mapToControllingOwner } from './enqueue-handlers.js';
export type { KeySink, MapFunction, OwnerKind, SyncEventHandler } from './enqueue-handlers.js';
export {
  EventRecorder,
  DEFAULT_EVENT_BURST,
  DEFAULT_EVENT_REFILL_MS,
  DEFAULT_EVENT_QUEUE_LIMIT,
  DEFAULT_EVENT_CACHE_SIZE,
  DEFAULT_EVENT_API,
} from './event-recorder.js';
export type { EventRecorderOptions, EventType, RecordedEvent, EventApi } from './event-recorder.js';
export type { HistoryTrigger } from './reconcile-trigger.js';
