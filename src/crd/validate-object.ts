/**
 * Run-time validation of an object against a version's schema, for admission webhooks and the
 * fake client: what the API server does with a custom resource before it stores it, on the same
 * structural schema the CRD carries — explicit nulls dropped from fields that are not nullable,
 * defaults applied, then types, enums, patterns (read as Go's RE2 reads them), bounds, formats,
 * required fields, list-set and list-map uniqueness. CEL rules (`x-kubernetes-validations`) and the
 * formats in docs/custom-kinds.md's "server-only" list are checked by the server only.
 */
import type { AnyCustomKind } from './custom-kind.js';
import { InvalidOptionError } from '../core/errors.js';
import type { JSONSchemaProps } from './schema-props.js';
import { structuralValidate, withServerDefaults } from './structural-validate.js';
import { toStructuralSchema } from './structural-schema.js';
import { versionObjectSchema } from './version-schema.js';

export interface SchemaViolation {
  /** JSON pointer into the object, e.g. `/spec/replicas`; '' for the object itself. */
  readonly path: string;
  readonly message: string;
}

/**
 * What is wrong with `obj` as an object of `version` of `kind` (its storage version when omitted);
 * empty when it is valid. `apiVersion` and `kind` must name that version. `obj` is not changed.
 */
export function validateAgainstSchema(
  kind: AnyCustomKind,
  version: string | undefined,
  obj: unknown,
): SchemaViolation[] {
  const name = version ?? kind.storageVersion;
  const definition = kind.definition.versions.find((v) => v.name === name);
  if (!definition)
    throw new InvalidOptionError('version', `${kind.plural}.${kind.group} has no version ${JSON.stringify(name)}`);
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    return [{ path: '', message: 'must be an object' }];
  const out: SchemaViolation[] = [];
  const apiVersion = `${kind.group}/${name}`;
  if ('apiVersion' in obj && obj.apiVersion !== apiVersion)
    out.push({ path: '/apiVersion', message: `must be ${apiVersion}` });
  if ('kind' in obj && obj.kind !== kind.kind) out.push({ path: '/kind', message: `must be ${kind.kind}` });
  const schema = schemaOf(kind, name);
  // apiVersion, kind and metadata are the server's, checked above or not at all.
  const { apiVersion: _a, kind: _k, metadata: _m, ...fields } = obj as Record<string, unknown>;
  out.push(...structuralValidate(withServerDefaults(fields, schema), schema));
  return out;
}

const schemas = new WeakMap<object, Map<string, JSONSchemaProps>>();

function schemaOf(kind: AnyCustomKind, version: string): JSONSchemaProps {
  let byVersion = schemas.get(kind.definition);
  if (!byVersion) schemas.set(kind.definition, (byVersion = new Map()));
  let schema = byVersion.get(version);
  if (!schema) {
    schema = toStructuralSchema(
      versionObjectSchema(kind.definition.versions.find((v) => v.name === version)!),
      `versions[${version}].schema`,
    );
    byVersion.set(version, schema);
  }
  return schema;
}
