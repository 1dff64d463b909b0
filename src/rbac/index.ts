/**
 * rbac: RBAC generated from what an operator declares — controllers' `for`/`owns`/`watches`/`writes`,
 * the manager's event recorder, leader election and secure metrics — with no API server needed.
 * `rbacManifests(manager, { name, serviceAccount })` gives the Roles and bindings;
 * `offlineClient()` builds a manager for generation that never connects. See docs/rbac.md.
 */
export { rbacManifests } from './rbac-manifests.js';
export type { RbacManifest, RbacManifestsOptions } from './rbac-manifests.js';
export { placeRules } from './policy-rules.js';
export type { PlacedRules, PlaceRulesOptions, PolicyRule } from './policy-rules.js';
export { RBAC_VERBS } from './permission.js';
export type { PermissionRequirement, PermissionSource, RbacVerb, WriteVerb } from './permission.js';
export { UnknownResourceError } from './resolve-resource.js';
export { offlineClient, OfflineClientError } from './offline-client.js';
