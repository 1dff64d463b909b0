/**
 * Validation of a value against a structural CRD schema, in the order and with the rules the API
 * server applies (apiextensions-apiserver with kube-openapi's validator): explicit nulls on fields
 * that are not nullable are dropped, defaults are applied, then types, enums (an explicit null must
 * be in the enum even when the field is nullable), string, number, array and object constraints,
 * the supported formats, list-set and list-map uniqueness and the embedded-resource fields. Working
 * on the generated CRD schema, not the TypeBox one, keeps the validator and the CRD from
 * disagreeing. CEL rules and the formats in SERVER_ONLY_FORMATS are left to the server.
 */
import { isDeepStrictEqual } from 'node:util';
import { checkFormat } from './formats.js';
import { translateRe2Pattern } from './re2-pattern.js';
import type { JSONSchemaProps } from './schema-props.js';

export interface StructuralViolation {
  /** JSON pointer into the value, e.g. `/spec/replicas`; '' for the value itself. */
  readonly path: string;
  readonly message: string;
}

type Json = Record<string, unknown>;

/** A deep copy of `value` as the server stores it before validating: non-nullable nulls dropped, defaults applied. */
export function withServerDefaults(value: unknown, schema: JSONSchemaProps): unknown {
  const copy = structuredClone(value);
  pruneNonNullableNulls(copy, schema);
  applyDefaults(copy, schema);
  return copy;
}

export interface StructuralValidateOptions {
  /**
   * Read `""` as null in the type check, as kube-apiserver 1.20 does when built with Go 1.19 or
   * later (this repository's test control plane): kube-openapi's "nil or zero value" test compares
   * reflect.Values, and newer Go gives the empty string and reflect.Zero the same storage. Only
   * the differential test sets it, to model that server.
   */
  readonly emptyStringIsNull?: boolean;
}

/** Every violation of `schema` by `value` (taken as it is: apply {@link withServerDefaults} first for an object as written). */
export function structuralValidate(
  value: unknown,
  schema: JSONSchemaProps,
  path = '',
  options: StructuralValidateOptions = {},
): StructuralViolation[] {
  const out: StructuralViolation[] = [];
  validateNode(value, schema, path, out, options);
  return out;
}

/** Whether `value` has fields the server would prune (a default must have none). */
export function unknownFields(value: unknown, schema: JSONSchemaProps | undefined, path = ''): string[] {
  if (!schema || schema['x-kubernetes-preserve-unknown-fields']) return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownFields(v, schema.items, `${path}/${i}`));
  if (!isJson(value)) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const child = schema.properties?.[k] ?? schema.additionalProperties;
    if (!child) {
      if (!(schema['x-kubernetes-embedded-resource'] && (k === 'apiVersion' || k === 'kind' || k === 'metadata')))
        out.push(`${path}/${k}`);
    } else out.push(...unknownFields(v, child, `${path}/${escapePointer(k)}`));
  }
  return out;
}

function childSchema(schema: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined {
  return schema?.properties?.[key] ?? schema?.additionalProperties;
}

function pruneNonNullableNulls(value: unknown, schema: JSONSchemaProps | undefined): void {
  if (Array.isArray(value)) {
    for (const v of value) pruneNonNullableNulls(v, schema?.items);
  } else if (isJson(value)) {
    for (const [k, v] of Object.entries(value)) {
      const child = childSchema(schema, k);
      if (v === null && child && !child.nullable && child.default === undefined) delete value[k];
      else pruneNonNullableNulls(v, child);
    }
  }
}

function applyDefaults(value: unknown, schema: JSONSchemaProps | undefined): void {
  if (!schema) return;
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!items) return;
    value.forEach((v, i) => {
      if (v === null && !items.nullable && items.default !== undefined) value[i] = structuredClone(items.default);
      applyDefaults(value[i], items);
    });
  } else if (isJson(value)) {
    for (const [k, prop] of Object.entries(schema.properties ?? {})) {
      if (prop.default === undefined) continue;
      if (!(k in value) || (value[k] === null && !prop.nullable)) value[k] = structuredClone(prop.default);
    }
    for (const k of Object.keys(value)) {
      const prop = schema.properties?.[k];
      if (prop) applyDefaults(value[k], prop);
      else if (schema.additionalProperties) {
        const additional = schema.additionalProperties;
        if (value[k] === null && !additional.nullable && additional.default !== undefined)
          value[k] = structuredClone(additional.default);
        applyDefaults(value[k], additional);
      }
    }
  }
}

function validateNode(
  v: unknown,
  s: JSONSchemaProps,
  path: string,
  out: StructuralViolation[],
  options: StructuralValidateOptions,
): void {
  const push = (message: string) => out.push({ path, message });
  const typed = s.type !== undefined || s['x-kubernetes-int-or-string'] === true;
  if (v === null) {
    if (typed && !s.nullable) push(`must be ${typeName(s)}, not null`);
    else if (s.enum && !s.enum.some((e) => e === null)) push(enumMessage(s.enum));
    return;
  }
  if (v === '' && options.emptyStringIsNull) {
    if (typed && !s.nullable) {
      push(`must be ${typeName(s)}, not null`);
      return;
    }
  } else if (!typeMatches(v, s)) {
    push(`must be ${typeName(s)}, not ${jsonTypeName(v)}`);
    return;
  }
  if (s.enum && !s.enum.some((e) => isDeepStrictEqual(e, v))) push(enumMessage(s.enum));
  if (typeof v === 'string') validateString(v, s, push);
  else if (typeof v === 'number') validateNumber(v, s, push);
  else if (Array.isArray(v)) validateArray(v, s, path, out, options);
  else if (isJson(v)) validateObject(v, s, path, out, options);
}

function validateString(v: string, s: JSONSchemaProps, push: (m: string) => void): void {
  // Go counts characters (runes), not UTF-16 units.
  const length = [...v].length;
  if (s.minLength !== undefined && length < s.minLength) push(`must be at least ${s.minLength} characters long`);
  if (s.maxLength !== undefined && length > s.maxLength) push(`must be at most ${s.maxLength} characters long`);
  if (s.pattern !== undefined && !patternRegExp(s.pattern).test(v))
    push(`must match pattern ${JSON.stringify(s.pattern)}`);
  if (s.format !== undefined && checkFormat(s.format, v) === false) push(`must be of format ${s.format}`);
}

function validateNumber(v: number, s: JSONSchemaProps, push: (m: string) => void): void {
  if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum))
    push(`must be ${s.exclusiveMinimum ? '>' : '>='} ${s.minimum}`);
  if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum))
    push(`must be ${s.exclusiveMaximum ? '<' : '<='} ${s.maximum}`);
  if (s.multipleOf !== undefined && !Number.isInteger(v / s.multipleOf)) push(`must be a multiple of ${s.multipleOf}`);
}

function validateArray(
  v: unknown[],
  s: JSONSchemaProps,
  path: string,
  out: StructuralViolation[],
  options: StructuralValidateOptions,
): void {
  if (s.minItems !== undefined && v.length < s.minItems)
    out.push({ path, message: `must have at least ${s.minItems} items` });
  if (s.maxItems !== undefined && v.length > s.maxItems)
    out.push({ path, message: `must have at most ${s.maxItems} items` });
  if (s.items) v.forEach((item, i) => validateNode(item, s.items!, `${path}/${i}`, out, options));
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    v.forEach((item, i) => {
      if (v.slice(0, i).some((earlier) => isDeepStrictEqual(earlier, item)))
        out.push({ path: `${path}/${i}`, message: `duplicate value ${JSON.stringify(item)} in a list-type set` });
    });
  } else if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen: unknown[][] = [];
    v.forEach((item, i) => {
      if (!isJson(item)) return;
      const key = keys.map((k) => item[k]);
      if (seen.some((earlier) => isDeepStrictEqual(earlier, key)))
        out.push({
          path: `${path}/${i}`,
          message: `duplicate entry with key ${JSON.stringify(Object.fromEntries(keys.map((k, j) => [k, key[j]])))}`,
        });
      seen.push(key);
    });
  }
}

function validateObject(
  v: Json,
  s: JSONSchemaProps,
  path: string,
  out: StructuralViolation[],
  options: StructuralValidateOptions,
): void {
  for (const r of s.required ?? [])
    if (!(r in v)) out.push({ path: `${path}/${escapePointer(r)}`, message: 'is required' });
  // The server prunes unknown fields before it validates, so only known ones count.
  const counted =
    s.properties && !s['x-kubernetes-preserve-unknown-fields']
      ? Object.keys(v).filter((k) => k in s.properties!).length
      : Object.keys(v).length;
  if (s.minProperties !== undefined && counted < s.minProperties)
    out.push({ path, message: `must have at least ${s.minProperties} properties` });
  if (s.maxProperties !== undefined && counted > s.maxProperties)
    out.push({ path, message: `must have at most ${s.maxProperties} properties` });
  for (const [k, child] of Object.entries(v)) {
    const schema = s.properties?.[k] ?? s.additionalProperties;
    if (schema) validateNode(child, schema, `${path}/${escapePointer(k)}`, out, options);
  }
  if (s['x-kubernetes-embedded-resource']) validateEmbedded(v, path, out);
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** What the server checks on an embedded object's type and metadata (a subset: apiVersion, kind, namespace). */
function validateEmbedded(v: Json, path: string, out: StructuralViolation[]): void {
  for (const field of ['apiVersion', 'kind'] as const) {
    if (typeof v[field] !== 'string' || v[field] === '')
      out.push({ path: `${path}/${field}`, message: 'is required (must not be empty)' });
  }
  const metadata = v.metadata;
  if (metadata === undefined) return;
  if (!isJson(metadata)) {
    out.push({ path: `${path}/metadata`, message: 'must be object' });
    return;
  }
  const ns = metadata.namespace;
  if (ns !== undefined && (typeof ns !== 'string' || ns.length > 63 || (ns !== '' && !DNS1123_LABEL.test(ns)))) {
    out.push({ path: `${path}/metadata/namespace`, message: 'must be a lowercase RFC 1123 label' });
  }
}

function typeMatches(v: unknown, s: JSONSchemaProps): boolean {
  if (s['x-kubernetes-int-or-string']) return typeof v === 'string' || Number.isInteger(v);
  switch (s.type) {
    case undefined:
      return true;
    case 'object':
      return isJson(v);
    case 'array':
      return Array.isArray(v);
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    default:
      return typeof v === s.type;
  }
}

function typeName(s: JSONSchemaProps): string {
  return s['x-kubernetes-int-or-string'] ? 'integer or string' : String(s.type);
}

function jsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function enumMessage(values: readonly unknown[]): string {
  return `must be one of ${values.map((e) => JSON.stringify(e)).join(', ')}`;
}

const patterns = new Map<string, RegExp>();

function patternRegExp(pattern: string): RegExp {
  let re = patterns.get(pattern);
  if (!re) {
    const result = translateRe2Pattern(pattern);
    // Patterns are checked when the kind is defined; one that slipped through matches nothing rather than everything.
    re = result.ok ? result.regexp : /(?!)/;
    patterns.set(pattern, re);
  }
  return re;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
