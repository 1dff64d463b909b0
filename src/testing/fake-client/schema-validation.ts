/**
 * The subset of CRD structural-schema behaviour tests meet: unknown fields are pruned, then the
 * object is validated for type, required, enum, minimum/maximum (and exclusive), min/max length,
 * pattern and min/max items, with the server's cause messages. Not modelled: CEL rules, formats,
 * defaults, oneOf/anyOf/allOf/not, x-kubernetes-list-type uniqueness.
 */
import { isObject, type JsonObject } from './json-value.js';

export interface SchemaProps {
  type?: string;
  properties?: Record<string, SchemaProps>;
  additionalProperties?: SchemaProps | boolean;
  items?: SchemaProps;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

/** Fields of a custom resource the schema never governs (the server handles them itself). */
const ROOT_SKIPPED = new Set(['apiVersion', 'kind', 'metadata']);

/** Drops fields the schema does not know, in place, as the API server's pruning does. */
export function prune(obj: JsonObject, schema: SchemaProps): void {
  pruneValue(obj, schema, true);
}

function pruneValue(value: unknown, schema: SchemaProps | undefined, root = false): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    for (const item of value) pruneValue(item, schema.items);
    return;
  }
  if (!isObject(value)) return;
  const props = schema.properties;
  const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  for (const key of Object.keys(value)) {
    if (root && ROOT_SKIPPED.has(key)) continue;
    if (schema['x-kubernetes-embedded-resource'] && ROOT_SKIPPED.has(key)) continue;
    if (props && Object.hasOwn(props, key)) pruneValue(value[key], props[key]);
    else if (additional) pruneValue(value[key], additional);
    else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.additionalProperties !== true) delete value[key];
  }
}

/** One field error of a 422 Invalid, as the server lists it in `details.causes`. */
export interface Cause {
  readonly reason:
    | 'FieldValueInvalid'
    | 'FieldValueRequired'
    | 'FieldValueForbidden'
    | 'FieldValueNotSupported'
    | 'FieldManagerConflict';
  readonly field: string;
  readonly message: string;
}

/** Causes for every violation, sorted by field as the server reports them. */
export function validate(obj: JsonObject, schema: SchemaProps): Cause[] {
  const causes: Cause[] = [];
  validateValue(obj, schema, '', causes, true);
  return causes.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
}

function typeMatches(v: unknown, schema: SchemaProps): boolean {
  if (schema['x-kubernetes-int-or-string'])
    return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'boolean':
      return typeof v === 'boolean';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    default:
      return true;
  }
}

function validateValue(v: unknown, schema: SchemaProps, path: string, causes: Cause[], root = false): void {
  const field = path;
  if (v === null) {
    if (!schema.nullable && schema.type) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: "null": ${field} in body must be of type ${schema.type}: "null"`,
      });
    }
    return;
  }
  if (!typeMatches(v, schema)) {
    const actual = typeName(v);
    causes.push({
      reason: 'FieldValueInvalid',
      field,
      message: `Invalid value: "${actual}": ${field} in body must be of type ${schema.type}: "${actual}"`,
    });
    return;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    causes.push({
      reason: 'FieldValueNotSupported',
      field,
      message: `Unsupported value: ${show(v)}: supported values: ${schema.enum.map(show).join(', ')}`,
    });
  }
  if (typeof v === 'number') {
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? v >= schema.maximum : v > schema.maximum)) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: ${v}: ${field} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`,
      });
    }
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? v <= schema.minimum : v < schema.minimum)) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: ${v}: ${field} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`,
      });
    }
  }
  if (typeof v === 'string') {
    if (schema.maxLength !== undefined && v.length > schema.maxLength) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: ${show(v)}: ${field} in body should be at most ${schema.maxLength} chars long`,
      });
    }
    if (schema.minLength !== undefined && v.length < schema.minLength) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: ${show(v)}: ${field} in body should be at least ${schema.minLength} chars long`,
      });
    }
    if (schema.pattern !== undefined && !patternOf(schema.pattern).test(v)) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: ${show(v)}: ${field} in body should match '${schema.pattern}'`,
      });
    }
  }
  if (Array.isArray(v)) {
    if (schema.maxItems !== undefined && v.length > schema.maxItems) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: ${v.length}: ${field} in body should have at most ${schema.maxItems} items`,
      });
    }
    if (schema.minItems !== undefined && v.length < schema.minItems) {
      causes.push({
        reason: 'FieldValueInvalid',
        field,
        message: `Invalid value: ${v.length}: ${field} in body should have at least ${schema.minItems} items`,
      });
    }
    if (schema.items) v.forEach((item, i) => validateValue(item, schema.items!, `${path}[${i}]`, causes));
  }
  if (isObject(v)) {
    for (const req of schema.required ?? []) {
      if (!Object.hasOwn(v, req) || v[req] === undefined)
        causes.push({ reason: 'FieldValueRequired', field: join(path, req), message: 'Required value' });
    }
    const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
    for (const key in v) {
      if (!Object.hasOwn(v, key) || (root && ROOT_SKIPPED.has(key))) continue;
      const child = v[key];
      const childSchema = schema.properties?.[key] ?? additional;
      if (childSchema && child !== undefined) validateValue(child, childSchema, join(path, key), causes);
    }
  }
}

/** Compiled patterns by source (bounded): every write of a kind validates against the same few. */
const patterns = new Map<string, RegExp>();
const MAX_PATTERNS = 1_000;

function patternOf(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) {
    if (patterns.size >= MAX_PATTERNS) patterns.clear();
    patterns.set(source, (re = new RegExp(source))); // no g or y flag: test() keeps no state
  }
  return re;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/**
 * Paths of the fields pruning would drop, sorted, as `fieldValidation` reports them
 * (`spec.bogus`; a list item as `spec.items[0].x`).
 */
export function unknownFields(obj: JsonObject, schema: SchemaProps): string[] {
  const out: string[] = [];
  collectUnknown(obj, schema, '', out, true);
  return out.sort();
}

function collectUnknown(
  value: unknown,
  schema: SchemaProps | undefined,
  path: string,
  out: string[],
  root = false,
): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => collectUnknown(item, schema.items, `${path}[${i}]`, out));
    return;
  }
  if (!isObject(value)) return;
  const props = schema.properties;
  const additional = typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
  for (const key of Object.keys(value)) {
    if ((root || schema['x-kubernetes-embedded-resource']) && ROOT_SKIPPED.has(key)) continue;
    const at = path ? `${path}.${key}` : key;
    if (props && Object.hasOwn(props, key)) collectUnknown(value[key], props[key], at, out);
    else if (additional) collectUnknown(value[key], additional, at, out);
    else if (!schema['x-kubernetes-preserve-unknown-fields'] && schema.additionalProperties !== true) out.push(at);
  }
}
