/**
 * Schemas of Kubernetes built-in types (PodTemplateSpec, JobTemplateSpec, Container,
 * ObjectReference…) to embed in a custom kind, typed as kubernetes-types types. They are not
 * written by hand: scripts/generate-builtin-schemas.ts converts Kubernetes' own OpenAPI
 * definitions (the version is BUILTIN_SCHEMAS_KUBERNETES_VERSION) to structural CRD schemas and
 * vendors them in builtin-schemas.generated.ts; here the references between them are inlined.
 */
import type { TSchemaOptions, TUnsafe } from 'typebox';
import { Type } from './typebox.js';
import type { JobSpec, JobTemplateSpec } from 'kubernetes-types/batch/v1.js';
import type {
  Container,
  EnvVar,
  LocalObjectReference,
  ObjectReference,
  PodSpec,
  PodTemplateSpec,
  ResourceRequirements,
  Toleration,
  Volume,
} from 'kubernetes-types/core/v1.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { InvalidOptionError } from '../core/errors.js';
import { BUILTIN_DEFINITIONS } from './builtin-schemas.generated.js';

export { BUILTIN_SCHEMAS_KUBERNETES_VERSION } from './builtin-schemas.generated.js';

/** The built-in types that can be embedded, by OpenAPI name, with their TypeScript types. */
export interface BuiltinTypes {
  'io.k8s.api.core.v1.PodTemplateSpec': PodTemplateSpec;
  'io.k8s.api.core.v1.PodSpec': PodSpec;
  'io.k8s.api.core.v1.Container': Container;
  'io.k8s.api.core.v1.ObjectReference': ObjectReference;
  'io.k8s.api.core.v1.LocalObjectReference': LocalObjectReference;
  'io.k8s.api.core.v1.ResourceRequirements': ResourceRequirements;
  'io.k8s.api.core.v1.EnvVar': EnvVar;
  'io.k8s.api.core.v1.Volume': Volume;
  'io.k8s.api.core.v1.Toleration': Toleration;
  /** batch/v1beta1's in Kubernetes 1.20 (batch/v1 has it from 1.21); the same fields. */
  'io.k8s.api.batch.v1beta1.JobTemplateSpec': JobTemplateSpec;
  'io.k8s.api.batch.v1.JobSpec': JobSpec;
  'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector': LabelSelector;
}

export type BuiltinName = keyof BuiltinTypes;

/**
 * The schema of the built-in type `name`, as a CRD embeds it (controller-gen's form): its fields
 * are validated and pruned by the API server like the built-in's own, within the limits stated in
 * docs/custom-kinds.md. `options` (a description, …) apply to the field.
 * @throws InvalidOptionError for a name that is not vendored
 */
export function builtinSchema<N extends BuiltinName>(name: N, options?: TSchemaOptions): TUnsafe<BuiltinTypes[N]> {
  if (!(name in BUILTIN_DEFINITIONS))
    throw new InvalidOptionError('name', `${JSON.stringify(name)} is not a vendored built-in type (see BuiltinTypes)`);
  return Type.Unsafe<BuiltinTypes[N]>({ ...inlined(name, []), ...options });
}

function inlined(name: string, stack: readonly string[]): Record<string, unknown> {
  if (stack.includes(name))
    throw new InvalidOptionError(
      'name',
      `built-in type ${name} is recursive (${[...stack, name].join(' → ')}); a CRD schema cannot embed it`,
    );
  const def = BUILTIN_DEFINITIONS[name];
  if (def === undefined)
    throw new InvalidOptionError(
      'name',
      `built-in definition ${name} is missing from builtin-schemas.generated.ts; regenerate it`,
    );
  return resolve(def, [...stack, name]) as Record<string, unknown>;
}

function resolve(node: unknown, stack: readonly string[]): unknown {
  if (Array.isArray(node)) return node.map((n) => resolve(n, stack));
  if (typeof node !== 'object' || node === null) return node;
  const record = node as Record<string, unknown>;
  if (typeof record.$ref === 'string') return inlined(record.$ref, stack);
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) => [
      k,
      k === 'enum' || k === 'default' ? structuredClone(v) : resolve(v, stack),
    ]),
  );
}
