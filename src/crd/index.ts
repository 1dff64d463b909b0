/**
 * operator-runtime/crd: custom resources defined once, as TypeBox schemas. `defineCustomKind`
 * derives the objects' TypeScript type and gives the `Kind<T>` the client and controllers use;
 * `customResourceDefinition` gives the structural CRD; `manifestYaml` writes generated manifests;
 * `validateAgainstSchema` checks an object at run time. See docs/custom-kinds.md.
 */
export { defineCustomKind } from './custom-kind.js';
export type {
  CustomKind,
  AnyCustomKind,
  CustomObject,
  CustomObjectMeta,
  NamespacedObjectMeta,
  NewObjectOf,
  StorageVersionOf,
} from './custom-kind.js';
export type {
  CustomKindDefinition,
  CustomKindVersionDefinition,
  CustomKindNames,
  CustomKindSchema,
  PrinterColumn,
  ScaleSubresource,
  Subresources,
  Scope,
} from './custom-kind-definition.js';
export { k8s } from './k8s.js';
export type { AnyValue, EmbeddedObject, ConditionSchema } from './k8s.js';
export { BUILTIN_SCHEMAS_KUBERNETES_VERSION } from './builtin-schemas.js';
export type { BuiltinTypes, BuiltinName } from './builtin-schemas.js';
export { customResourceDefinition } from './custom-resource-definition.js';
export type {
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  CustomResourceDefinitionOptions,
} from './custom-resource-definition.js';
export type { JSONSchemaProps, SchemaType, ValidationRule } from './schema-props.js';
export { structuralViolations } from './structural-check.js';
export { toStructuralSchema } from './structural-schema.js';
export { manifestYaml, GENERATED_HEADER } from './manifest-yaml.js';
export type { ManifestYamlOptions } from './manifest-yaml.js';
export { validateAgainstSchema } from './validate-object.js';
export type { SchemaViolation } from './validate-object.js';
export { UnsupportedSchemaError, NonStructuralSchemaError } from './errors.js';
// The schema builder, re-exported so a project builds its schemas with the same TypeBox its
// operator-runtime was built against (one set of static types). Built, it is the runtime's own
// one-file bundle of TypeBox (src/crd/typebox.ts): importing `typebox` itself as well loads
// TypeBox's ~370 modules a second time.
export { Type } from './typebox.js';
export type { Static, TSchema } from 'typebox';
