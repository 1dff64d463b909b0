/**
 * What `defineCustomKind` takes: a custom resource's group, names, scope and versions, each version
 * with its TypeBox schema. The shapes follow apiextensions.k8s.io/v1 so a reader of a CRD finds
 * the same names here.
 */
import type { TSchema } from 'typebox';
import type { ValidationRule } from './schema-props.js';

export type Scope = 'Namespaced' | 'Cluster';

/**
 * The top-level fields of a version's objects besides `apiVersion`, `kind` and `metadata`: usually
 * `spec` and `status`. `status` is always optional; another field is required unless wrapped in
 * `Type.Optional`.
 */
export interface CustomKindSchema {
  readonly [field: string]: TSchema;
}

export interface CustomKindNames {
  /** CamelCase, singular: `Database`. */
  readonly kind: string;
  /** Lowercase, used in URLs and RBAC rules: `databases`. */
  readonly plural: string;
  /** Lowercase: `database`. @defaultValue the kind, lowercased */
  readonly singular?: string;
  /** @defaultValue `<kind>List` (set by the API server) */
  readonly listKind?: string;
  /** Short names for kubectl: `db`. */
  readonly shortNames?: readonly string[];
  /** Groups of resources for kubectl, such as `all`. */
  readonly categories?: readonly string[];
}

/** One column of `kubectl get`. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** A simple JSON path into the object, e.g. `.spec.replicas`. */
  readonly jsonPath: string;
  readonly description?: string;
  readonly format?: 'int32' | 'int64' | 'float' | 'double' | 'byte' | 'date' | 'date-time' | 'password';
  /** 0 shows the column by default; higher ones only with `-o wide`. @defaultValue 0 */
  readonly priority?: number;
}

/** The `/scale` subresource (what `kubectl scale` and the HorizontalPodAutoscaler use). */
export interface ScaleSubresource {
  /** Under `.spec`, e.g. `.spec.replicas`. */
  readonly specReplicasPath: string;
  /** Under `.status`, e.g. `.status.replicas`. */
  readonly statusReplicasPath: string;
  /** Under `.spec` or `.status`: the selector string the autoscaler counts pods with. */
  readonly labelSelectorPath?: string;
}

export interface Subresources {
  /** Serve `/status`: writes to the object ignore `status`, writes to `/status` everything else. */
  readonly status?: Record<string, never>;
  readonly scale?: ScaleSubresource;
}

export interface CustomKindVersionDefinition {
  /** `v1`, `v1beta1`…: a DNS-1035 label. */
  readonly name: string;
  readonly served: boolean;
  /** Exactly one version is stored; the others are converted to and from it. */
  readonly storage: boolean;
  readonly deprecated?: boolean;
  /** Only with `deprecated: true`. */
  readonly deprecationWarning?: string;
  readonly schema: CustomKindSchema;
  readonly subresources?: Subresources;
  readonly printerColumns?: readonly PrinterColumn[];
  /**
   * CEL rules on the whole object (`x-kubernetes-validations` at the schema's root), for rules that
   * span spec and status or read `metadata.name`; a string is a rule without a message.
   * Kubernetes 1.25+; older servers ignore them.
   */
  readonly validations?: readonly (ValidationRule | string)[];
}

export interface CustomKindDefinition {
  /** A DNS subdomain with at least one dot: `example.com`. */
  readonly group: string;
  readonly names: CustomKindNames;
  readonly scope: Scope;
  readonly versions: readonly CustomKindVersionDefinition[];
}
