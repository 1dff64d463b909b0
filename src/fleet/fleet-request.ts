/**
 * A fleet controller's request: a key plus the member cluster it lives in (multicluster-runtime's
 * `mcreconcile.Request`). Its queue key is `cluster/namespace/name` (`cluster/name` for a
 * cluster-scoped object): cluster names are DNS labels, so the first `/` ends the cluster.
 */
import { objectKey, parseObjectKey } from '../core/object-key.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { ReconcileRequest } from '../controller/reconciler.js';

export interface FleetRequest extends ReconcileRequest {
  /** The member cluster's name (`MemberCluster.name`). */
  readonly cluster: string;
}

/** The queue key of a fleet request. */
export function fleetKey(request: FleetRequest): string {
  return `${request.cluster}/${objectKey(request)}`;
}

/** The cluster part of a fleet key (what the fair queue groups by). */
export function clusterOfKey(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

/** The request a fleet key names; throws `InvalidArgumentError` for a key without a cluster. */
export function parseFleetKey(key: string): FleetRequest {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1)
    throw new InvalidArgumentError(`fleet key ${JSON.stringify(key)} is not cluster/namespace/name or cluster/name`);
  return { cluster: key.slice(0, slash), ...parseObjectKey(key.slice(slash + 1)) };
}
