/**
 * One pass of kube-controller-manager's garbage collector over the fake's objects, for tests that
 * drive it explicitly (`FakeClient.collectGarbage()`): owner references are matched by uid (and
 * namespace, for namespaced owners), as the real collector does.
 */
import { clone, isObject, type JsonObject } from './json-value.js';
import type { KindInfo } from './kind-registry.js';
import { asStrings, metaOf } from './write-rules.js';

export interface GarbageCollectorHost {
  objects(): { kind: KindInfo; key: string; obj: JsonObject }[];
  /** A background delete (finalizers of the dependent still hold it). */
  delete(kind: KindInfo, key: string, obj: JsonObject): void;
  update(kind: KindInfo, key: string, before: JsonObject, after: JsonObject): void;
}

interface OwnerRef {
  uid?: unknown;
  blockOwnerDeletion?: unknown;
}

function refsOf(obj: JsonObject): OwnerRef[] {
  const refs = metaOf(obj).ownerReferences;
  return Array.isArray(refs) ? refs.filter(isObject) : [];
}

/** Returns the number of writes made; 0 means nothing left to collect. */
export function collectGarbageOnce(host: GarbageCollectorHost): number {
  const all = host.objects();
  const byUid = new Map<string, { kind: KindInfo; obj: JsonObject }>();
  for (const o of all) byUid.set(String(metaOf(o.obj).uid), o);
  const ownerOf = (dependent: JsonObject, ref: OwnerRef): { kind: KindInfo; obj: JsonObject } | undefined => {
    const owner = byUid.get(String(ref.uid));
    if (!owner) return undefined;
    // A namespaced owner only owns dependents in its own namespace.
    if (owner.kind.namespaced && metaOf(owner.obj).namespace !== metaOf(dependent).namespace) return undefined;
    return owner;
  };
  const dependentsOf = (uid: unknown) =>
    all.filter((d) => refsOf(d.obj).some((r) => r.uid === uid && ownerOf(d.obj, r)));

  for (const o of all) {
    const meta = metaOf(o.obj);
    if (meta.deletionTimestamp === undefined) continue;
    const finalizers = asStrings(meta.finalizers);
    if (finalizers.includes('orphan')) {
      const dependents = dependentsOf(meta.uid);
      for (const d of dependents) {
        const after = clone(d.obj);
        metaOf(after).ownerReferences = refsOf(after).filter((r) => r.uid !== meta.uid);
        if ((metaOf(after).ownerReferences as unknown[]).length === 0) delete metaOf(after).ownerReferences;
        host.update(d.kind, d.key, d.obj, after);
      }
      const after = clone(o.obj);
      metaOf(after).finalizers = finalizers.filter((f) => f !== 'orphan');
      host.update(o.kind, o.key, o.obj, after);
      return dependents.length + 1;
    }
    if (finalizers.includes('foregroundDeletion')) {
      const dependents = dependentsOf(meta.uid);
      const live = dependents.filter((d) => metaOf(d.obj).deletionTimestamp === undefined);
      for (const d of live) host.delete(d.kind, d.key, d.obj);
      if (live.length > 0) return live.length;
      // Only dependents that block their owner's deletion keep it waiting.
      const blocking = dependents.filter((d) =>
        refsOf(d.obj).some((r) => r.uid === meta.uid && r.blockOwnerDeletion === true),
      );
      if (blocking.length > 0) continue;
      const after = clone(o.obj);
      metaOf(after).finalizers = finalizers.filter((f) => f !== 'foregroundDeletion');
      host.update(o.kind, o.key, o.obj, after);
      return 1;
    }
  }
  for (const d of all) {
    const refs = refsOf(d.obj);
    if (refs.length === 0) continue;
    const present = refs.filter((r) => ownerOf(d.obj, r));
    if (present.length === refs.length) continue;
    if (metaOf(d.obj).deletionTimestamp !== undefined && present.length === 0) continue;
    if (present.length === 0) {
      host.delete(d.kind, d.key, d.obj);
      return 1;
    }
    const after = clone(d.obj);
    metaOf(after).ownerReferences = present;
    host.update(d.kind, d.key, d.obj, after);
    return 1;
  }
  return 0;
}
