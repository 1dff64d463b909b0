/**
 * `defineCustomKind`: a custom resource defined once, as TypeBox schemas, and its TypeScript type
 * derived from them, as kube-rs derives both from one Rust struct. The result is the `Kind<T>` of
 * the storage version, so the client, cache and controller builder type its objects without a
 * hand-written interface; `customResourceDefinition` turns the same definition into the CRD.
 */
import type { Static, TObject, TOptional } from 'typebox';
import type { ResourceType } from '../client/discovery.js';
import type { Kind } from '../client/kind.js';
import type { ObjectMeta } from '../core/object-key.js';
import type {
  CustomKindDefinition,
  CustomKindSchema,
  CustomKindVersionDefinition,
  Scope,
} from './custom-kind-definition.js';
import { InvalidOptionError } from '../core/errors.js';
import { validateDefinition } from './definition-validation.js';

/** Metadata of an object as the API server returns it: these fields are always set. */
export interface CustomObjectMeta extends ObjectMeta {
  name: string;
  uid: string;
  resourceVersion: string;
  generation: number;
}

/** Metadata of a namespaced object as the API server returns it. */
export interface NamespacedObjectMeta extends CustomObjectMeta {
  namespace: string;
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The top-level fields' static type; `status` is optional whatever its schema says. */
type FieldsOf<S extends CustomKindSchema> = Static<
  TObject<{ [K in keyof S]: K extends 'status' ? TOptional<S[K]> : S[K] }>
>;

type VersionNamed<D extends CustomKindDefinition, V extends string> = Extract<
  D['versions'][number],
  { readonly name: V }
>;

/** The name of the version with `storage: true` (all names when the literal `true` was lost to a `boolean`). */
export type StorageVersionOf<D extends CustomKindDefinition> = [
  Extract<D['versions'][number], { readonly storage: true }>,
] extends [never]
  ? D['versions'][number]['name']
  : Extract<D['versions'][number], { readonly storage: true }>['name'];

/** An object of version `V` of the custom kind `D`, as the API server returns it. */
export type CustomObject<D extends CustomKindDefinition, V extends string> = Simplify<
  {
    apiVersion: `${D['group']}/${V}`;
    kind: D['names']['kind'];
    metadata: D['scope'] extends 'Cluster' ? CustomObjectMeta : NamespacedObjectMeta;
  } & FieldsOf<VersionNamed<D, V>['schema']>
>;

/**
 * An object of kind `K` as a client writes it (create, apply): the same fields as `ObjectOf<K>`, but
 * only what the writer sets in `metadata` (name or generateName; uid, resourceVersion and
 * generation come from the server).
 */
export type NewObjectOf<K> = K extends Kind<infer T> ? Simplify<Omit<T, 'metadata'> & { metadata: ObjectMeta }> : never;

/** What every custom kind carries at run time, whatever its definition: what generators (CRD, RBAC) read. */
export interface AnyCustomKind extends ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
  readonly group: string;
  readonly plural: string;
  readonly singular: string;
  readonly scope: Scope;
  /** The version this kind addresses. */
  readonly versionName: string;
  /** The version the API server stores. */
  readonly storageVersion: string;
  readonly definition: CustomKindDefinition;
}

/** Version `V` of the custom kind `D`: a `Kind<CustomObject<D, V>>` that also knows its definition. */
export interface CustomKind<D extends CustomKindDefinition = CustomKindDefinition, V extends string = string>
  extends Kind<CustomObject<D, V>>, AnyCustomKind {
  readonly apiVersion: `${D['group']}/${V}`;
  readonly kind: D['names']['kind'];
  readonly group: D['group'];
  readonly plural: D['names']['plural'];
  readonly scope: D['scope'];
  readonly versionName: V;
  readonly storageVersion: StorageVersionOf<D>;
  readonly definition: D;
  /** The kind of another version of the same resource, e.g. `DATABASE.version('v1alpha1')`. */
  version<N extends D['versions'][number]['name']>(name: N): CustomKind<D, N>;
}

/**
 * Defines a custom kind from TypeBox schemas; the definition is checked now (names, versions,
 * subresources, columns, and that every schema has a structural CRD form).
 * @returns the storage version's kind; `.version(name)` gives the others
 * @throws InvalidOptionError naming the field the API server would reject
 * @throws UnsupportedSchemaError naming the schema node that has no structural CRD form
 */
export function defineCustomKind<const D extends CustomKindDefinition>(
  definition: D,
): CustomKind<D, StorageVersionOf<D>> {
  validateDefinition(definition);
  const storage = definition.versions.find((v) => v.storage)!;
  const byName = new Map<string, AnyCustomKind>();
  const versionKind = (version: CustomKindVersionDefinition): AnyCustomKind => {
    const existing = byName.get(version.name);
    if (existing) return existing;
    const made = Object.freeze({
      apiVersion: `${definition.group}/${version.name}`,
      kind: definition.names.kind,
      group: definition.group,
      plural: definition.names.plural,
      singular: definition.names.singular ?? definition.names.kind.toLowerCase(),
      scope: definition.scope,
      versionName: version.name,
      storageVersion: storage.name,
      definition,
      version: (name: string) => versionKind(versionNamed(definition, name)),
    });
    byName.set(version.name, made);
    return made;
  };
  // The object literal holds the runtime fields; the literal types (apiVersion template, names) are
  // what the definition says, which TypeScript cannot follow through the map.
  return versionKind(storage) as CustomKind<D, StorageVersionOf<D>>;
}

function versionNamed(definition: CustomKindDefinition, name: string): CustomKindVersionDefinition {
  const version = definition.versions.find((v) => v.name === name);
  if (!version) {
    throw new InvalidOptionError(
      'version',
      `${definition.names.plural}.${definition.group} has no version ${JSON.stringify(name)} (it has ${definition.versions.map((v) => v.name).join(', ')})`,
    );
  }
  return version;
}
