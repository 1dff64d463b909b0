/**
 * Run-time validation of an object against a version's TypeBox schema, for admission webhooks and
 * the fake client: the checks the API server's OpenAPI validation makes (types, enum, pattern,
 * bounds, required). CEL rules (`x-kubernetes-validations`), list-map key uniqueness and defaulting
 * are server-side only and not evaluated here.
 */
import { Value } from 'typebox/value';
import type { AnyCustomKind } from './custom-kind.js';
import { InvalidOptionError } from '../core/errors.js';
import { versionObjectSchema } from './version-schema.js';

export interface SchemaViolation {
  /** JSON pointer into the object, e.g. `/spec/replicas`; '' for the object itself. */
  readonly path: string;
  readonly message: string;
}

/**
 * What is wrong with `obj` as an object of `version` of `kind` (its storage version when omitted);
 * empty when it is valid. `apiVersion` and `kind` must name that version.
 */
export function validateAgainstSchema(kind: AnyCustomKind, version: string | undefined, obj: unknown): SchemaViolation[] {
  const name = version ?? kind.storageVersion;
  const definition = kind.definition.versions.find((v) => v.name === name);
  if (!definition) throw new InvalidOptionError('version', `${kind.plural}.${kind.group} has no version ${JSON.stringify(name)}`);
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return [{ path: '', message: 'must be an object' }];
  const out: SchemaViolation[] = [];
  const apiVersion = `${kind.group}/${name}`;
  if ('apiVersion' in obj && obj.apiVersion !== apiVersion) out.push({ path: '/apiVersion', message: `must be ${apiVersion}` });
  if ('kind' in obj && obj.kind !== kind.kind) out.push({ path: '/kind', message: `must be ${kind.kind}` });
  out.push(...readable([...Value.Errors(schemaOf(kind, name), obj)]));
  return out;
}

interface TypeBoxError {
  readonly keyword: string;
  readonly schemaPath: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
  readonly message: string;
}

/**
 * A literal union fails as one `anyOf` error plus one `const` error per member; say instead what
 * the value may be, as the API server's enum message does.
 */
function readable(errors: readonly TypeBoxError[]): SchemaViolation[] {
  const hidden = new Set<TypeBoxError>();
  const messages = new Map<TypeBoxError, string>();
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const members = errors.filter((e) => e !== union && e.instancePath === union.instancePath && e.schemaPath.startsWith(`${union.schemaPath}/anyOf/`));
    for (const m of members) hidden.add(m);
    if (members.length > 0 && members.every((m) => m.keyword === 'const')) {
      messages.set(union, `must be one of ${members.map((m) => JSON.stringify(m.params.allowedValue)).join(', ')}`);
    }
  }
  return errors.filter((e) => !hidden.has(e)).map((e) => ({ path: e.instancePath, message: messages.get(e) ?? e.message }));
}

const schemas = new WeakMap<object, Map<string, ReturnType<typeof versionObjectSchema>>>();

function schemaOf(kind: AnyCustomKind, version: string): ReturnType<typeof versionObjectSchema> {
  let byVersion = schemas.get(kind.definition);
  if (!byVersion) schemas.set(kind.definition, (byVersion = new Map()));
  let schema = byVersion.get(version);
  if (!schema) {
    schema = versionObjectSchema(kind.definition.versions.find((v) => v.name === version)!);
    byVersion.set(version, schema);
  }
  return schema;
}
