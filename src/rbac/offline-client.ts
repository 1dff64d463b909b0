/**
 * A `Client` that never connects: for building a manager only to read what it declares (RBAC,
 * manifests), e.g. `createMyOperator({ client: offlineClient(), … })` in a generator. Building the
 * manager and registering controllers make no request; anything that would (starting the manager,
 * a read or write) fails with `OfflineClientError` instead of reaching a cluster.
 */
import type { Client, RestMapper } from '../client/contracts.js';
import { OperatorRuntimeError } from '../core/errors.js';

/** Something tried to talk to an API server through `offlineClient()`. */
export class OfflineClientError extends OperatorRuntimeError {
  declare readonly code: 'ERR_OFFLINE_CLIENT';

  constructor(operation: string) {
    super(
      'ERR_OFFLINE_CLIENT',
      `${operation}: this client never connects (offlineClient() is for generating manifests, not for running an operator)`,
    );
  }
}

export function offlineClient(): Client {
  const refuse = (operation: string) => (): Promise<never> => Promise.reject(new OfflineClientError(operation));
  const mapper: RestMapper = { mapping: refuse('mapping'), cached: () => undefined };
  return {
    mapper,
    get: refuse('get'),
    list: refuse('list'),
    listPage: refuse('listPage'),
    // eslint-disable-next-line require-yield -- refuses on the first next(), as a real list would fail
    listPages: async function* () {
      throw new OfflineClientError('listPages');
    },
    watch: () => ({
      [Symbol.asyncIterator]: () => ({ next: refuse('watch') }),
    }),
    create: refuse('create'),
    update: refuse('update'),
    patch: refuse('patch'),
    apply: refuse('apply'),
    delete: refuse('delete'),
    updateStatus: refuse('updateStatus'),
    patchStatus: refuse('patchStatus'),
    applyStatus: refuse('applyStatus'),
  };
}
