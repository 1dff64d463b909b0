/**
 * What an operator needs the API server to let it do, declared where the need arises (a
 * controller's `for`/`owns`/`watches`/`writes`, the manager's event recorder, leader election,
 * secure metrics) and turned into RBAC rules by `rbacManifests`.
 */
import type { ResourceType } from '../client/discovery.js';

/** Kubernetes API verbs, in the order generated rules list them. */
export const RBAC_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
export type RbacVerb = (typeof RBAC_VERBS)[number];

/** Verbs that change objects (what `ControllerBuilder.writes` declares). */
export type WriteVerb = Extract<RbacVerb, 'create' | 'update' | 'patch' | 'delete' | 'deletecollection'>;

/**
 * One need: these verbs on a kind's resource (or one of its subresources). Where: the manager's
 * scope (cluster-wide, or each of its `namespaces`) unless `namespace` pins it to one namespace;
 * a cluster-scoped resource is always cluster-wide.
 *
 * The kind's plural and scope come from the kind itself when it carries them (kinds made by
 * `defineCustomKind`, or any `{ apiVersion, kind, plural, scope }`), else from the built-in table.
 */
export interface PermissionRequirement {
  readonly resource: ResourceType;
  readonly verbs: readonly RbacVerb[];
  /** e.g. `status`, `finalizers`. */
  readonly subresource?: string;
  /** Only in this namespace (e.g. leader election's Lease). @defaultValue the manager's scope */
  readonly namespace?: string;
  /** Only objects with these names (RBAC cannot restrict `create`, `list`, `watch` or `deletecollection` by name). */
  readonly resourceNames?: readonly string[];
  /** Who needs it, for people reading `manager.permissions()` (e.g. `controller database: owns Secret`). */
  readonly reason: string;
}

/** Anything RBAC can be generated for: a `Manager`, or a test double. */
export interface PermissionSource {
  /** Every requirement declared so far. */
  permissions(): readonly PermissionRequirement[];
  /** The namespaces the source is restricted to; cluster-wide when undefined or empty. */
  readonly namespaces?: readonly string[] | undefined;
  /** Whether it serves /metrics only to authorized scrapers (a metrics-reader ClusterRole is then generated). */
  readonly secureMetricsEnabled?: boolean;
}
