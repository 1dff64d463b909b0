/**
 * A version's whole-object schema: its top-level fields (spec, status…) as one TypeBox object, with
 * `status` optional. The CRD's `openAPIV3Schema` and run-time validation both start from it, so
 * they cannot disagree.
 */
import type { TObject, TProperties } from 'typebox';
import { Type } from './typebox.js';
import type { CustomKindVersionDefinition } from './custom-kind-definition.js';
import { k8s } from './k8s.js';

export function versionObjectSchema(version: Pick<CustomKindVersionDefinition, 'schema' | 'validations'>): TObject {
  const properties: TProperties = {};
  for (const [field, fieldSchema] of Object.entries(version.schema)) {
    properties[field] = field === 'status' ? Type.Optional(fieldSchema) : fieldSchema;
  }
  return Type.Object(properties, version.validations?.length ? k8s.validations(...version.validations) : {});
}
