/**
 * A kind's RBAC address (API group, plural resource, scope) without an API server: from the kind
 * itself when it carries `plural` and `scope` (kinds made by `defineCustomKind`), else from the
 * built-in table.
 */
import type { ResourceType } from '../client/discovery.js';
import { OperatorRuntimeError } from '../core/errors.js';
import { parseApiVersion } from '../core/object-key.js';
import { BUILTIN_RESOURCES } from './builtin-resources.js';

export interface ResolvedResource {
  readonly group: string;
  readonly resource: string;
  readonly namespaced: boolean;
}

/** A kind that names its own resource, as custom kinds do. */
interface SelfDescribingKind extends ResourceType {
  readonly plural?: unknown;
  readonly scope?: unknown;
}

/** Neither the kind nor the built-in table says what resource a kind is. */
export class UnknownResourceError extends OperatorRuntimeError {
  declare readonly code: 'ERR_UNKNOWN_RESOURCE';
  readonly apiVersion: string;
  readonly kind: string;

  constructor(apiVersion: string, kind: string) {
    super(
      'ERR_UNKNOWN_RESOURCE',
      `no resource name for kind ${kind} in ${apiVersion}: define it with defineCustomKind (operator-runtime/crd), or give the kind plural and scope ({ apiVersion, kind, plural: '…', scope: 'Namespaced' | 'Cluster' })`,
    );
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}

export function resolveResource(type: ResourceType): ResolvedResource {
  const { group } = parseApiVersion(type.apiVersion);
  const own = type as SelfDescribingKind;
  if (typeof own.plural === 'string' && own.plural && (own.scope === 'Namespaced' || own.scope === 'Cluster')) {
    return { group, resource: own.plural, namespaced: own.scope === 'Namespaced' };
  }
  const builtin = BUILTIN_RESOURCES.get(`${group}/${type.kind}`);
  if (!builtin) throw new UnknownResourceError(type.apiVersion, type.kind);
  return { group, ...builtin };
}
