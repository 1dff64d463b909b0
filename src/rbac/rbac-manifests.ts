/**
 * RBAC objects for an operator's ServiceAccount, from what its manager declares: a ClusterRole
 * and ClusterRoleBinding for cluster-wide needs (all of them for a cluster-wide manager; only
 * cluster-scoped resources for a namespaced one), a Role and RoleBinding in each namespace with
 * namespaced needs (each of a namespaced manager's namespaces, and namespaces a requirement pins,
 * such as leader election's), and, when the manager serves secure metrics, an unbound
 * `<name>-metrics-reader` ClusterRole to bind to scrapers. All named `options.name`.
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding } from 'kubernetes-types/rbac/v1.js';
import { InvalidOptionError } from '../core/errors.js';
import type { PermissionSource } from './permission.js';
import { placeRules } from './policy-rules.js';

export interface RbacManifestsOptions {
  /** Name of every Role, ClusterRole and binding (a DNS subdomain, e.g. `database-operator`). */
  readonly name: string;
  /** The operator's ServiceAccount, bound to the roles. */
  readonly serviceAccount: { readonly name: string; readonly namespace: string };
  /** Labels put on every object. @defaultValue none */
  readonly labels?: Readonly<Record<string, string>>;
}

type Named<T> = T & {
  apiVersion: 'rbac.authorization.k8s.io/v1';
  kind: string;
  metadata: { name: string; namespace?: string };
};
/** One generated object, ready to serialize. */
export type RbacManifest = Named<ClusterRole> | Named<ClusterRoleBinding> | Named<Role> | Named<RoleBinding>;

const API_VERSION = 'rbac.authorization.k8s.io/v1';
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function rbacManifests(source: PermissionSource, options: RbacManifestsOptions): RbacManifest[] {
  const { name, serviceAccount } = options;
  if (!DNS_SUBDOMAIN.test(name) || name.length > 253)
    throw new InvalidOptionError(
      'name',
      `${JSON.stringify(name)} is not a DNS subdomain (lower-case letters, digits, '-', '.')`,
    );
  if (!DNS_SUBDOMAIN.test(serviceAccount.name))
    throw new InvalidOptionError(
      'serviceAccount.name',
      `${JSON.stringify(serviceAccount.name)} is not a DNS subdomain`,
    );
  if (!DNS_LABEL.test(serviceAccount.namespace))
    throw new InvalidOptionError(
      'serviceAccount.namespace',
      `${JSON.stringify(serviceAccount.namespace)} is not a DNS label`,
    );
  const placed = placeRules(source.permissions(), { namespaces: source.namespaces });
  const labels = options.labels && Object.keys(options.labels).length > 0 ? { labels: { ...options.labels } } : {};
  const subjects = [{ kind: 'ServiceAccount', name: serviceAccount.name, namespace: serviceAccount.namespace }];
  const rules = (from: readonly PolicyRule[]): PolicyRule[] => from.map((r) => structuredClone(r));
  const out: RbacManifest[] = [];
  if (placed.cluster.length > 0) {
    out.push({
      apiVersion: API_VERSION,
      kind: 'ClusterRole',
      metadata: { name, ...labels },
      rules: rules(placed.cluster),
    });
    out.push({
      apiVersion: API_VERSION,
      kind: 'ClusterRoleBinding',
      metadata: { name, ...labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    });
  }
  for (const [namespace, namespaceRules] of placed.namespaced) {
    out.push({
      apiVersion: API_VERSION,
      kind: 'Role',
      metadata: { name, namespace, ...labels },
      rules: rules(namespaceRules),
    });
    out.push({
      apiVersion: API_VERSION,
      kind: 'RoleBinding',
      metadata: { name, namespace, ...labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects,
    });
  }
  if (source.secureMetricsEnabled) {
    out.push({
      apiVersion: API_VERSION,
      kind: 'ClusterRole',
      metadata: { name: `${name}-metrics-reader`, ...labels },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
  }
  return out;
}
