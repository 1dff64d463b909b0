/**
 * `Kind<T>`: a kind's address (apiVersion + kind) that also carries the TypeScript type of its
 * objects, so `client.get(kinds.StatefulSet, …)` returns a `StatefulSet` without a cast, as kube-rs
 * carries `K` from `Api<K>` to the reconciler. At run time a kind is just `{ apiVersion, kind }`.
 */
import type { ResourceType } from './discovery.js';
import type { KubeObject } from '../core/object-key.js';

declare const objectType: unique symbol;

/**
 * A kind whose objects have type `T`. Any `{ apiVersion, kind }` is a `Kind<KubeObject>`-compatible
 * address; `kind<T>()` and the `kinds` table give one that names its type.
 */
export interface Kind<T = KubeObject> extends ResourceType {
  /** Type-only (never present at run time): the objects' TypeScript type. */
  readonly [objectType]?: T;
}

/** The object type a kind carries. */
export type ObjectOf<K> = K extends Kind<infer T> ? T : never;

/** A kind descriptor for `T`, e.g. `kind<Database>('example.com/v1', 'Database')` for a custom resource. */
export function kind<T extends KubeObject>(apiVersion: string, kindName: string): Kind<T> {
  return { apiVersion, kind: kindName };
}
