/**
 * The OpenAPI v3 schema a CRD carries (apiextensions.k8s.io/v1 JSONSchemaProps) with the
 * Kubernetes extensions, which kubernetes-types leaves out.
 */

/** One CEL rule of `x-kubernetes-validations` (Kubernetes 1.25+; older servers ignore it). */
export interface ValidationRule {
  /** The CEL expression; `self` is the value at this node, `oldSelf` the previous one on update. */
  readonly rule: string;
  /** Shown when the rule fails. */
  readonly message?: string;
  /** A CEL expression that builds the message from the value (Kubernetes 1.27+). */
  readonly messageExpression?: string;
  /** The reason returned to the client (`FieldValueInvalid`, `FieldValueForbidden`, …) (Kubernetes 1.28+). */
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  /** The field the error names, relative to this node, e.g. `.replicas` (Kubernetes 1.28+). */
  readonly fieldPath?: string;
  /** Whether the rule also runs on updates that leave this value unchanged (Kubernetes 1.30+). */
  readonly optionalOldSelf?: boolean;
}

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** A structural schema node as it is written into the CRD. */
export interface JSONSchemaProps {
  type?: SchemaType;
  format?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  example?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  items?: JSONSchemaProps;
  anyOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
}

/**
 * Every key a generated schema node may carry, in one fixed order, so generated YAML reads the same
 * way everywhere and diffs stay small.
 */
export const SCHEMA_KEY_ORDER: readonly (keyof JSONSchemaProps)[] = [
  'type',
  'format',
  'title',
  'description',
  'enum',
  'default',
  'example',
  'nullable',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];
