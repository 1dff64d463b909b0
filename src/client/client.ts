/**
 * `Client`: the interface every client implements — `KubeClient` (the API server), the fake client
 * in operator-runtime/testing (in memory) and the manager's cache-backed delegating client. It is
 * composed from the role interfaces in `contracts.ts`; code that needs less asks for a role.
 */
export type {
  Client,
  Reader,
  Getter,
  PageLister,
  Writer,
  Creator,
  Updater,
  Patcher,
  Applier,
  Deleter,
  StatusWriter,
  StatusPatchOptions,
  ObjectWatcher,
  WatchListCapable,
  ListWatchClient,
  RestMapper,
} from './contracts.js';
