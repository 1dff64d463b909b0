/**
 * `customResourceDefinition`: the apiextensions.k8s.io/v1 CRD for a custom kind, every version with
 * its structural schema, subresources and printer columns. The output is checked against the
 * structural-schema rules before it is returned, so a generator bug never reaches a cluster.
 */
import type { CustomResourceConversion } from 'kubernetes-types/apiextensions/v1.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { AnyCustomKind } from './custom-kind.js';
import type { CustomKindVersionDefinition, PrinterColumn, Scope, Subresources } from './custom-kind-definition.js';
import { NonStructuralSchemaError } from './errors.js';
import type { JSONSchemaProps } from './schema-props.js';
import { structuralViolations } from './structural-check.js';
import { toStructuralSchema } from './structural-schema.js';
import { versionObjectSchema } from './version-schema.js';

export interface CustomResourceDefinitionOptions {
  /** How the API server converts between versions (a webhook's `conversion` stanza). @defaultValue none: only apiVersion changes */
  readonly conversion?: CustomResourceConversion;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  subresources?: Subresources;
  additionalPrinterColumns?: PrinterColumn[];
  schema: { openAPIV3Schema: JSONSchemaProps };
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition, with the schema extensions typed. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind?: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    scope: Scope;
    versions: CustomResourceDefinitionVersion[];
    conversion?: CustomResourceConversion;
  };
}

/**
 * The CRD of a kind made by `defineCustomKind` (any of its versions: the CRD holds them all).
 * @throws NonStructuralSchemaError if a generated schema breaks a structural rule (a generator bug)
 */
export function customResourceDefinition(
  kind: AnyCustomKind,
  options: CustomResourceDefinitionOptions = {},
): CustomResourceDefinition {
  const { group, names, scope, versions } = kind.definition;
  const name = `${names.plural}.${group}`;
  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name,
      ...(options.labels ? { labels: { ...options.labels } } : {}),
      ...(options.annotations ? { annotations: { ...options.annotations } } : {}),
    },
    spec: {
      group,
      names: {
        kind: names.kind,
        ...omitUndefined({ listKind: names.listKind || undefined }),
        plural: names.plural,
        singular: names.singular ?? names.kind.toLowerCase(),
        ...(names.shortNames?.length ? { shortNames: [...names.shortNames] } : {}),
        ...(names.categories?.length ? { categories: [...names.categories] } : {}),
      },
      scope,
      versions: versions.map((v) => crdVersion(v)),
      ...omitUndefined({ conversion: options.conversion }),
    },
  };
  const violations = crd.spec.versions.flatMap((v) =>
    structuralViolations(v.schema.openAPIV3Schema, `versions[${v.name}].schema.openAPIV3Schema`),
  );
  if (violations.length > 0) throw new NonStructuralSchemaError(name, violations);
  return crd;
}

function crdVersion(v: CustomKindVersionDefinition): CustomResourceDefinitionVersion {
  const subresources =
    v.subresources && (v.subresources.status || v.subresources.scale)
      ? {
          ...(v.subresources.status ? { status: {} } : {}),
          ...(v.subresources.scale ? { scale: { ...v.subresources.scale } } : {}),
        }
      : undefined;
  return {
    name: v.name,
    served: v.served,
    storage: v.storage,
    // false and '' are left out as absent, so the manifest carries only what was set.
    ...omitUndefined({
      deprecated: v.deprecated || undefined,
      deprecationWarning: v.deprecationWarning || undefined,
      subresources,
    }),
    ...(v.printerColumns?.length ? { additionalPrinterColumns: v.printerColumns.map(column) } : {}),
    schema: { openAPIV3Schema: toStructuralSchema(versionObjectSchema(v), `versions[${v.name}].schema`) },
  };
}

function column(c: PrinterColumn): PrinterColumn {
  return {
    name: c.name,
    type: c.type,
    // '' and a priority of 0 (the default) are left out as absent.
    ...omitUndefined({ format: c.format, description: c.description || undefined, priority: c.priority || undefined }),
    jsonPath: c.jsonPath,
  };
}
