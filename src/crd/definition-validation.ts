/**
 * The checks the API server applies to a CRD's names, versions, subresources and columns
 * (apiextensions validation), run when the kind is defined so a typo fails at startup, or in the
 * unit tests, with the field named, instead of at `kubectl apply` time.
 */
import { IsSchema } from './typebox.js';
import { InvalidOptionError } from '../core/errors.js';
import type { CustomKindDefinition, CustomKindVersionDefinition, PrinterColumn } from './custom-kind-definition.js';
import { UnsupportedSchemaError } from './errors.js';
import { structuralViolations } from './structural-check.js';
import { toStructuralSchema } from './structural-schema.js';
import { versionObjectSchema } from './version-schema.js';

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const COLUMN_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'date']);
const COLUMN_FORMATS = new Set(['int32', 'int64', 'float', 'double', 'byte', 'date', 'date-time', 'password']);
const RESERVED_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);
/** A simple JSON path: `.a.b`, no array index, no filter. */
const SIMPLE_PATH = /^(\.[A-Za-z_][A-Za-z0-9_-]*)+$/;

/** @throws InvalidOptionError naming the first field that the API server would reject */
export function validateDefinition(definition: CustomKindDefinition): void {
  const { group, names, scope, versions } = definition;
  if (typeof group !== 'string' || group.length > 253 || !DNS1123_SUBDOMAIN.test(group) || !group.includes('.')) {
    throw new InvalidOptionError(
      'group',
      `${JSON.stringify(group)} must be a lowercase DNS subdomain with at least one dot, e.g. example.com`,
    );
  }
  dns1035('names.plural', names.plural);
  if (`${names.plural}.${group}`.length > 253)
    throw new InvalidOptionError('names.plural', `the CRD name ${names.plural}.${group} is longer than 253 characters`);
  if (names.singular !== undefined) dns1035('names.singular', names.singular);
  if (
    typeof names.kind !== 'string' ||
    !/^[A-Za-z]/.test(names.kind) ||
    !DNS1035_LABEL.test(names.kind.toLowerCase())
  ) {
    throw new InvalidOptionError(
      'names.kind',
      `${JSON.stringify(names.kind)} must be a name such as Database (letters and digits, starting with a letter)`,
    );
  }
  if (names.listKind !== undefined) {
    if (!DNS1035_LABEL.test(names.listKind.toLowerCase()))
      throw new InvalidOptionError(
        'names.listKind',
        `${JSON.stringify(names.listKind)} must be a name such as DatabaseList`,
      );
    if (names.listKind === names.kind) throw new InvalidOptionError('names.listKind', 'must differ from names.kind');
  }
  names.shortNames?.forEach((s, i) => dns1035(`names.shortNames[${i}]`, s));
  names.categories?.forEach((c, i) => dns1035(`names.categories[${i}]`, c));
  if (scope !== 'Namespaced' && scope !== 'Cluster')
    throw new InvalidOptionError('scope', `${JSON.stringify(scope)} must be Namespaced or Cluster`);
  validateVersions(versions);
}

function validateVersions(versions: readonly CustomKindVersionDefinition[]): void {
  if (!Array.isArray(versions) || versions.length === 0)
    throw new InvalidOptionError('versions', 'at least one version is needed');
  const seen = new Set<string>();
  for (const [i, v] of versions.entries()) {
    dns1035(`versions[${i}].name`, v.name);
    if (seen.has(v.name)) throw new InvalidOptionError(`versions[${i}].name`, `version ${v.name} is defined twice`);
    seen.add(v.name);
    validateVersion(v, `versions[${v.name}]`);
  }
  const storage = versions.filter((v) => v.storage === true);
  if (storage.length !== 1) {
    throw new InvalidOptionError(
      'versions',
      `exactly one version must have storage: true, found ${storage.length}${storage.length > 1 ? ` (${storage.map((v) => v.name).join(', ')})` : ''}`,
    );
  }
  if (!versions.some((v) => v.served === true))
    throw new InvalidOptionError('versions', 'at least one version must be served');
}

function validateVersion(v: CustomKindVersionDefinition, at: string): void {
  if (typeof v.served !== 'boolean') throw new InvalidOptionError(`${at}.served`, 'must be true or false');
  if (typeof v.storage !== 'boolean') throw new InvalidOptionError(`${at}.storage`, 'must be true or false');
  if (v.deprecationWarning !== undefined) {
    if (v.deprecated !== true)
      throw new InvalidOptionError(`${at}.deprecationWarning`, 'may only be set with deprecated: true');
    if (v.deprecationWarning.length > 256)
      throw new InvalidOptionError(`${at}.deprecationWarning`, 'must be at most 256 characters');
  }
  if (typeof v.schema !== 'object' || v.schema === null)
    throw new InvalidOptionError(`${at}.schema`, 'must map top-level fields (spec, status…) to TypeBox schemas');
  for (const [field, schema] of Object.entries(v.schema)) {
    if (RESERVED_FIELDS.has(field))
      throw new InvalidOptionError(`${at}.schema.${field}`, `${field} is defined by Kubernetes, not by the schema`);
    // The server reads any object with a top-level items list as a List: creating one answers 500.
    if (field === 'items')
      throw new InvalidOptionError(
        `${at}.schema.${field}`,
        'a top-level field named items makes the API server read the object as a list (a create answers 500 "is not a list"); name it differently or put it under spec',
      );
    if (!IsSchema(schema))
      throw new InvalidOptionError(`${at}.schema.${field}`, 'must be a TypeBox schema (Type.Object(…))');
  }
  // Converting and checking now report a schema the server would reject when the kind is
  // defined, naming the version: e.g. a list-map key that is neither required nor defaulted.
  const structural = toStructuralSchema(versionObjectSchema(v), `${at}.schema`);
  const violations = structuralViolations(structural, `${at}.schema`);
  if (violations.length > 0) throw new UnsupportedSchemaError(`${at}.schema`, violations.join('; '));
  const scale = v.subresources?.scale;
  if (scale) {
    jsonPathUnder(`${at}.subresources.scale.specReplicasPath`, scale.specReplicasPath, ['.spec.']);
    jsonPathUnder(`${at}.subresources.scale.statusReplicasPath`, scale.statusReplicasPath, ['.status.']);
    if (scale.labelSelectorPath !== undefined)
      jsonPathUnder(`${at}.subresources.scale.labelSelectorPath`, scale.labelSelectorPath, ['.spec.', '.status.']);
  }
  validateColumns(v.printerColumns ?? [], `${at}.printerColumns`);
}

function validateColumns(columns: readonly PrinterColumn[], at: string): void {
  const names = new Set<string>();
  for (const [i, c] of columns.entries()) {
    if (typeof c.name !== 'string' || c.name === '') throw new InvalidOptionError(`${at}[${i}].name`, 'is required');
    if (names.has(c.name)) throw new InvalidOptionError(`${at}[${i}].name`, `column ${c.name} is defined twice`);
    names.add(c.name);
    if (!COLUMN_TYPES.has(c.type))
      throw new InvalidOptionError(
        `${at}[${i}].type`,
        `${JSON.stringify(c.type)} must be one of ${[...COLUMN_TYPES].join(', ')}`,
      );
    if (c.format !== undefined && !COLUMN_FORMATS.has(c.format))
      throw new InvalidOptionError(
        `${at}[${i}].format`,
        `${JSON.stringify(c.format)} must be one of ${[...COLUMN_FORMATS].join(', ')}`,
      );
    if (typeof c.jsonPath !== 'string' || !c.jsonPath.startsWith('.'))
      throw new InvalidOptionError(
        `${at}[${i}].jsonPath`,
        `${JSON.stringify(c.jsonPath)} must be a JSON path starting with a dot, e.g. .spec.replicas`,
      );
    if (c.priority !== undefined && (!Number.isInteger(c.priority) || c.priority < 0))
      throw new InvalidOptionError(`${at}[${i}].priority`, 'must be a non-negative integer');
  }
}

function jsonPathUnder(option: string, path: string, prefixes: readonly string[]): void {
  if (typeof path !== 'string' || !SIMPLE_PATH.test(path) || !prefixes.some((p) => path.startsWith(p))) {
    throw new InvalidOptionError(
      option,
      `${JSON.stringify(path)} must be a simple JSON path (no array index) under ${prefixes.join(' or ')}`,
    );
  }
}

function dns1035(option: string, value: unknown): void {
  if (typeof value !== 'string' || value.length > 63 || !DNS1035_LABEL.test(value)) {
    throw new InvalidOptionError(
      option,
      `${JSON.stringify(value)} must be a lowercase DNS-1035 label (a-z, 0-9 and -, starting with a letter, at most 63 characters)`,
    );
  }
}
