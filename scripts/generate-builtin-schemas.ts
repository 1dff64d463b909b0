/**
 * Writes src/crd/builtin-schemas.generated.ts: the schemas of the Kubernetes built-in types a custom
 * kind may embed (PodTemplateSpec, JobTemplateSpec, Container, ObjectReference…), converted from
 * Kubernetes' own OpenAPI definitions (`api/openapi-spec/swagger.json` of a Kubernetes source tree)
 * to structural CRD schemas, as controller-gen embeds them:
 * - `$ref`s are kept as references between the vendored definitions (src/crd/builtin-schemas.ts
 *   inlines them; the roots have no cycles);
 * - IntOrString and Quantity become `x-kubernetes-int-or-string` (Quantity with its pattern),
 *   metav1.Time `format: date-time`, RawExtension a free-form object, an embedded ObjectMeta the
 *   fields the server keeps in templates (name, namespace, labels, annotations, finalizers);
 * - patch strategies, GVK and union annotations (not allowed in CRDs) and descriptions (size: the
 *   CRD must fit `kubectl apply`'s 256 KiB annotation) are dropped; a list-map whose keys are
 *   neither required nor defaulted in the OpenAPI (the server would reject the CRD) keeps its
 *   items but loses the list-map annotation, and each such list is named in the output.
 *
 *   node --import tsx scripts/generate-builtin-schemas.ts [path/to/swagger.json] [--check]
 *
 * Without a path it reads the Kubernetes source tree that scripts/install-control-plane.sh
 * unpacks (~/.cache/operator-runtime/build/kubernetes-<version>/). `--check` exits 1 when the
 * committed file differs from what it would write.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The definitions vendored, with what is reachable from them. */
export const BUILTIN_ROOTS = [
  'io.k8s.api.core.v1.PodTemplateSpec',
  'io.k8s.api.core.v1.PodSpec',
  'io.k8s.api.core.v1.Container',
  'io.k8s.api.core.v1.ObjectReference',
  'io.k8s.api.core.v1.LocalObjectReference',
  'io.k8s.api.core.v1.ResourceRequirements',
  'io.k8s.api.core.v1.EnvVar',
  'io.k8s.api.core.v1.Volume',
  'io.k8s.api.core.v1.Toleration',
  'io.k8s.api.batch.v1beta1.JobTemplateSpec',
  'io.k8s.api.batch.v1.JobSpec',
  'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector',
] as const;

export const OUTPUT = 'src/crd/builtin-schemas.generated.ts';

type Json = Record<string, unknown>;

const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
/** Definitions with a fixed structural form instead of their OpenAPI one. */
const SPECIAL: Readonly<Record<string, Json>> = {
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { 'x-kubernetes-int-or-string': true },
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { 'x-kubernetes-int-or-string': true, pattern: QUANTITY_PATTERN },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': { type: 'string', format: 'date-time' },
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime': { type: 'string', format: 'date-time' },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  // controller-gen's generateEmbeddedObjectMeta: what the server keeps of a template's metadata.
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': {
    type: 'object',
    properties: {
      annotations: { type: 'object', additionalProperties: { type: 'string' } },
      finalizers: { type: 'array', items: { type: 'string' } },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      name: { type: 'string' },
      namespace: { type: 'string' },
    },
  },
};
const KEPT_KEYS = new Set([
  'type',
  'format',
  'enum',
  'default',
  'nullable',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'additionalProperties',
  'items',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
]);

export interface GeneratedModule {
  readonly source: string;
  readonly definitions: Readonly<Record<string, Json>>;
  /** Lists whose list-map annotation was dropped, as `Definition.field`. */
  readonly droppedListMaps: readonly string[];
}

/** The module text for the definitions of `swagger` (an OpenAPI v2 document), from Kubernetes `version`. */
export function generateBuiltinSchemasModule(
  swagger: { definitions: Record<string, Json> },
  version: string,
  source: string,
): GeneratedModule {
  const definitions: Record<string, Json> = {};
  const droppedListMaps: string[] = [];
  const queue: string[] = [...BUILTIN_ROOTS];
  pendingListMaps.length = 0;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name in definitions) continue;
    const def = SPECIAL[name] ?? swagger.definitions[name];
    if (!def) throw new Error(`definition ${name} is not in ${source}`);
    definitions[name] = SPECIAL[name] ? structuredClone(def) : convert(def, name, queue, droppedListMaps);
  }
  finishListMaps(definitions);
  droppedListMaps.sort();
  const sorted = Object.fromEntries(
    Object.keys(definitions)
      .sort()
      .map((k) => [k, definitions[k]!]),
  );
  const text = [
    '// Generated by scripts/generate-builtin-schemas.ts; do not edit. Rerun it to regenerate.',
    `// Source: ${source}, Kubernetes ${version}.`,
    '// Structural CRD schemas of Kubernetes built-in types; `{ $ref }` names another entry (inlined by builtin-schemas.ts).',
    ...(droppedListMaps.length
      ? [`// List-map annotations dropped (a key neither required nor defaulted): ${droppedListMaps.join(', ')}.`]
      : []),
    '',
    `export const BUILTIN_SCHEMAS_KUBERNETES_VERSION = ${JSON.stringify(version)};`,
    '',
    '/** Each definition by its OpenAPI name. */',
    `export const BUILTIN_DEFINITIONS: Readonly<Record<string, unknown>> = ${JSON.stringify(sorted, null, 2)};`,
    '',
  ].join('\n');
  return { source: text, definitions: sorted, droppedListMaps };
}

function convert(node: Json, at: string, queue: string[], droppedListMaps: string[]): Json {
  const ref = node.$ref;
  if (typeof ref === 'string') {
    const target = ref.replace(/^#\/definitions\//, '');
    queue.push(target);
    return { $ref: target };
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (!KEPT_KEYS.has(key)) continue;
    if (key === 'properties') {
      const props: Json = {};
      for (const [name, child] of Object.entries(value as Record<string, Json>))
        props[name] = convert(child, `${at}.${name}`, queue, droppedListMaps);
      out.properties = props;
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] =
        typeof value === 'object' && value !== null
          ? convert(value as Json, `${at}.${key === 'items' ? '[]' : '*'}`, queue, droppedListMaps)
          : value;
    } else {
      out[key] = structuredClone(value);
    }
  }
  if (out.type === undefined && out.properties !== undefined) out.type = 'object';
  if (out.format === 'int-or-string') {
    delete out.format;
    delete out.type;
    out['x-kubernetes-int-or-string'] = true;
  }
  if (
    out.type === undefined &&
    out['x-kubernetes-int-or-string'] === undefined &&
    out['x-kubernetes-preserve-unknown-fields'] === undefined
  ) {
    // An OpenAPI node without a type (e.g. FieldsV1's `{}`) keeps any value, as the server does.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  // Checked once every definition is converted: see finishListMaps.
  if (out['x-kubernetes-list-type'] === 'map') pendingListMaps.push({ node: out, at, droppedListMaps });
  return out;
}

interface PendingListMap {
  readonly node: Json;
  readonly at: string;
  readonly droppedListMaps: string[];
}

const pendingListMaps: PendingListMap[] = [];

/**
 * The server rejects a list-map whose keys are neither required nor defaulted in the items'
 * schema (e.g. ContainerPort.protocol, defaulted in Go but not in the OpenAPI).
 */
function finishListMaps(definitions: Record<string, Json>): void {
  for (const { node, at, droppedListMaps } of pendingListMaps.splice(0)) {
    if (node['x-kubernetes-list-type'] !== 'map') continue;
    let items = node.items as Json | undefined;
    while (items && typeof items.$ref === 'string') items = definitions[items.$ref];
    const keys = (node['x-kubernetes-list-map-keys'] as string[] | undefined) ?? [];
    const required = new Set((items?.required as string[] | undefined) ?? []);
    const props = (items?.properties ?? {}) as Record<string, Json>;
    const ok = keys.length > 0 && keys.every((k) => required.has(k) || props[k]?.default !== undefined);
    if (!ok) {
      delete node['x-kubernetes-list-type'];
      delete node['x-kubernetes-list-map-keys'];
      droppedListMaps.push(at);
    }
  }
}

/** The module for the swagger.json at `swaggerPath`. */
export function generate(swaggerPath: string): GeneratedModule {
  const swagger = JSON.parse(readFileSync(swaggerPath, 'utf8')) as {
    definitions: Record<string, Json>;
    info?: { version?: string };
  };
  // Debian names the tree kubernetes-1.20.5+really1.20.2: the code is 1.20.2's; swagger.json says "unversioned".
  const fromPath =
    /really(\d+\.\d+\.\d+)/.exec(swaggerPath)?.[1] ?? /kubernetes-(\d+\.\d+\.\d+)/.exec(swaggerPath)?.[1];
  return generateBuiltinSchemasModule(
    swagger,
    fromPath ?? swagger.info?.version ?? 'unknown',
    sourceLabel(swaggerPath),
  );
}

/** The swagger.json of the Kubernetes source tree install-control-plane.sh unpacked, if any. */
export function defaultSwaggerPath(): string | undefined {
  const build = join(homedir(), '.cache', 'operator-runtime', 'build');
  if (!existsSync(build)) return undefined;
  for (const entry of readdirSync(build).sort().reverse()) {
    const candidate = join(build, entry, 'api', 'openapi-spec', 'swagger.json');
    if (entry.startsWith('kubernetes-') && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Where the definitions came from, without the machine's home folder. */
function sourceLabel(path: string): string {
  const m = /(kubernetes-[^/]+)\/(api\/openapi-spec\/swagger\.json)$/.exec(path);
  return m ? `Debian's kubernetes source package (${m[1]}), ${m[2]}` : path.split('/').slice(-3).join('/');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const path = args.find((a) => !a.startsWith('--')) ?? defaultSwaggerPath();
  if (!path) {
    console.error(
      'no swagger.json: pass its path, or run scripts/install-control-plane.sh (it unpacks the Kubernetes source)',
    );
    process.exit(2);
  }
  const { source, droppedListMaps } = generate(path);
  if (check) {
    const current = existsSync(OUTPUT) ? readFileSync(OUTPUT, 'utf8') : '';
    if (current !== source) {
      console.error(`${OUTPUT} differs from what ${path} gives; rerun scripts/generate-builtin-schemas.ts`);
      process.exit(1);
    }
  } else {
    writeFileSync(OUTPUT, source);
    console.log(`wrote ${OUTPUT} (${source.length} bytes) from ${path}; list-maps dropped: ${droppedListMaps.length}`);
  }
}
