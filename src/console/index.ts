/** console: an opt-in, read-only operator console (page + JSON) served by the manager. */
export {
  ConsoleState,
  DEFAULT_RECENT_RECONCILES,
  DEFAULT_RECENT_EVENTS,
  DEFAULT_MAX_FAILING_KEYS,
  DEFAULT_LIST_LIMIT,
} from './console-state.js';
export type {
  ConsoleStateOptions,
  ConsoleSnapshot,
  InformerSnapshot,
  ClusterSnapshot,
  ClusterHealthView,
  EventSnapshot,
  LeaderView,
} from './console-state.js';
export {
  ConsoleServer,
  DEFAULT_CONSOLE_PORT,
  DEFAULT_CONSOLE_HOST,
  DEFAULT_CONSOLE_SNAPSHOT_MAX_AGE_MS,
} from './console-server.js';
export type { ConsoleServerOptions } from './console-server.js';
export type { ControllerSnapshot, RecentReconcile, FailingKey, ReconcileResult } from './controller-view.js';
export { DEFAULT_BUCKET_MS, DEFAULT_WINDOW_MS, DEFAULT_SUMMARY_MS } from './reconcile-window.js';
export type { WindowPoint, WindowSummary } from './reconcile-window.js';
export { redactMessage } from './redact-message.js';
export type { ConsoleOptions } from './console-options.js';
export {
  ObjectHistory,
  DEFAULT_HISTORY_RECONCILES_PER_OBJECT,
  DEFAULT_HISTORY_MAX_OBJECTS,
  DEFAULT_HISTORY_MAX_BYTES,
} from './object-history.js';
export type { ObjectHistoryOptions, HistoryReconcile, ObjectTimeline, ObjectHistoryStats } from './object-history.js';
export { DEFAULT_MAX_WRITES_PER_RECONCILE } from './reconcile-writes.js';
export type { ObjectWrite } from './reconcile-writes.js';
export type { TimelineSource } from './console-server.js';
