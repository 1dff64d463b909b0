/**
 * The Kubernetes API conventions kube-api-linter checks on Go API types, checked on a custom kind's
 * CRD schema instead: what `defineCustomKind` builds is what the API server gets, so the checks read
 * the generated structural schema (one per version) and name each finding by its schema path
 * (`.status.conditions[*].reason`). docs/lint.md has each check with the rule it comes from.
 */
import { isDeepStrictEqual } from 'node:util';
import type { AnyCustomKind } from './custom-kind.js';
import { builtinSchema, type BuiltinName } from './builtin-schemas.js';
import { customResourceDefinition } from './custom-resource-definition.js';
import type { JSONSchemaProps } from './schema-props.js';
import { toStructuralSchema } from './structural-schema.js';

/** The checks, by the name a finding and an allowance use. */
export const KIND_CONVENTION_CHECKS = [
  'conditions',
  'status-subresource',
  'no-floats',
  'max-length',
  'optional-or-required',
  'enum-pascal-case',
] as const;
export type KindConventionCheck = (typeof KIND_CONVENTION_CHECKS)[number];

/** A naming convention with documented exceptions warns; the rest are errors. */
const SEVERITY: Record<KindConventionCheck, 'error' | 'warning'> = {
  conditions: 'error',
  'status-subresource': 'error',
  'no-floats': 'error',
  'max-length': 'error',
  'optional-or-required': 'error',
  'enum-pascal-case': 'warning',
};

export interface KindConventionFinding {
  readonly check: KindConventionCheck;
  readonly severity: 'error' | 'warning';
  /** The kind's name, e.g. `Database`. */
  readonly kind: string;
  /** `<group>/<version>`, e.g. `example.com/v1`. */
  readonly apiVersion: string;
  /** The schema path from the object's root, e.g. `.spec.engine`; `` for the version itself. */
  readonly path: string;
  readonly message: string;
}

/** A finding the project accepts on purpose, with its reason (e.g. enum values that are command names). */
export interface KindConventionAllowance {
  readonly check: KindConventionCheck;
  /** The kind's name; every kind when left out. */
  readonly kind?: string;
  /** The schema path as findings print it (`.spec.engine`); every version's. */
  readonly path: string;
  /** Why the convention does not apply: required, so the exception explains itself to a reviewer. */
  readonly reason: string;
}

/** String formats whose length the CEL cost estimator bounds itself (apiserver's schema cost model). */
const BOUNDED_FORMATS = new Set(['date-time', 'date', 'duration']);

/** metav1.Condition's required fields, as `k8s.condition()` writes them. */
const CONDITION_REQUIRED = ['type', 'status', 'lastTransitionTime', 'reason', 'message'];

/** Kubernetes' "Constants" convention: CamelCase with an initial uppercase letter (`ClusterFirst`, `ClientIP`). */
const PASCAL_CASE = /^[A-Z][A-Za-z0-9]*$/;

type Found = Omit<KindConventionFinding, 'kind' | 'apiVersion' | 'severity'>;

let builtinForms: readonly JSONSchemaProps[] | undefined;

/** Kubernetes' own types embedded with `k8s.builtin(…)`: theirs to bound, not the project's. */
function isBuiltin(node: JSONSchemaProps): boolean {
  builtinForms ??= BUILTIN_NAMES.map((name) => withoutDescription(toStructuralSchema(builtinSchema(name), name)));
  if (node.properties === undefined) return false;
  const keys = Object.keys(node.properties).sort().join();
  return builtinForms.some(
    (b) =>
      Object.keys(b.properties ?? {})
        .sort()
        .join() === keys && isDeepStrictEqual(b, withoutDescription(node)),
  );
}

const BUILTIN_NAMES: readonly BuiltinName[] = [
  'io.k8s.api.core.v1.PodTemplateSpec',
  'io.k8s.api.core.v1.PodSpec',
  'io.k8s.api.core.v1.Container',
  'io.k8s.api.core.v1.ObjectReference',
  'io.k8s.api.core.v1.LocalObjectReference',
  'io.k8s.api.core.v1.ResourceRequirements',
  'io.k8s.api.core.v1.EnvVar',
  'io.k8s.api.core.v1.Volume',
  'io.k8s.api.core.v1.Toleration',
  'io.k8s.api.batch.v1beta1.JobTemplateSpec',
  'io.k8s.api.batch.v1.JobSpec',
  'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
];

function withoutDescription(node: JSONSchemaProps): JSONSchemaProps {
  const { description: _description, ...rest } = node;
  return rest;
}

/** The conventions a field's own schema breaks: floats, unbounded strings and lists, enum casing, a default on a required field. */
function checkNode(node: JSONSchemaProps, path: string, out: Found[]): void {
  if (node.type === 'number')
    out.push({
      check: 'no-floats',
      path,
      message:
        'a floating-point field: it does not round-trip exactly between languages and encodings; use an integer with the unit in its name (`cpuMillis`), or a string quantity',
    });
  if (
    node.type === 'string' &&
    node.maxLength === undefined &&
    node.enum === undefined &&
    !BOUNDED_FORMATS.has(node.format ?? '')
  )
    out.push({
      check: 'max-length',
      path,
      message:
        'a string without maxLength: any size is stored, and CEL rules on it are costed at the request size limit; add `maxLength`',
    });
  if (node.type === 'array' && node.maxItems === undefined)
    out.push({
      check: 'max-length',
      path,
      message:
        'a list without maxItems: any number of items is stored, and CEL rules over it are costed for the largest request; add `maxItems`',
    });
  for (const value of node.enum ?? [])
    if (typeof value === 'string' && !PASCAL_CASE.test(value))
      out.push({
        check: 'enum-pascal-case',
        path,
        message: `enum value ${JSON.stringify(value)} is not PascalCase (Kubernetes constants are CamelCase with an initial capital: \`ClusterFirst\`, \`ClientIP\`); allow it in the project config if it is a command or proper name`,
      });
  if (node.type === 'array' && node.items?.type === 'object' && node.items.properties && !node.items.required?.length)
    out.push({
      check: 'optional-or-required',
      path,
      message:
        'a list of objects whose items have no required field: an item can be `{}`, and items cannot be told apart; make the field that identifies an item required',
    });
  for (const field of node.required ?? [])
    if (node.properties?.[field]?.default !== undefined)
      out.push({
        check: 'optional-or-required',
        path: `${path}.${field}`,
        message:
          'a required field with a default: the default never applies (a create without the field is refused); make it optional (`Type.Optional`) or drop the default',
      });
}

function walk(node: JSONSchemaProps, path: string, out: Found[]): void {
  // Free-form and embedded values have no schema of their own to check; built-ins are Kubernetes'.
  if (node['x-kubernetes-int-or-string'] || node['x-kubernetes-embedded-resource'] || isBuiltin(node)) return;
  checkNode(node, path, out);
  for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${path}.${name}`, out);
  if (node.items) walk(node.items, `${path}[*]`, out);
  if (node.additionalProperties) walk(node.additionalProperties, `${path}.*`, out);
}

/** `status.conditions` as `k8s.conditions()` writes it: metav1.Condition items, a list map keyed by `type`. */
function checkConditions(conditions: JSONSchemaProps, path: string, out: Found[]): void {
  const problems: string[] = [];
  if (conditions.type !== 'array') problems.push('it is not a list');
  else {
    if (
      conditions['x-kubernetes-list-type'] !== 'map' ||
      !isDeepStrictEqual(conditions['x-kubernetes-list-map-keys'], ['type'])
    )
      problems.push('it is not a list map keyed by `type` (server-side apply would replace other writers’ conditions)');
    const item = conditions.items;
    const fields = item?.properties ?? {};
    const missing = CONDITION_REQUIRED.filter((f) => fields[f] === undefined || !item?.required?.includes(f));
    if (missing.length > 0) problems.push(`its items lack the required ${missing.map((f) => `\`${f}\``).join(', ')}`);
    const status = fields.status?.enum;
    if (status && !isDeepStrictEqual([...status].sort(), ['False', 'True', 'Unknown']))
      problems.push('its `status` is not one of True, False, Unknown');
    if (fields.lastTransitionTime && fields.lastTransitionTime.format !== 'date-time')
      problems.push('its `lastTransitionTime` is not a date-time');
    if (fields.observedGeneration && fields.observedGeneration.type !== 'integer')
      problems.push('its `observedGeneration` is not an integer');
  }
  if (problems.length > 0)
    out.push({
      check: 'conditions',
      path,
      message: `conditions not in the standard shape: ${problems.join('; ')}; use \`k8s.conditions()\` (metav1.Condition, listMap(['type']))`,
    });
}

/** Findings on one kind, every version; without the ones `allow` accepts. */
export function kindConventionFindings(
  kind: AnyCustomKind,
  allow: readonly KindConventionAllowance[] = [],
): KindConventionFinding[] {
  const crd = customResourceDefinition(kind);
  const findings: KindConventionFinding[] = [];
  for (const version of crd.spec.versions) {
    const root = version.schema.openAPIV3Schema;
    const found: Found[] = [];
    const status = root.properties?.status;
    const hasSubresource = version.subresources?.status !== undefined;
    if (status && !hasSubresource)
      found.push({
        check: 'status-subresource',
        path: '.status',
        message:
          'a status without the status subresource: every write of the object can change its status, and status writes bump the generation; add `subresources: { status: {} }`',
      });
    if (!status && hasSubresource)
      found.push({
        check: 'status-subresource',
        path: '',
        message: 'the status subresource is on, but the schema has no `status`',
      });
    for (const [name, field] of Object.entries(root.properties ?? {})) walk(field, `.${name}`, found);
    if (status) {
      for (const field of status.required ?? [])
        found.push({
          check: 'optional-or-required',
          path: `.status.${field}`,
          message:
            'a required status field: every status write must send it, and the object is valid before its first reconcile only without one; wrap it in `Type.Optional`',
        });
      const conditions = status.properties?.conditions;
      if (conditions) checkConditions(conditions, '.status.conditions', found);
    }
    for (const f of found) {
      const accepted = allow.some(
        (a) => a.check === f.check && a.path === f.path && (a.kind === undefined || a.kind === kind.kind),
      );
      if (!accepted)
        findings.push({
          ...f,
          kind: kind.kind,
          apiVersion: `${kind.group}/${version.name}`,
          severity: SEVERITY[f.check],
        });
    }
  }
  return findings;
}
