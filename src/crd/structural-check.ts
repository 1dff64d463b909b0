/**
 * A check of the rules the API server applies to a CRD's `openAPIV3Schema` (apiextensions v1:
 * "structural schemas" plus the extension rules), run over every node of a generated schema. It
 * backs `customResourceDefinition` (a generator bug fails loudly instead of a CRD the server
 * rejects or, worse, accepts and prunes) and the unit tests that walk every generated schema.
 */
import { SCHEMA_KEY_ORDER, type JSONSchemaProps } from './schema-props.js';

type Json = Record<string, unknown>;

const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);
/** The JSONSchemaProps fields (and extensions) a generated node may carry; anything else is dropped by the server or rejected. */
const ALLOWED_KEYS = new Set<string>([...SCHEMA_KEY_ORDER, 'anyOf', 'allOf', 'oneOf', 'not']);
/** Not allowed inside anyOf/allOf/oneOf/not (value validations), which may only restrict values. */
const FORBIDDEN_IN_JUNCTORS = [
  'type',
  'description',
  'title',
  'default',
  'nullable',
  'additionalProperties',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];
const JUNCTORS = ['anyOf', 'allOf', 'oneOf'] as const;

/**
 * Every rule a schema breaks, as `path: what is wrong`; empty when the schema is structural.
 * `path` names the root in the messages.
 */
export function structuralViolations(schema: JSONSchemaProps | unknown, path = 'openAPIV3Schema'): string[] {
  const out: string[] = [];
  checkNode(schema, path, out, { root: true });
  return out;
}

interface NodeContext {
  readonly root?: boolean;
  readonly inJunctor?: boolean;
}

function checkNode(node: unknown, path: string, out: string[], ctx: NodeContext): void {
  if (!isJson(node)) {
    out.push(`${path}: not a schema object`);
    return;
  }
  for (const key of Object.keys(node))
    if (!ALLOWED_KEYS.has(key)) out.push(`${path}: ${key} is not allowed in a CRD schema`);
  if (ctx.inJunctor) {
    for (const key of FORBIDDEN_IN_JUNCTORS)
      if (key in node) out.push(`${path}: ${key} is not allowed inside anyOf/allOf/oneOf/not`);
  } else {
    checkType(node, path, out);
  }
  const type = node.type;
  if (node.properties !== undefined) {
    if (!ctx.inJunctor && type !== 'object') out.push(`${path}: properties on a node of type ${String(type)}`);
    if (!isJson(node.properties)) out.push(`${path}: properties is not an object`);
    else
      for (const [name, child] of Object.entries(node.properties))
        checkNode(child, `${path}.properties.${name}`, out, { inJunctor: ctx.inJunctor });
  }
  if (node.additionalProperties !== undefined) {
    if (node.properties !== undefined) out.push(`${path}: properties and additionalProperties are mutually exclusive`);
    if (typeof node.additionalProperties === 'boolean')
      out.push(
        `${path}: additionalProperties must be a schema (false is forbidden, true is x-kubernetes-preserve-unknown-fields)`,
      );
    else checkNode(node.additionalProperties, `${path}.additionalProperties`, out, { inJunctor: ctx.inJunctor });
  }
  if (node.items !== undefined) {
    if (!isJson(node.items)) out.push(`${path}: items must be one schema`);
    else checkNode(node.items, `${path}.items`, out, { inJunctor: ctx.inJunctor });
  } else if (type === 'array' && !ctx.inJunctor) {
    out.push(`${path}: an array needs items`);
  }
  if (Array.isArray(node.required)) {
    const props = isJson(node.properties) ? node.properties : {};
    for (const r of node.required)
      if (typeof r !== 'string' || !(r in props)) out.push(`${path}: required ${String(r)} is not a declared property`);
  }
  if (node.uniqueItems !== undefined) out.push(`${path}: uniqueItems is forbidden`);
  if (node.exclusiveMinimum !== undefined && (typeof node.exclusiveMinimum !== 'boolean' || node.minimum === undefined))
    out.push(`${path}: exclusiveMinimum must be a flag beside minimum`);
  if (node.exclusiveMaximum !== undefined && (typeof node.exclusiveMaximum !== 'boolean' || node.maximum === undefined))
    out.push(`${path}: exclusiveMaximum must be a flag beside maximum`);
  if (node.enum !== undefined && (!Array.isArray(node.enum) || node.enum.length === 0))
    out.push(`${path}: enum must be a non-empty list`);
  for (const junctor of JUNCTORS) {
    const members = node[junctor];
    if (members === undefined) continue;
    if (!Array.isArray(members)) out.push(`${path}: ${junctor} must be a list`);
    else if (!isIntOrStringJunctor(node, junctor))
      members.forEach((m: unknown, i) => checkNode(m, `${path}.${junctor}[${i}]`, out, { inJunctor: true }));
  }
  if (node.not !== undefined) checkNode(node.not, `${path}.not`, out, { inJunctor: true });
  if (!ctx.inJunctor) checkExtensions(node, path, out, ctx);
}

function checkType(node: Json, path: string, out: string[]): void {
  const type = node.type;
  if (node['x-kubernetes-int-or-string'] === true) {
    if (type !== undefined) out.push(`${path}: x-kubernetes-int-or-string must not have a type`);
    return;
  }
  if (type === undefined) {
    if (node['x-kubernetes-preserve-unknown-fields'] !== true)
      out.push(`${path}: no type (required on every node but int-or-string and preserve-unknown-fields ones)`);
  } else if (typeof type !== 'string' || !TYPES.has(type)) {
    out.push(`${path}: type ${JSON.stringify(type)} is not one of ${[...TYPES].join(', ')}`);
  }
}

/** The one junctor with types that Kubernetes allows: `anyOf: [{type: integer}, {type: string}]` beside int-or-string. */
function isIntOrStringJunctor(node: Json, junctor: string): boolean {
  if (node['x-kubernetes-int-or-string'] !== true || junctor !== 'anyOf' || !Array.isArray(node.anyOf)) return false;
  const types = node.anyOf.map((m: unknown) => (isJson(m) && Object.keys(m).length === 1 ? m.type : undefined));
  return types.length === 2 && types.includes('integer') && types.includes('string');
}

function checkExtensions(node: Json, path: string, out: string[], ctx: NodeContext): void {
  for (const flag of [
    'x-kubernetes-int-or-string',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-embedded-resource',
  ]) {
    if (node[flag] !== undefined && node[flag] !== true) out.push(`${path}: ${flag} must be true or absent`);
  }
  if (node['x-kubernetes-embedded-resource'] === true) {
    if (node.type !== 'object') out.push(`${path}: x-kubernetes-embedded-resource needs type object`);
    if (node.properties === undefined && node['x-kubernetes-preserve-unknown-fields'] !== true)
      out.push(`${path}: x-kubernetes-embedded-resource needs properties or x-kubernetes-preserve-unknown-fields`);
  }
  const listType = node['x-kubernetes-list-type'];
  const mapKeys = node['x-kubernetes-list-map-keys'];
  if (listType !== undefined) {
    if (node.type !== 'array') out.push(`${path}: x-kubernetes-list-type needs type array`);
    if (listType !== 'atomic' && listType !== 'set' && listType !== 'map')
      out.push(`${path}: x-kubernetes-list-type must be atomic, set or map`);
    const items = isJson(node.items) ? node.items : {};
    if (listType === 'set' && !(SCALAR_TYPES.has(String(items.type)) || items['x-kubernetes-map-type'] === 'atomic')) {
      out.push(`${path}: x-kubernetes-list-type set needs scalar (or atomic) items`);
    }
    if (listType === 'map') checkListMap(items, mapKeys, path, out);
  }
  if (mapKeys !== undefined && listType !== 'map')
    out.push(`${path}: x-kubernetes-list-map-keys needs x-kubernetes-list-type map`);
  if (node['x-kubernetes-map-type'] !== undefined) {
    if (node.type !== 'object') out.push(`${path}: x-kubernetes-map-type needs type object`);
    if (node['x-kubernetes-map-type'] !== 'atomic' && node['x-kubernetes-map-type'] !== 'granular')
      out.push(`${path}: x-kubernetes-map-type must be atomic or granular`);
  }
  const rules = node['x-kubernetes-validations'];
  if (rules !== undefined) {
    if (!Array.isArray(rules) || rules.length === 0)
      out.push(`${path}: x-kubernetes-validations must be a non-empty list`);
    else
      rules.forEach((r: unknown, i) => {
        if (!isJson(r) || typeof r.rule !== 'string' || r.rule === '')
          out.push(`${path}: x-kubernetes-validations[${i}] has no rule`);
      });
  }
  if (ctx.root && node.type !== 'object') out.push(`${path}: the root must be of type object`);
}

function checkListMap(items: Json, keys: unknown, path: string, out: string[]): void {
  if (items.type !== 'object') out.push(`${path}: x-kubernetes-list-type map needs object items`);
  if (!Array.isArray(keys) || keys.length === 0) {
    out.push(`${path}: x-kubernetes-list-type map needs x-kubernetes-list-map-keys`);
    return;
  }
  const props = isJson(items.properties) ? items.properties : {};
  const required = Array.isArray(items.required) ? items.required : [];
  for (const key of keys) {
    const prop = typeof key === 'string' ? props[key] : undefined;
    if (!isJson(prop)) {
      out.push(`${path}: list-map key ${String(key)} is not a property of the items`);
      continue;
    }
    if (!SCALAR_TYPES.has(String(prop.type))) out.push(`${path}: list-map key ${String(key)} must be a scalar`);
    if (!required.includes(key) && prop.default === undefined)
      out.push(`${path}: list-map key ${String(key)} must be required or have a default`);
  }
}

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
