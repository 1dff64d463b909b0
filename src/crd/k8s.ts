/**
 * `k8s.*`: the Kubernetes schema extensions, in TypeBox's style. Options helpers return an options
 * object to spread into a TypeBox call (`Type.Array(Port, k8s.listMap(['name']))`); type helpers
 * return a schema whose static type is what the API server stores (`k8s.intOrString()` is
 * `number | string`).
 */
import type {
  TArray,
  TInteger,
  TLiteral,
  TNull,
  TObject,
  TOptional,
  TSchema,
  TSchemaOptions,
  TString,
  TUnion,
  TUnsafe,
} from 'typebox';
import type { Container, ObjectReference, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import type { JobTemplateSpec } from 'kubernetes-types/batch/v1.js';
import type { ObjectMeta } from '../core/object-key.js';
import { builtinSchema } from './builtin-schemas.js';
import type { ValidationRule } from './schema-props.js';
import { Type } from './typebox.js';

/** A value the server keeps as it is: any JSON. */
export type AnyValue = unknown;

/** An object embedded in a custom resource (a Pod template, a raw manifest): typed where Kubernetes types it. */
export interface EmbeddedObject {
  apiVersion: string;
  kind: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/** metav1.Condition's schema (Kubernetes' `status.conditions` convention). */
export type ConditionSchema = TObject<{
  type: TString;
  status: TUnion<[TLiteral<'True'>, TLiteral<'False'>, TLiteral<'Unknown'>]>;
  observedGeneration: TOptional<TInteger>;
  lastTransitionTime: TString;
  reason: TString;
  message: TString;
}>;

/** `x-kubernetes-list-type: map`: items are merged by these keys (server-side apply), and a duplicate key is rejected. */
function listMap<const Keys extends readonly [string, ...string[]]>(
  keys: Keys,
): { readonly 'x-kubernetes-list-type': 'map'; readonly 'x-kubernetes-list-map-keys': Keys } {
  return { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys };
}

/** `x-kubernetes-list-type: set`: scalar items, each at most once. */
function listSet(): { readonly 'x-kubernetes-list-type': 'set' } {
  return { 'x-kubernetes-list-type': 'set' };
}

/** `x-kubernetes-list-type: atomic`: the list is replaced as a whole by server-side apply. */
function listAtomic(): { readonly 'x-kubernetes-list-type': 'atomic' } {
  return { 'x-kubernetes-list-type': 'atomic' };
}

/** `x-kubernetes-map-type`: `atomic` objects are replaced as a whole by server-side apply. */
function mapType(type: 'atomic' | 'granular'): { readonly 'x-kubernetes-map-type': 'atomic' | 'granular' } {
  return { 'x-kubernetes-map-type': type };
}

/** `x-kubernetes-preserve-unknown-fields` on an object that also declares fields: unknown fields are kept, not pruned. */
function preserveUnknownFields(): { readonly 'x-kubernetes-preserve-unknown-fields': true } {
  return { 'x-kubernetes-preserve-unknown-fields': true };
}

/**
 * `x-kubernetes-validations`: CEL rules checked by the API server (Kubernetes 1.25+; 1.20 ignores
 * them). A string is a rule without a message.
 */
function validations(...rules: readonly (ValidationRule | string)[]): {
  readonly 'x-kubernetes-validations': readonly ValidationRule[];
} {
  return { 'x-kubernetes-validations': rules.map((r) => (typeof r === 'string' ? { rule: r } : r)) };
}

/** One CEL rule with its message, for {@link validations}. */
function rule(expression: string, message?: string): ValidationRule {
  return message === undefined ? { rule: expression } : { rule: expression, message };
}

/** An integer or a string (a port name or number, a percentage): `x-kubernetes-int-or-string`. */
function intOrString(options?: TSchemaOptions): TUnion<[TInteger, TString]> {
  return Type.Union([Type.Integer(), Type.String()], { ...options, 'x-kubernetes-int-or-string': true });
}

/** `T | null`: the server keeps an explicit `null` (`nullable: true`) instead of pruning the field. */
function nullable<T extends TSchema>(schema: T, options?: TSchemaOptions): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()], options);
}

/** Any JSON value, kept as it is (`x-kubernetes-preserve-unknown-fields` without a type). */
function anyValue(options?: TSchemaOptions): TUnsafe<AnyValue> {
  return Type.Unsafe<AnyValue>({ ...options, 'x-kubernetes-preserve-unknown-fields': true });
}

/** A free-form object: any fields, kept as they are. */
function anyObject(options?: TSchemaOptions): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({
    ...options,
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
  });
}

/**
 * A whole Kubernetes object inside this one (`x-kubernetes-embedded-resource`): the server checks
 * its `apiVersion`, `kind` and `metadata` as it would a top-level object's, and keeps its other fields.
 */
function embeddedResource(options?: TSchemaOptions): TUnsafe<EmbeddedObject> {
  // As controller-gen writes it: the server itself requires and checks apiVersion, kind and metadata.
  return Type.Unsafe<EmbeddedObject>({
    ...options,
    type: 'object',
    'x-kubernetes-embedded-resource': true,
    'x-kubernetes-preserve-unknown-fields': true,
  });
}

/** An RFC 3339 timestamp, as metav1.Time serializes (`format: date-time`). */
function dateTime(options?: TSchemaOptions): TString {
  return Type.String({ ...options, format: 'date-time' });
}

/**
 * metav1.Condition: `Type.Array(k8s.condition(), k8s.listMap(['type']))` is the usual
 * `status.conditions`; its static type matches `Condition` from operator-runtime's helpers.
 */
function condition(): ConditionSchema {
  return Type.Object({
    type: Type.String({
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
    observedGeneration: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
    lastTransitionTime: dateTime(),
    reason: Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
    message: Type.String({ maxLength: 32768 }),
  });
}

/** `status.conditions`: a list of {@link condition}, one per type. */
function conditions(options?: TSchemaOptions): TArray<ConditionSchema> {
  return Type.Array(condition(), { ...options, ...listMap(['type']) });
}

/** A Pod template (Deployment's `spec.template`), validated by the server as a built-in's; see {@link builtinSchema}. */
function podTemplateSpec(options?: TSchemaOptions): TUnsafe<PodTemplateSpec> {
  return builtinSchema('io.k8s.api.core.v1.PodTemplateSpec', options);
}

/** A Job template (CronJob's `spec.jobTemplate`). */
function jobTemplateSpec(options?: TSchemaOptions): TUnsafe<JobTemplateSpec> {
  return builtinSchema('io.k8s.api.batch.v1beta1.JobTemplateSpec', options);
}

/** One container, as in a Pod spec. */
function container(options?: TSchemaOptions): TUnsafe<Container> {
  return builtinSchema('io.k8s.api.core.v1.Container', options);
}

/** A reference to another object (kind, namespace, name, uid…). */
function objectReference(options?: TSchemaOptions): TUnsafe<ObjectReference> {
  return builtinSchema('io.k8s.api.core.v1.ObjectReference', options);
}

/** The Kubernetes schema extensions for TypeBox schemas; see docs/custom-kinds.md. */
export const k8s = {
  listMap,
  listSet,
  listAtomic,
  mapType,
  preserveUnknownFields,
  validations,
  rule,
  intOrString,
  nullable,
  anyValue,
  anyObject,
  embeddedResource,
  dateTime,
  condition,
  conditions,
  builtin: builtinSchema,
  podTemplateSpec,
  jobTemplateSpec,
  container,
  objectReference,
} as const;
