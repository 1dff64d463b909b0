/**
 * Owner references, so the garbage collector deletes what we created when its owner goes, and
 * owner-based event handlers can map a child's event to its owner. One controller per object.
 */
import type { OwnerReference } from '../core/object-key.js';
import { parseApiVersion } from '../core/object-key.js';
import { AlreadyOwnedError, CrossNamespaceOwnerError, IncompleteObjectError } from './errors.js';
import type { MetaObject } from './meta-object.js';

export interface OwnerReferenceOptions {
  /**
   * Whether deleting the owner with foreground propagation waits for this child. Needs permission
   * to update the owner's finalizers (the `<resource>/finalizers` subresource) under RBAC.
   * @defaultValue true
   */
  readonly blockOwnerDeletion?: boolean;
}

/**
 * Makes `owner` the controller of `child` (controller: true, blockOwnerDeletion: true), in place,
 * and returns `child`. Replaces an existing reference to the same owner; keeps every other one.
 * Throws `AlreadyOwnedError` if another object is the controller, and
 * `CrossNamespaceOwnerError` for references the garbage collector would treat as dangling.
 *
 * Scope is read from `metadata.namespace`: set the child's namespace before calling, or a
 * namespaced child looks cluster-scoped and is refused under a namespaced owner.
 */
export function setControllerReference<C extends MetaObject>(
  owner: MetaObject,
  child: C,
  options: OwnerReferenceOptions = {},
): C {
  const ref: OwnerReference = {
    ...referenceTo(owner),
    controller: true,
    blockOwnerDeletion: options.blockOwnerDeletion ?? true,
  };
  checkNamespaces(owner, child);
  const current = getControllerOf(child);
  if (current && !sameObject(current, ref)) {
    throw new AlreadyOwnedError(
      `${describe(child)} is already controlled by ${current.kind} ${current.name} (${current.uid}); it cannot also be controlled by ${ref.kind} ${ref.name}`,
      { apiVersion: current.apiVersion, kind: current.kind, name: current.name, uid: current.uid },
    );
  }
  upsert(child, ref);
  return child;
}

/**
 * Adds a non-controlling reference to `owner` to `child`, in place, and returns `child`. If `owner`
 * is already referenced the reference is refreshed and its `controller` flag kept.
 */
export function setOwnerReference<C extends MetaObject>(
  owner: MetaObject,
  child: C,
  options: OwnerReferenceOptions = {},
): C {
  const ref: OwnerReference = referenceTo(owner);
  checkNamespaces(owner, child);
  const existing = child.metadata?.ownerReferences?.find((r) => sameObject(r, ref));
  if (existing?.controller) ref.controller = true;
  const block = options.blockOwnerDeletion ?? existing?.blockOwnerDeletion;
  if (block !== undefined) ref.blockOwnerDeletion = block;
  upsert(child, ref);
  return child;
}

/** Removes any reference to `owner` from `child`, in place; returns whether one was there. */
export function removeOwnerReference(owner: MetaObject, child: MetaObject): boolean {
  const ref = referenceTo(owner);
  const refs = child.metadata?.ownerReferences;
  if (!refs) return false;
  const kept = refs.filter((r) => !sameObject(r, ref));
  if (kept.length === refs.length) return false;
  child.metadata!.ownerReferences = kept;
  return true;
}

/** The reference with `controller: true`, if any. */
export function getControllerOf(obj: MetaObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** Whether `owner` (by uid) is the controller of `child`. */
export function isControlledBy(child: MetaObject, owner: MetaObject): boolean {
  const uid = owner.metadata?.uid;
  return uid !== undefined && getControllerOf(child)?.uid === uid;
}

function referenceTo(owner: MetaObject): OwnerReference {
  const { apiVersion, kind } = owner;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  // The uid only exists once the owner was read from (or created on) the server.
  if (!apiVersion || !kind || !name || !uid) {
    throw new IncompleteObjectError(
      'an owner needs apiVersion, kind, metadata.name and metadata.uid (read it from the API server first)',
    );
  }
  return { apiVersion, kind, name, uid };
}

function checkNamespaces(owner: MetaObject, child: MetaObject): void {
  const ownerNs = owner.metadata?.namespace || undefined;
  const childNs = child.metadata?.namespace || undefined;
  if (ownerNs === undefined) return; // a cluster-scoped owner may own anything
  if (childNs === undefined) {
    throw new CrossNamespaceOwnerError(
      `cluster-scoped ${describe(child)} cannot be owned by namespaced ${describe(owner)}`,
    );
  }
  if (childNs !== ownerNs) {
    throw new CrossNamespaceOwnerError(
      `${describe(child)} cannot be owned by ${describe(owner)}: owner references cannot cross namespaces`,
    );
  }
}

/** Same object as controller-runtime decides it: API group, kind and name (the version may differ). */
function sameObject(a: OwnerReference, b: OwnerReference): boolean {
  return (
    parseApiVersion(a.apiVersion).group === parseApiVersion(b.apiVersion).group &&
    a.kind === b.kind &&
    a.name === b.name
  );
}

function upsert(child: MetaObject, ref: OwnerReference): void {
  const meta = (child.metadata ??= {});
  const refs = meta.ownerReferences ?? [];
  const i = refs.findIndex((r) => sameObject(r, ref));
  meta.ownerReferences = i < 0 ? [...refs, ref] : refs.map((r, j) => (j === i ? ref : r));
}

function describe(obj: MetaObject): string {
  const ns = obj.metadata?.namespace;
  return `${obj.kind ?? 'object'} ${ns ? `${ns}/` : ''}${obj.metadata?.name ?? obj.metadata?.generateName ?? '?'}`;
}
