/**
 * Requirements → RBAC rules: each requirement resolved to its resource, placed cluster-wide or in
 * namespaces, and merged so the output is minimal and deterministic: one rule per resource (its
 * verbs in canonical order), plus one per set of resource names for verbs restricted by name; a
 * grant already given more widely is dropped; rules sorted by API group, then resource.
 */
import type { PolicyRule } from 'kubernetes-types/rbac/v1.js';
import { InvalidArgumentError } from '../core/errors.js';
import { RBAC_VERBS, type PermissionRequirement, type RbacVerb } from './permission.js';
import { resolveResource } from './resolve-resource.js';

export type { PolicyRule };

/** Rules for a ClusterRole, and for a Role in each namespace that needs one. */
export interface PlacedRules {
  readonly cluster: readonly PolicyRule[];
  /** Sorted by namespace. */
  readonly namespaced: ReadonlyMap<string, readonly PolicyRule[]>;
}

export interface PlaceRulesOptions {
  /** The manager's namespaces: its namespaced needs get a Role in each. Cluster-wide when empty or omitted. */
  readonly namespaces?: readonly string[] | undefined;
}

/** Names allowed per verb of one resource: every object (`ALL`), or these names. */
type Grants = Map<string, Map<RbacVerb, Set<string> | typeof ALL>>;
const ALL = 'all' as const;
/** RBAC matches names against the request's object name; these requests carry none. */
const UNNAMEABLE_VERBS: ReadonlySet<RbacVerb> = new Set(['create', 'deletecollection']);

export function placeRules(
  requirements: readonly PermissionRequirement[],
  options: PlaceRulesOptions = {},
): PlacedRules {
  const namespaces = [...new Set(options.namespaces ?? [])];
  const cluster: Grants = new Map();
  const byNamespace = new Map<string, Grants>();
  const into = (namespace: string): Grants => {
    let grants = byNamespace.get(namespace);
    if (!grants) byNamespace.set(namespace, (grants = new Map()));
    return grants;
  };
  for (const requirement of requirements) {
    validate(requirement);
    const resolved = resolveResource(requirement.resource);
    const resource = requirement.subresource ? `${resolved.resource}/${requirement.subresource}` : resolved.resource;
    const key = `${resolved.group}\0${resource}`;
    const targets = !resolved.namespaced
      ? [cluster]
      : requirement.namespace
        ? [into(requirement.namespace)]
        : namespaces.length > 0
          ? namespaces.map(into)
          : [cluster];
    for (const grants of targets) grant(grants, key, requirement.verbs, requirement.resourceNames);
  }
  const namespaced = new Map<string, readonly PolicyRule[]>();
  for (const namespace of [...byNamespace.keys()].sort()) {
    const rules = toRules(withoutCovered(byNamespace.get(namespace)!, cluster));
    if (rules.length > 0) namespaced.set(namespace, rules);
  }
  return { cluster: toRules(cluster), namespaced };
}

function validate(requirement: PermissionRequirement): void {
  const what = `permission for ${requirement.resource.kind} (${requirement.reason})`;
  if (requirement.verbs.length === 0) throw new InvalidArgumentError(`${what}: no verbs`);
  for (const verb of requirement.verbs) {
    if (!RBAC_VERBS.includes(verb))
      throw new InvalidArgumentError(`${what}: unknown verb ${JSON.stringify(verb)} (one of ${RBAC_VERBS.join(', ')})`);
  }
  if (requirement.subresource !== undefined && !/^[a-z][a-z0-9]*$/.test(requirement.subresource)) {
    throw new InvalidArgumentError(
      `${what}: subresource ${JSON.stringify(requirement.subresource)} is not a resource name like "status"`,
    );
  }
  if (requirement.namespace !== undefined && requirement.namespace === '')
    throw new InvalidArgumentError(`${what}: empty namespace`);
  if (requirement.resourceNames !== undefined) {
    if (requirement.resourceNames.length === 0 || requirement.resourceNames.some((n) => !n))
      throw new InvalidArgumentError(`${what}: resourceNames must be non-empty names`);
    const unnameable = requirement.verbs.filter((v) => UNNAMEABLE_VERBS.has(v));
    if (unnameable.length > 0)
      throw new InvalidArgumentError(
        `${what}: RBAC cannot restrict ${unnameable.join(', ')} by resource name; declare those verbs without resourceNames`,
      );
  }
}

function grant(grants: Grants, key: string, verbs: readonly RbacVerb[], names: readonly string[] | undefined): void {
  let byVerb = grants.get(key);
  if (!byVerb) grants.set(key, (byVerb = new Map()));
  for (const verb of verbs) {
    const had = byVerb.get(verb);
    if (had === ALL) continue;
    if (!names) byVerb.set(verb, ALL);
    else byVerb.set(verb, new Set([...(had ?? []), ...names]));
  }
}

/** `grants` minus what `wider` (the ClusterRole) already allows. */
function withoutCovered(grants: Grants, wider: Grants): Grants {
  const out: Grants = new Map();
  for (const [key, byVerb] of grants) {
    const outer = wider.get(key);
    const kept = new Map<RbacVerb, Set<string> | typeof ALL>();
    for (const [verb, names] of byVerb) {
      const covered = outer?.get(verb);
      if (covered === ALL) continue;
      if (names === ALL || !covered) kept.set(verb, names);
      else {
        const rest = new Set([...names].filter((n) => !covered.has(n)));
        if (rest.size > 0) kept.set(verb, rest);
      }
    }
    if (kept.size > 0) out.set(key, kept);
  }
  return out;
}

function toRules(grants: Grants): PolicyRule[] {
  const rules: PolicyRule[] = [];
  const keys = [...grants.keys()].sort((a, b) => compare(a.split('\0'), b.split('\0')));
  for (const key of keys) {
    const [group, resource] = key.split('\0') as [string, string];
    const byVerb = grants.get(key)!;
    const everyObject = sortVerbs([...byVerb].filter(([, names]) => names === ALL).map(([verb]) => verb));
    if (everyObject.length > 0) rules.push({ apiGroups: [group], resources: [resource], verbs: everyObject });
    // Verbs restricted to the same names share a rule.
    const byNames = new Map<string, RbacVerb[]>();
    for (const [verb, names] of byVerb) {
      if (names === ALL) continue;
      const id = JSON.stringify([...names].sort());
      byNames.set(id, [...(byNames.get(id) ?? []), verb]);
    }
    const nameSets = [...byNames.keys()].sort((x, y) => compare(JSON.parse(x) as string[], JSON.parse(y) as string[]));
    for (const id of nameSets) {
      rules.push({
        apiGroups: [group],
        resources: [resource],
        resourceNames: JSON.parse(id) as string[],
        verbs: sortVerbs(byNames.get(id)!),
      });
    }
  }
  return rules;
}

function sortVerbs(verbs: readonly RbacVerb[]): RbacVerb[] {
  return [...verbs].sort((a, b) => RBAC_VERBS.indexOf(a) - RBAC_VERBS.indexOf(b));
}

function compare(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}
