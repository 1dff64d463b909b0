/**
 * Idempotence by hash: the hash of the desired state we last wrote lives in our own
 * annotation on the object, so the next reconcile can tell "nothing to do" without a field-by-field
 * comparison against a server-defaulted object. Our annotation, never kubectl's
 * last-applied-configuration.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import { cloneJson, type MetaObject } from './meta-object.js';

export const SPEC_HASH_ANNOTATION = 'operator-runtime.io/spec-hash';

/**
 * sha256 (hex) of the canonical JSON (sorted keys) of what we manage in `obj`: every top-level
 * field except apiVersion, kind, metadata and status, plus the labels, annotations (without the
 * hash annotation itself) and ownerReferences. Server-set fields (resourceVersion, uid, managedFields…)
 * are left out, so the hash of a desired object is stable across reconciles.
 */
export function specHash<T extends MetaObject>(obj: T): string {
  const {
    apiVersion: _a,
    kind: _k,
    metadata,
    status: _s,
    ...rest
  } = obj as unknown as MetaObject & { status?: unknown; [key: string]: unknown };
  const annotations = { ...metadata?.annotations };
  delete annotations[SPEC_HASH_ANNOTATION];
  const managed = {
    ...rest,
    metadata: {
      labels: metadata?.labels ?? {},
      annotations,
      ownerReferences: metadata?.ownerReferences ?? [],
    },
  };
  return createHash('sha256').update(canonicalJson(managed)).digest('hex');
}

/** A copy of `obj` with its spec hash in the `SPEC_HASH_ANNOTATION` annotation. */
export function withSpecHash<T extends MetaObject>(obj: T): T {
  const copy = cloneJson(obj);
  const meta = (copy.metadata ??= {});
  meta.annotations = { ...meta.annotations, [SPEC_HASH_ANNOTATION]: specHash(obj) };
  return copy;
}

/** Whether `current` (as read) carries the hash of `desired`: the last write already applied it. */
export function specHashMatches<C extends MetaObject, D extends MetaObject>(
  current: C | undefined,
  desired: D,
): boolean {
  const stored = current?.metadata?.annotations?.[SPEC_HASH_ANNOTATION];
  return stored !== undefined && stored === specHash(desired);
}
