/**
 * Apply configurations: what a server-side apply sends, typed from the kind. An apply states the
 * fields a manager wants to own and nothing else, so every field is optional (controller-runtime's
 * generated `…ApplyConfiguration` types, derived here from the object type the kind carries):
 * `client.apply(kinds.Deployment, { metadata: { name, namespace }, spec: { replicas: 3 } }, opts)`
 * type-checks without a cast, and a misspelt field does not.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { ApplyOptions, ObjectLike } from './client-options.js';
import type { Kind } from './kind.js';

/** `T` with every field optional, all the way down (array elements too). */
export type DeepPartial<T> = T extends (infer E)[]
  ? DeepPartial<E>[]
  : T extends readonly (infer E)[]
    ? readonly DeepPartial<E>[]
    : T extends object
      ? { [K in keyof T]?: DeepPartial<T[K]> }
      : T;

type MetadataOf<T> = T extends { metadata?: infer M } ? NonNullable<M> : never;

/**
 * The metadata of an apply configuration: the name addresses the object, the rest is optional;
 * what the server sets is left out (an apply carrying `managedFields` is rejected).
 */
export type ApplyMetadata<T> = { name: string; namespace?: string } & DeepPartial<
  Omit<
    MetadataOf<T>,
    | 'name'
    | 'namespace'
    | 'uid'
    | 'resourceVersion'
    | 'generation'
    | 'managedFields'
    | 'creationTimestamp'
    | 'deletionTimestamp'
    | 'deletionGracePeriodSeconds'
    | 'selfLink'
    | 'generateName'
  >
>;

/**
 * What to apply to an object of type `T`: its name (and namespace), and any of its other fields.
 * apiVersion and kind come from the kind it is applied as.
 */
export type ApplyConfiguration<T> = { metadata: ApplyMetadata<T> } & DeepPartial<
  Omit<T, 'apiVersion' | 'kind' | 'metadata'>
>;

/** What to apply to the `status` subresource of an object of type `T`: its name and status fields. */
export type StatusApplyConfiguration<T> = {
  metadata: { name: string; namespace?: string };
} & (T extends { status?: infer S } ? { status?: DeepPartial<NonNullable<S>> } : { status?: never });

/** The object a typed apply sends: the configuration with the kind's apiVersion and kind. */
export function appliedObject(type: Kind<unknown>, config: object): ObjectLike {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new InvalidArgumentError(`apply of ${type.kind}: the apply configuration must be an object`);
  const metadata = (config as ObjectLike).metadata;
  if (!metadata?.name)
    throw new InvalidArgumentError(`apply of ${type.kind}: the apply configuration needs metadata.name`);
  return { ...config, apiVersion: type.apiVersion, kind: type.kind };
}

/**
 * The object and options of either form of `apply`/`applyStatus` — `(obj, opts)` or the typed
 * `(kind, config, opts)` — so every client implements both through one code path.
 */
export function applyArguments(
  first: object,
  second: object,
  third: object | undefined,
): { obj: ObjectLike; opts: ApplyOptions } {
  if (third === undefined) return { obj: first as ObjectLike, opts: second as ApplyOptions };
  return { obj: appliedObject(first as Kind<unknown>, second), opts: third as ApplyOptions };
}
