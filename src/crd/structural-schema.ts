/**
 * TypeBox (JSON Schema 2020) → structural OpenAPI v3 schema for a CRD. TypeBox writes unions of
 * literals as `anyOf` of `{ type, const }`, `Type.Enum` as `enum` without a type, `Type.Record` as
 * `patternProperties` and `Type.Unknown` as `{}`; none of that is allowed in a CRD, whose schema
 * must be structural: a `type` on every node, no `$ref`, no `const`, no types inside `anyOf`. This
 * rewrites what has a structural equivalent and rejects the rest with the path and what to write
 * instead, never dropping a constraint silently.
 */
import { isDeepStrictEqual } from 'node:util';
import { UnsupportedSchemaError } from './errors.js';
import { translateRe2Pattern } from './re2-pattern.js';
import { SCHEMA_KEY_ORDER, type JSONSchemaProps, type SchemaType, type ValidationRule } from './schema-props.js';
import { structuralValidate, unknownFields } from './structural-validate.js';
import { escapeRegExp } from '../core/escape-reg-exp.js';

type Json = Record<string, unknown>;

const SCHEMA_TYPES: ReadonlySet<string> = new Set<SchemaType>([
  'object',
  'array',
  'string',
  'integer',
  'number',
  'boolean',
]);

/** Keywords copied as they are (after a type check of the value), in the order they are written. */
const NUMBER_KEYWORDS = [
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const;
const STRING_KEYWORDS = ['format', 'title', 'description', 'pattern'] as const;
const LIST_TYPES = new Set(['atomic', 'set', 'map']);
const MAP_TYPES = new Set(['atomic', 'granular']);

/** Keywords with no CRD meaning that carry no constraint, so leaving them out loses nothing. */
const IGNORED = new Set(['$schema', '$id', '$comment', 'readOnly', 'writeOnly']);
/** Every keyword this converter understands; anything else is an error, not a silent drop. */
const KNOWN = new Set([
  ...IGNORED,
  ...NUMBER_KEYWORDS,
  ...STRING_KEYWORDS,
  'type',
  'enum',
  'const',
  'default',
  'example',
  'examples',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'uniqueItems',
  'nullable',
  'required',
  'properties',
  'additionalProperties',
  'patternProperties',
  'items',
  'anyOf',
  'oneOf',
  'allOf',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
/** Keywords that describe the value as a whole and stay on a union's result. */
const ANNOTATIONS = [
  'title',
  'description',
  'default',
  'example',
  'examples',
  'nullable',
  'x-kubernetes-validations',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
] as const;

/**
 * The structural CRD schema for a TypeBox schema (or any JSON Schema of the same dialect).
 * `path` names the schema in error messages.
 * @throws UnsupportedSchemaError naming the path of the first node without a structural equivalent
 */
export function toStructuralSchema(schema: unknown, path: string): JSONSchemaProps {
  const out = convert(schema, path);
  checkDefaults(out, path);
  return out;
}

/**
 * The server rejects a CRD whose default does not validate against its own node, or carries
 * fields that would be pruned; saying so when the kind is defined names the path.
 */
function checkDefaults(node: JSONSchemaProps, path: string): void {
  if (node.default !== undefined && node.default !== null) {
    const violations = structuralValidate(node.default, node);
    const unknown = unknownFields(node.default, node);
    if (violations.length > 0 || unknown.length > 0) {
      const why = [
        ...violations.map((v) => `${v.path || '(the value)'} ${v.message}`),
        ...unknown.map((u) => `${u} is not a declared field (the server would prune it)`),
      ];
      throw new UnsupportedSchemaError(
        path,
        `default ${JSON.stringify(node.default)} does not match its own schema: ${why.join('; ')}`,
      );
    }
  }
  for (const [name, child] of Object.entries(node.properties ?? {})) checkDefaults(child, `${path}.properties.${name}`);
  if (node.additionalProperties) checkDefaults(node.additionalProperties, `${path}.additionalProperties`);
  if (node.items) checkDefaults(node.items, `${path}.items`);
}

function convert(node: unknown, path: string): JSONSchemaProps {
  if (!isJson(node)) throw new UnsupportedSchemaError(path, `expected a schema object, got ${describe(node)}`);
  for (const key of Object.keys(node)) {
    if (key === '$ref' || key === '$defs' || key === 'definitions') {
      throw new UnsupportedSchemaError(
        path,
        `${key}: CRD schemas cannot reference or define other schemas (no recursion); inline the type (Type.Ref, Type.Cyclic and Type.Module are not supported)`,
      );
    }
    if (key === 'prefixItems' || key === 'additionalItems')
      throw new UnsupportedSchemaError(path, 'tuples (Type.Tuple, prefixItems) are not supported; use an object');
    if (!KNOWN.has(key)) throw new UnsupportedSchemaError(path, `keyword ${JSON.stringify(key)} has no CRD equivalent`);
  }
  if ('anyOf' in node || 'oneOf' in node) return convertUnion(node, path);
  if ('allOf' in node) return convertIntersect(node, path);
  return convertSingle(node, path);
}

function convertSingle(node: Json, path: string): JSONSchemaProps {
  const type = typeOf(node, path);
  const out: JSONSchemaProps = {};
  if (type) out.type = type;
  copyStrings(node, out, path);
  const values = enumValues(node, path);
  if (values) {
    for (const v of values)
      if (!matchesType(v, type, path))
        throw new UnsupportedSchemaError(path, `enum value ${JSON.stringify(v)} is not of type ${type ?? '(none)'}`);
    out.enum = values;
  }
  if ('default' in node) out.default = node.default;
  const example = exampleOf(node, path);
  if (example !== undefined) out.example = example;
  for (const key of NUMBER_KEYWORDS) {
    const v = node[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new UnsupportedSchemaError(path, `${key} must be a finite number, got ${describe(v)}`);
    if (key === 'minimum' || key === 'maximum') continue; // written with their exclusive forms below
    out[key] = v;
  }
  applyBounds(node, out, path);
  if (node.uniqueItems === true) {
    throw new UnsupportedSchemaError(
      path,
      'uniqueItems: true is not allowed in CRDs (too expensive for the server); use k8s.listSet() for a list of unique scalars',
    );
  }
  if (node.nullable === true) out.nullable = true;
  refuseNullableEnum(out, path);
  if (type === 'object') convertObjectKeywords(node, out, path);
  else
    for (const key of ['properties', 'additionalProperties', 'patternProperties', 'required'] as const) {
      if (key in node) throw new UnsupportedSchemaError(path, `${key} on a node of type ${type ?? '(none)'}`);
    }
  if (type === 'array') {
    const items = node.items;
    if (!isJson(items))
      throw new UnsupportedSchemaError(
        path,
        items === undefined
          ? 'an array needs items (a structural schema types every element)'
          : 'tuples (items as a list, Type.Tuple) are not supported; use an object',
      );
    out.items = convert(items, `${path}.items`);
  } else if ('items' in node) {
    throw new UnsupportedSchemaError(path, `items on a node of type ${type ?? '(none)'}`);
  }
  copyExtensions(node, out, path);
  if (!out.type && !out['x-kubernetes-int-or-string'] && !out['x-kubernetes-preserve-unknown-fields']) {
    if (Object.keys(out).every((k) => k === 'description' || k === 'title' || k === 'default' || k === 'example')) {
      // Type.Unknown() / Type.Any(): any value, kept as it is.
      out['x-kubernetes-preserve-unknown-fields'] = true;
    } else {
      throw new UnsupportedSchemaError(
        path,
        'a node without a type; give it one (or use k8s.intOrString() / k8s.anyValue())',
      );
    }
  }
  return ordered(out);
}

function typeOf(node: Json, path: string): SchemaType | undefined {
  const type = node.type;
  if (type === undefined) return inferredType(node, path);
  if (typeof type !== 'string')
    throw new UnsupportedSchemaError(
      path,
      `type must be one name, got ${describe(type)} (for T | null use k8s.nullable(T))`,
    );
  if (!SCHEMA_TYPES.has(type)) {
    throw new UnsupportedSchemaError(
      path,
      `type ${JSON.stringify(type)} is not a JSON type a CRD stores (${[...SCHEMA_TYPES].join(', ')})${type === 'null' ? '; for T | null use k8s.nullable(T)' : ''}`,
    );
  }
  return type as SchemaType;
}

/** `Type.Enum` and a bare `const` carry no type; a CRD needs one, and the values say which. */
function inferredType(node: Json, path: string): SchemaType | undefined {
  const values = enumValues(node, path);
  if (!values) return undefined;
  const types = new Set(values.map((v) => jsonTypeOf(v, path)));
  if (types.size === 1) return [...types][0];
  if (types.size === 2 && types.has('integer') && types.has('number')) return 'number';
  throw new UnsupportedSchemaError(
    path,
    `enum values of mixed types (${[...types].join(', ')}); a CRD enum has one type`,
  );
}

function enumValues(node: Json, path: string): unknown[] | undefined {
  if ('const' in node) {
    if ('enum' in node) throw new UnsupportedSchemaError(path, 'both const and enum');
    return [node.const];
  }
  if (!('enum' in node)) return undefined;
  if (!Array.isArray(node.enum) || node.enum.length === 0)
    throw new UnsupportedSchemaError(path, 'enum must be a non-empty list');
  return [...(node.enum as unknown[])];
}

function jsonTypeOf(v: unknown, path: string): SchemaType {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (Array.isArray(v)) return 'array';
  if (isJson(v)) return 'object';
  throw new UnsupportedSchemaError(path, `enum value ${describe(v)} cannot be stored in a custom resource`);
}

function matchesType(v: unknown, type: SchemaType | undefined, path: string): boolean {
  if (type === undefined) return true;
  const actual = jsonTypeOf(v, path);
  return actual === type || (type === 'number' && actual === 'integer');
}

function copyStrings(node: Json, out: JSONSchemaProps, path: string): void {
  for (const key of STRING_KEYWORDS) {
    const v = node[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new UnsupportedSchemaError(path, `${key} must be a string, got ${describe(v)}`);
    if (key === 'pattern') {
      const result = translateRe2Pattern(v);
      if (!result.ok) throw new UnsupportedSchemaError(path, `pattern ${JSON.stringify(v)}: ${result.why}`);
    }
    out[key] = v;
  }
}

/** JSON Schema's `examples: [...]` becomes OpenAPI's single `example`. */
function exampleOf(node: Json, path: string): unknown {
  if ('example' in node) return node.example;
  if (!('examples' in node)) return undefined;
  if (!Array.isArray(node.examples)) throw new UnsupportedSchemaError(path, 'examples must be a list');
  return node.examples[0];
}

/**
 * JSON Schema 2020 writes an exclusive bound as a number (`exclusiveMinimum: 0`); OpenAPI v3.0,
 * which CRDs speak, as a flag beside `minimum`.
 */
function applyBounds(node: Json, out: JSONSchemaProps, path: string): void {
  for (const [bound, exclusive] of [
    ['minimum', 'exclusiveMinimum'],
    ['maximum', 'exclusiveMaximum'],
  ] as const) {
    const inclusiveValue = node[bound];
    const exclusiveValue = node[exclusive];
    if (typeof exclusiveValue === 'number') {
      if (inclusiveValue !== undefined)
        throw new UnsupportedSchemaError(path, `both ${bound} and ${exclusive}; keep one`);
      out[bound] = exclusiveValue;
      out[exclusive] = true;
    } else if (exclusiveValue !== undefined && typeof exclusiveValue !== 'boolean') {
      throw new UnsupportedSchemaError(path, `${exclusive} must be a number, got ${describe(exclusiveValue)}`);
    } else {
      if (typeof inclusiveValue === 'number') out[bound] = inclusiveValue;
      if (exclusiveValue === true) {
        if (inclusiveValue === undefined) throw new UnsupportedSchemaError(path, `${exclusive}: true without ${bound}`);
        out[exclusive] = true;
      }
    }
  }
}

function convertObjectKeywords(node: Json, out: JSONSchemaProps, path: string): void {
  const properties = node.properties;
  if (properties !== undefined) {
    if (!isJson(properties)) throw new UnsupportedSchemaError(path, 'properties must be an object');
    out.properties = {};
    for (const [name, child] of Object.entries(properties))
      out.properties[name] = convert(child, `${path}.properties.${name}`);
  }
  if (node.required !== undefined) {
    if (!Array.isArray(node.required) || !node.required.every((r): r is string => typeof r === 'string'))
      throw new UnsupportedSchemaError(path, 'required must be a list of names');
    const missing = node.required.filter((r) => !out.properties || !(r in out.properties));
    if (missing.length > 0)
      throw new UnsupportedSchemaError(path, `required names properties that are not declared: ${missing.join(', ')}`);
    if (node.required.length > 0) out.required = [...node.required];
  }
  const additional = additionalPropertiesOf(node, path);
  if (additional === 'preserve') {
    out['x-kubernetes-preserve-unknown-fields'] = true;
  } else if (additional) {
    if (out.properties)
      throw new UnsupportedSchemaError(
        path,
        'properties and a map value schema (Type.Record, additionalProperties) together; a CRD object is either a struct or a map',
      );
    out.additionalProperties = convert(additional, `${path}.additionalProperties`);
  }
}

/**
 * The map value schema: `additionalProperties` or TypeBox's `Type.Record(Type.String(), V)` =
 * `patternProperties: { '^.*$': V }`. A record of unknown values is a free-form object.
 * `additionalProperties: false` is what the API server does anyway (it prunes unknown fields).
 */
function additionalPropertiesOf(node: Json, path: string): Json | 'preserve' | undefined {
  const additional = node.additionalProperties;
  const patterns = node.patternProperties;
  if (additional !== undefined && patterns !== undefined)
    throw new UnsupportedSchemaError(path, 'both additionalProperties and patternProperties');
  let value: unknown;
  if (patterns !== undefined) {
    const entries = isJson(patterns) ? Object.entries(patterns) : [];
    if (entries.length !== 1 || !ANY_KEY.has(entries[0]![0])) {
      throw new UnsupportedSchemaError(
        path,
        `patternProperties ${JSON.stringify(Object.keys(isJson(patterns) ? patterns : {}))}: CRD maps cannot restrict their keys by pattern; use Type.Record(Type.String(), V) and a CEL rule (k8s.validations) on the keys`,
      );
    }
    value = entries[0]![1];
  } else {
    if (additional === undefined || additional === false) return undefined;
    if (additional === true) return 'preserve';
    value = additional;
  }
  if (isJson(value) && Object.keys(value).length === 0) return 'preserve';
  if (!isJson(value))
    throw new UnsupportedSchemaError(path, `a map value schema must be a schema, got ${describe(value)}`);
  return value;
}

/** The key patterns `Type.Record(Type.String(), …)` writes: any key. */
const ANY_KEY = new Set(['^.*$', '^(.*)$', '.*']);

function copyExtensions(node: Json, out: JSONSchemaProps, path: string): void {
  for (const flag of [
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-int-or-string',
    'x-kubernetes-embedded-resource',
  ] as const) {
    const v = node[flag];
    if (v === undefined) continue;
    if (typeof v !== 'boolean') throw new UnsupportedSchemaError(path, `${flag} must be true or false`);
    if (v) out[flag] = true;
  }
  const listType = node['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (typeof listType !== 'string' || !LIST_TYPES.has(listType))
      throw new UnsupportedSchemaError(
        path,
        `x-kubernetes-list-type must be atomic, set or map, got ${describe(listType)}`,
      );
    out['x-kubernetes-list-type'] = listType as 'atomic' | 'set' | 'map';
  }
  const keys = node['x-kubernetes-list-map-keys'];
  if (keys !== undefined) {
    if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k): k is string => typeof k === 'string'))
      throw new UnsupportedSchemaError(path, 'x-kubernetes-list-map-keys must be a non-empty list of field names');
    out['x-kubernetes-list-map-keys'] = [...keys];
  }
  const mapType = node['x-kubernetes-map-type'];
  if (mapType !== undefined) {
    if (typeof mapType !== 'string' || !MAP_TYPES.has(mapType))
      throw new UnsupportedSchemaError(
        path,
        `x-kubernetes-map-type must be atomic or granular, got ${describe(mapType)}`,
      );
    out['x-kubernetes-map-type'] = mapType as 'atomic' | 'granular';
  }
  const rules = node['x-kubernetes-validations'];
  if (rules !== undefined) out['x-kubernetes-validations'] = validationRules(rules, path);
}

const RULE_KEYS = new Set(['rule', 'message', 'messageExpression', 'reason', 'fieldPath', 'optionalOldSelf']);

function validationRules(rules: unknown, path: string): ValidationRule[] {
  if (!Array.isArray(rules) || rules.length === 0)
    throw new UnsupportedSchemaError(path, 'x-kubernetes-validations must be a non-empty list of rules');
  return rules.map((r: unknown, i) => {
    if (!isJson(r) || typeof r.rule !== 'string' || r.rule.trim() === '')
      throw new UnsupportedSchemaError(path, `x-kubernetes-validations[${i}] needs a rule (a CEL expression)`);
    const unknownKeys = Object.keys(r).filter((k) => !RULE_KEYS.has(k));
    if (unknownKeys.length > 0)
      throw new UnsupportedSchemaError(
        path,
        `x-kubernetes-validations[${i}] has unknown fields: ${unknownKeys.join(', ')}`,
      );
    const rule: Record<string, unknown> = {};
    for (const key of RULE_KEYS) if (r[key] !== undefined) rule[key] = r[key];
    // Built from RULE_KEYS only, each checked above to be present in a ValidationRule.
    return rule as unknown as ValidationRule;
  });
}

/**
 * Unions with a structural form: literals of one type (→ `enum`), `T | null` (→ `nullable`),
 * `integer | string` (→ `x-kubernetes-int-or-string`), and combinations of those with `null`.
 */
function convertUnion(node: Json, path: string): JSONSchemaProps {
  const keyword = 'anyOf' in node ? 'anyOf' : 'oneOf';
  if ('anyOf' in node && 'oneOf' in node) throw new UnsupportedSchemaError(path, 'both anyOf and oneOf');
  const members = node[keyword];
  if (!Array.isArray(members) || members.length === 0)
    throw new UnsupportedSchemaError(path, `${keyword} must be a non-empty list`);
  const structuralKeys = Object.keys(node).filter(
    (k) => k !== keyword && !(ANNOTATIONS as readonly string[]).includes(k) && !IGNORED.has(k),
  );
  if (structuralKeys.length > 0)
    throw new UnsupportedSchemaError(
      path,
      `a union with its own ${structuralKeys.join(', ')}; put them on the members`,
    );
  const flat = members.flatMap((m: unknown) =>
    isJson(m) && Array.isArray(m.anyOf) && Object.keys(m).length === 1 ? (m.anyOf as unknown[]) : [m],
  );
  const nonNull = flat.filter((m) => !(isJson(m) && m.type === 'null' && Object.keys(m).length === 1));
  const nullable = nonNull.length < flat.length;
  let out: JSONSchemaProps;
  if (nonNull.length === 0) {
    throw new UnsupportedSchemaError(path, 'a union of only null');
  } else if (nonNull.length === 1) {
    out = convert(nonNull[0], path);
  } else if (nonNull.every(isLiteral)) {
    out = convert({ enum: nonNull.flatMap((m) => enumValues(m, path) ?? []) }, path);
  } else if (isIntOrString(nonNull)) {
    out = { 'x-kubernetes-int-or-string': true };
  } else if (
    nonNull.length === 2 &&
    nonNull.some((m) => isJson(m) && m.type === 'number') &&
    nonNull.some((m) => isJson(m) && m.type === 'string')
  ) {
    throw new UnsupportedSchemaError(
      path,
      'number | string has no structural form: the API server stores it as x-kubernetes-int-or-string, which refuses 1.5; use k8s.intOrString() (integer | string), or a string',
    );
  } else {
    throw new UnsupportedSchemaError(
      path,
      `a union of ${nonNull.map((m) => (isJson(m) ? String(m.type ?? '(no type)') : describe(m))).join(' | ')} has no structural form; ` +
        'CRDs allow literal unions (enums), T | null (k8s.nullable), integer | string (k8s.intOrString) and free-form values (k8s.anyValue)',
    );
  }
  for (const key of ANNOTATIONS) {
    if (!(key in node)) continue;
    if (key === 'examples') {
      const example = exampleOf(node, path);
      if (example !== undefined) out.example = example;
    } else {
      // The union's own annotations (description, default, extensions) win over its members'.
      Object.assign(out, convertAnnotation(key, node, path));
    }
  }
  if (nullable) out.nullable = true;
  refuseNullableEnum(out, path);
  return ordered(out);
}

/**
 * The API server checks an explicit null against the enum even on a nullable field, and accepts it
 * in no form: without null in the enum null is "Unsupported value" (1.20 and 1.36); with null
 * listed, kube-apiserver 1.20 rejects the CRD (it cannot convert a null enum value) and 1.36 still
 * rejects the null (both seen in crd.oracle.int.test.ts). A `T | null` type whose null the server
 * always refuses would be a lie, so it is refused here, saying what works instead.
 */
function refuseNullableEnum(out: JSONSchemaProps, path: string): void {
  if (!out.nullable || !out.enum) return;
  const strings = out.enum.every((v) => typeof v === 'string');
  throw new UnsupportedSchemaError(
    path,
    'an enum that is also nullable: the API server refuses an explicit null for an enum (it checks null against the values, and no Kubernetes version accepts null in the list); ' +
      `make the field optional (Type.Optional) and leave it out instead of null${strings ? `, or use k8s.nullable(Type.String({ pattern: ${JSON.stringify(`^(${(out.enum as string[]).map(escapeRegExp).join('|')})$`)} }))` : ''}`,
  );
}

function convertAnnotation(key: (typeof ANNOTATIONS)[number], node: Json, path: string): JSONSchemaProps {
  const probe: JSONSchemaProps = {};
  if (key === 'title' || key === 'description') copyStrings({ [key]: node[key] }, probe, path);
  else if (key === 'default') probe.default = node.default;
  else if (key === 'example') probe.example = node.example;
  else if (key === 'nullable') {
    if (node.nullable === true) probe.nullable = true;
  } else copyExtensions({ [key]: node[key] }, probe, path);
  return probe;
}

function isLiteral(m: unknown): m is Json {
  if (!isJson(m)) return false;
  const keys = Object.keys(m).filter((k) => k !== 'type' && k !== 'description' && k !== 'title');
  return keys.length === 1 && (keys[0] === 'const' || keys[0] === 'enum');
}

/**
 * `integer | string` with nothing else on either member (constraints on one member have no
 * structural form). `number | string` has none: x-kubernetes-int-or-string refuses 1.5.
 */
function isIntOrString(members: unknown[]): boolean {
  if (members.length !== 2) return false;
  const types = members.map((m) =>
    isJson(m) && Object.keys(m).every((k) => k === 'type' || k === 'description') ? m.type : undefined,
  );
  return types.includes('string') && types.includes('integer');
}

/**
 * `Type.Intersect` of objects: one object with every member's properties and every member's
 * constraints. CEL rules add up; any other keyword set by two members (or by a member and the
 * intersection itself) to different values has no single form, and is refused rather than one
 * silently winning.
 */
function convertIntersect(node: Json, path: string): JSONSchemaProps {
  const members = node.allOf;
  if (!Array.isArray(members) || members.length === 0)
    throw new UnsupportedSchemaError(path, 'allOf must be a non-empty list');
  const merged: Json = { type: 'object', properties: {}, required: [] };
  const properties: Json = {};
  const required: string[] = [];
  const rules: unknown[] = [];
  const mergeKeys = (from: Json, at: string, skip: readonly string[]) => {
    for (const key of Object.keys(from)) {
      if (skip.includes(key)) continue;
      if (key === 'x-kubernetes-validations') {
        if (!Array.isArray(from[key]))
          throw new UnsupportedSchemaError(at, 'x-kubernetes-validations must be a non-empty list of rules');
        rules.push(...(from[key] as unknown[]));
      } else if (key in merged && !isDeepStrictEqual(merged[key], from[key])) {
        throw new UnsupportedSchemaError(
          at,
          `${key} is set by two members of the intersection (${JSON.stringify(merged[key])} and ${JSON.stringify(from[key])}); set it once`,
        );
      } else {
        merged[key] = from[key];
      }
    }
  };
  for (const [i, m] of members.entries()) {
    if (!isJson(m) || m.type !== 'object' || 'allOf' in m || 'anyOf' in m || 'oneOf' in m) {
      throw new UnsupportedSchemaError(
        `${path}.allOf[${i}]`,
        'only intersections of objects (Type.Intersect of Type.Object) have a structural form',
      );
    }
    for (const [name, child] of Object.entries(isJson(m.properties) ? m.properties : {})) {
      if (name in properties)
        throw new UnsupportedSchemaError(`${path}.allOf[${i}]`, `property ${name} is declared by two members`);
      properties[name] = child;
    }
    if (Array.isArray(m.required)) required.push(...m.required.filter((r): r is string => typeof r === 'string'));
    mergeKeys(m, `${path}.allOf[${i}]`, ['type', 'properties', 'required']);
  }
  mergeKeys(node, path, ['allOf']);
  merged.properties = properties;
  merged.required = [...new Set(required)];
  if (rules.length > 0) merged['x-kubernetes-validations'] = rules;
  return convertSingle(merged, path);
}

function ordered(props: JSONSchemaProps): JSONSchemaProps {
  const out: Record<string, unknown> = {};
  for (const key of SCHEMA_KEY_ORDER) if (props[key] !== undefined) out[key] = props[key];
  // Same keys, reordered: a JSONSchemaProps.
  return out as JSONSchemaProps;
}

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}
