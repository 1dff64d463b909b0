/**
 * fast-check arbitraries for values of a structural CRD schema, for the differential test that
 * holds validateAgainstSchema to the API server (crd.oracle.int.test.ts). `valid` aims at values
 * the schema accepts (it need not always hit: the server decides, not this generator);
 * `nearValid` takes one of those and breaks one thing at one node — a wrong type, a null, a zero
 * value, a bound crossed by one, a format or enum miss, a required field removed, a duplicate.
 */
import fc from 'fast-check';
import { normalizedFormat } from '../formats.js';
import { translateRe2Pattern } from '../re2-pattern.js';
import type { JSONSchemaProps } from '../schema-props.js';

type Json = Record<string, unknown>;

/** Valid and invalid samples per format (normalized name); version-dependent cases are left out (see the test). */
export const FORMAT_SAMPLES: Readonly<
  Record<string, { readonly valid: readonly string[]; readonly invalid: readonly string[] }>
> = {
  byte: {
    valid: ['aGVsbG8=', 'YWI=', 'YWJj', 'AAAAAAAA'],
    invalid: ['not-valid!', 'YQ', 'abc', 'aGVsbG8', '====', ''],
  },
  datetime: {
    valid: [
      '2026-12-01T21:00:00Z',
      '2026-12-01t21:00:00z',
      '2026-12-01T21:00:00.123+01:00',
      '2024-02-29T23:59:59-05:00',
    ],
    invalid: [
      '2026-12-01 21:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-12-01T24:00:00Z',
      '2026-02-29T00:00:00Z',
      '2026-12-01T21:00:00',
      '2026-12-01',
      '',
    ],
  },
  date: {
    valid: ['2026-12-01', '2024-02-29', '0001-01-01'],
    invalid: ['2026-02-29', '2026-1-01', '2026-12-32', '20261201', ''],
  },
  uuid: {
    valid: ['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000'],
    invalid: ['123e4567-e89b-12d3-a456', 'not-a-uuid', ''],
  },
  uuid4: { valid: ['123e4567-e89b-42d3-a456-426614174000'], invalid: ['123e4567-e89b-12d3-a456-426614174000', ''] },
  ipv4: { valid: ['10.0.0.1', '255.255.255.255', '0.0.0.0'], invalid: ['10.0.0.256', '10.0.0', '::1', 'a.b.c.d', ''] },
  ipv6: {
    valid: ['::1', 'fe80::1', '2001:db8::8a2e:370:7334', '::ffff:10.0.0.1'],
    invalid: ['10.0.0.1', 'fe80::1%eth0', ':::', 'g::1', ''],
  },
  cidr: {
    valid: ['10.0.0.0/8', '10.0.0.1/32', '2001:db8::/32', '::/0'],
    invalid: ['10.0.0.0/33', '10.0.0.0', '2001:db8::/129', '10.0.0.0/-1', ''],
  },
  mac: {
    valid: ['00:1a:2b:3c:4d:5e', '00-1A-2B-3C-4D-5E', '001a.2b3c.4d5e', '00:00:5e:00:53:01:02:03'],
    invalid: ['00:1a:2b:3c:4d', '001a2b3c4d5e', '00:1a-2b:3c:4d:5e', ''],
  },
  hexcolor: { valid: ['#fff', 'FFFFFF', '#a1b2c3'], invalid: ['#ffff', 'ggg', ''] },
  rgbcolor: { valid: ['rgb(255,255,255)', 'rgb( 0 , 10 , 200 )'], invalid: ['rgb(256,0,0)', 'rgb(0,0)', ''] },
  ssn: {
    valid: ['123-45-6789', '123 45 6789', '123456789'.padEnd(11, '0').slice(0, 3) + '-45-6789'],
    invalid: ['123-456-789', '12-345-6789', ''],
  },
  bsonobjectid: {
    valid: ['507f1f77bcf86cd799439011'],
    invalid: ['507f1f77bcf86cd79943901', 'zz7f1f77bcf86cd799439011', ''],
  },
  password: { valid: ['', 'anything at all'], invalid: [] },
};

/** How deep generated objects go by default: deep enough for every oracle kind's nesting, small enough to stay fast. */
export const DEFAULT_SCHEMA_ARBITRARY_DEPTH = 4;

export interface SchemaArbitraryOptions {
  /** How deep optional fields, free-form values and nested lists go; below it only required fields are generated. @defaultValue DEFAULT_SCHEMA_ARBITRARY_DEPTH */
  readonly depth?: number;
}

/** Values of `schema`, mostly valid. */
export function validValue(schema: JSONSchemaProps, options: SchemaArbitraryOptions = {}): fc.Arbitrary<unknown> {
  return arbitrary(schema, options.depth ?? DEFAULT_SCHEMA_ARBITRARY_DEPTH);
}

export interface Mutated {
  readonly value: unknown;
  /** What was changed where, e.g. `/spec/replicas: maximum + 1`. */
  readonly mutation: string;
}

/** A value of `schema` with one node broken (or, for some draws, changed in a way that is still valid). */
export function nearValidValue(schema: JSONSchemaProps, options: SchemaArbitraryOptions = {}): fc.Arbitrary<Mutated> {
  return fc
    .tuple(validValue(schema, options), fc.nat(), fc.nat())
    .map(([value, at, which]) => mutate(value, schema, at, which));
}

function arbitrary(s: JSONSchemaProps, depth: number): fc.Arbitrary<unknown> {
  const base = baseArbitrary(s, depth);
  return s.nullable ? fc.oneof({ weight: 5, arbitrary: base }, { weight: 1, arbitrary: fc.constant(null) }) : base;
}

function baseArbitrary(s: JSONSchemaProps, depth: number): fc.Arbitrary<unknown> {
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s['x-kubernetes-int-or-string'])
    return fc.oneof(fc.integer({ min: -5, max: 100 }), fc.constantFrom('http', '50%', 'a'));
  if (s['x-kubernetes-embedded-resource'])
    return fc.constantFrom(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' } },
      { apiVersion: 'apps/v1', kind: 'Deployment' },
    );
  switch (s.type) {
    case 'string':
      return stringArbitrary(s);
    case 'integer':
      return fc
        .integer({ min: lower(s, -1000), max: upper(s, 1000) })
        .map((n) => (s.multipleOf ? Math.round(n / s.multipleOf) * s.multipleOf : n));
    case 'number':
      return fc.oneof(
        fc.integer({ min: lower(s, -100), max: upper(s, 100) }),
        fc.double({ min: lower(s, -100), max: upper(s, 100), noNaN: true, noDefaultInfinity: true }),
      );
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const items = s.items ? arbitrary(s.items, depth - 1) : fc.jsonValue({ maxDepth: 1 });
      const minLength = s.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 3, minLength + 3));
      if (s['x-kubernetes-list-type'] === 'set')
        return fc.uniqueArray(items, {
          minLength,
          maxLength,
          comparator: (a, b) => JSON.stringify(a) === JSON.stringify(b),
        });
      if (s['x-kubernetes-list-type'] === 'map') {
        const keys = s['x-kubernetes-list-map-keys'] ?? [];
        return fc.uniqueArray(items, {
          minLength,
          maxLength,
          selector: (item) => JSON.stringify(keys.map((k) => (isJson(item) ? item[k] : undefined))),
        });
      }
      return fc.array(items, { minLength, maxLength });
    }
    case 'object':
      return objectArbitrary(s, depth);
    default:
      return fc.jsonValue({ maxDepth: Math.max(depth, 0) });
  }
}

function stringArbitrary(s: JSONSchemaProps): fc.Arbitrary<string> {
  const samples = s.format ? FORMAT_SAMPLES[normalizedFormat(s.format)] : undefined;
  if (samples) return fc.constantFrom(...samples.valid);
  const minLength = s.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 12, minLength + 12));
  if (s.pattern) {
    const translated = translateRe2Pattern(s.pattern);
    let matching: fc.Arbitrary<string> | undefined;
    for (const source of [s.pattern, translated.ok ? translated.regexp.source : undefined]) {
      if (matching || source === undefined) continue;
      try {
        const re = new RegExp(source, 'u');
        const arb = fc.stringMatching(re);
        fc.sample(arb, 1);
        matching = arb;
      } catch {
        matching = undefined;
      }
    }
    const plain = fc.string({ minLength, maxLength });
    if (!matching) return plain;
    const fits = (v: string) =>
      [...v].length >= minLength && (s.maxLength === undefined || [...v].length <= s.maxLength);
    return fc.oneof({ weight: 9, arbitrary: matching.filter(fits) }, { weight: 1, arbitrary: plain });
  }
  return fc.oneof(fc.string({ minLength, maxLength }), fc.string({ minLength, maxLength, unit: 'grapheme' }));
}

function objectArbitrary(s: JSONSchemaProps, depth: number): fc.Arbitrary<unknown> {
  if (s.properties) {
    const required = new Set(s.required ?? []);
    const shape: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [k, child] of Object.entries(s.properties)) shape[k] = arbitrary(child, depth - 1);
    // Required fields always; the others one time in two. A defaulted required field may be left out too.
    const requiredKeys = Object.keys(shape).filter((k) => required.has(k) && s.properties![k]!.default === undefined);
    // Deep down (a Pod template's volume sources…), only what is required, or objects grow without bound.
    if (depth <= 0) for (const k of Object.keys(shape)) if (!requiredKeys.includes(k)) delete shape[k];
    const record = fc.record(shape, { requiredKeys });
    if (s.maxProperties === undefined) return record;
    const max = s.maxProperties;
    return record.map((o) => Object.fromEntries(Object.entries(o).slice(0, Math.max(max, requiredKeys.length))));
  }
  if (s.additionalProperties) {
    const minKeys = s.minProperties ?? 0;
    const maxKeys = Math.max(minKeys, Math.min(s.maxProperties ?? 3, minKeys + 3));
    return fc.dictionary(
      fc.constantFrom('a', 'b', 'c', 'd', 'e', 'key.with.dots', 'x/y'),
      arbitrary(s.additionalProperties, depth - 1),
      { minKeys, maxKeys, noNullPrototype: true },
    );
  }
  return fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), fc.jsonValue({ maxDepth: Math.max(depth - 1, 0) }), {
    maxKeys: 3,
    noNullPrototype: true,
  });
}

function lower(s: JSONSchemaProps, fallback: number): number {
  if (s.minimum === undefined) return fallback;
  return s.exclusiveMinimum ? Math.ceil(s.minimum + 1e-9) : Math.ceil(s.minimum);
}

function upper(s: JSONSchemaProps, fallback: number): number {
  if (s.maximum === undefined) return Math.max(fallback, lower(s, fallback));
  return s.exclusiveMaximum ? Math.floor(s.maximum - 1e-9) : Math.floor(s.maximum);
}

interface Site {
  readonly parent: Json | unknown[] | undefined;
  readonly key: string | number | undefined;
  readonly value: unknown;
  readonly schema: JSONSchemaProps;
  readonly path: string;
}

function sites(
  value: unknown,
  schema: JSONSchemaProps,
  path: string,
  parent: Site['parent'],
  key: Site['key'],
  out: Site[],
): void {
  out.push({ parent, key, value, schema, path });
  if (Array.isArray(value) && schema.items)
    value.forEach((v, i) => sites(v, schema.items!, `${path}/${i}`, value, i, out));
  else if (isJson(value)) {
    for (const [k, v] of Object.entries(value)) {
      const child = schema.properties?.[k] ?? schema.additionalProperties;
      if (child) sites(v, child, `${path}/${k}`, value, k, out);
    }
  }
}

function mutate(original: unknown, schema: JSONSchemaProps, at: number, which: number): Mutated {
  const value = structuredClone(original);
  const all: Site[] = [];
  sites(value, schema, '', undefined, undefined, all);
  // The root is the whole object; break something inside it.
  const candidates = all.length > 1 ? all.slice(1) : all;
  const site = candidates[at % candidates.length]!;
  const options = mutationsFor(site);
  const [label, apply] = options[which % options.length]!;
  return { value: apply(value, site), mutation: `${site.path || '/'}: ${label}` };
}

type Mutation = readonly [string, (root: unknown, site: Site) => unknown];

function replaceWith(v: unknown): (root: unknown, site: Site) => unknown {
  return (root, site) => {
    if (site.parent === undefined) return v;
    (site.parent as Record<string | number, unknown>)[site.key!] = v;
    return root;
  };
}

function mutationsFor(site: Site): Mutation[] {
  const s = site.schema;
  const out: Mutation[] = [
    ['null', replaceWith(null)],
    ['the zero value ""', replaceWith('')],
    ['the zero value 0', replaceWith(0)],
    ['the zero value false', replaceWith(false)],
    ['an object', replaceWith({ x: 1 })],
    ['a list', replaceWith(['x'])],
  ];
  if (s.enum) out.push(['a value outside the enum', replaceWith(typeof s.enum[0] === 'string' ? 'zzz' : 987654)]);
  if (s.type === 'integer' || s.type === 'number' || s['x-kubernetes-int-or-string']) {
    out.push(['1.5', replaceWith(1.5)], ['a numeric string', replaceWith('5')]);
    if (s.minimum !== undefined)
      out.push(['minimum', replaceWith(s.minimum)], ['minimum - 1', replaceWith(s.minimum - 1)]);
    if (s.maximum !== undefined)
      out.push(['maximum', replaceWith(s.maximum)], ['maximum + 1', replaceWith(s.maximum + 1)]);
    if (s.multipleOf !== undefined) out.push(['not a multiple', replaceWith(s.multipleOf + 1)]);
  }
  if (s.type === 'string') {
    out.push(['a number', replaceWith(5)]);
    if (s.maxLength !== undefined)
      out.push(
        ['maxLength + 1 characters', replaceWith('x'.repeat(s.maxLength + 1))],
        ['maxLength runes of 2 UTF-16 units', replaceWith('😀'.repeat(s.maxLength))],
      );
    if (s.minLength !== undefined && s.minLength > 0)
      out.push(['minLength - 1 characters', replaceWith('x'.repeat(s.minLength - 1))]);
    if (s.pattern) out.push(['a string of spaces', replaceWith(' \t')], ['a Unicode space', replaceWith('\u00a0')]);
    const samples = s.format ? FORMAT_SAMPLES[normalizedFormat(s.format)] : undefined;
    for (const bad of samples?.invalid ?? []) out.push([`format ${s.format} ${JSON.stringify(bad)}`, replaceWith(bad)]);
  }
  if (Array.isArray(site.value)) {
    const list = site.value;
    if (list.length > 0) out.push(['its first item repeated', (root) => (list.push(structuredClone(list[0])), root)]);
    out.push(['emptied', (root) => (list.splice(0), root)]);
    if (s.maxItems !== undefined && s.items)
      out.push(['maxItems + 1 items', replaceWith(Array.from({ length: s.maxItems + 1 }, () => list[0] ?? 'x'))]);
  }
  if (isJson(site.value)) {
    const obj = site.value;
    for (const r of s.required ?? []) out.push([`required ${r} removed`, (root) => (delete obj[r], root)]);
    out.push(['an unknown field added', (root) => ((obj['unknownField'] = 1), root)]);
    if (s.maxProperties !== undefined)
      out.push([
        'maxProperties + 1 keys',
        (root) => {
          for (let i = 0; i <= s.maxProperties!; i++) obj[`k${i}`] = obj[Object.keys(obj)[0] ?? ''] ?? 'v';
          return root;
        },
      ]);
  }
  if (site.parent !== undefined && !Array.isArray(site.parent))
    out.push(['removed', (root, at) => (delete (at.parent as Json)[at.key as string], root)]);
  return out;
}

function isJson(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
