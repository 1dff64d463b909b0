import type { KubeClient } from './kube-client.js';

/**
 * The client interface every implementation provides: `KubeClient` (the API server) and the fake
 * client in operator-runtime/testing (in memory). Code above the client module (cache, controllers,
 * leader election, helpers, operators) depends on this type, not on the class, so a test can pass
 * either. One conformance suite holds both to the same behaviour.
 */
export type Client = Pick<
  KubeClient,
  | 'get'
  | 'listPage'
  | 'listPages'
  | 'list'
  | 'create'
  | 'update'
  | 'updateStatus'
  | 'patch'
  | 'patchStatus'
  | 'apply'
  | 'applyStatus'
  | 'delete'
  | 'watch'
>;
