/**
 * RFC 7386 JSON merge patch, and the fake's approximation of strategic merge patch. Strategic merge
 * here is merge patch except that lists of objects which all carry a `name` (containers, env,
 * volumes, ports) or a `type` (conditions) are merged item by item on that key, and an item with
 * `$patch: delete` removes its match. Other directives (`$retainKeys`, `$setElementOrder`,
 * `$deleteFromPrimitiveList`) and per-field patch strategies from the Go types are not modelled.
 */
import { isObject, type JsonObject } from './json-value.js';

/*
 * Neither input is changed, and the result shares what the patch leaves alone with `target` (and
 * what it sets with `patch`): only the objects along the patched paths are new. The fake copies the
 * result before it stores it (prepareUpdate), so a patch costs its own size, not the object's.
 */

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

export function applyStrategicMergePatch(target: unknown, patch: unknown): unknown {
  if (Array.isArray(patch) && Array.isArray(target)) {
    const mergeKey = listMergeKey(patch) ?? listMergeKey(target);
    if (mergeKey) return mergeListByKey(target, patch, mergeKey);
    return patch;
  }
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$')) continue;
    if (v === null) delete out[k];
    else out[k] = applyStrategicMergePatch(out[k], v);
  }
  return out;
}

function listMergeKey(list: unknown[]): string | undefined {
  if (list.length === 0 || !list.every(isObject)) return undefined;
  for (const key of ['name', 'type']) if (list.every((i) => typeof (i as JsonObject)[key] === 'string')) return key;
  return undefined;
}

function mergeListByKey(target: unknown[], patch: unknown[], key: string): unknown[] {
  const out = [...target] as JsonObject[];
  for (const item of patch as JsonObject[]) {
    const at = out.findIndex((o) => isObject(o) && o[key] === item[key]);
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
    } else if (at >= 0) out[at] = applyStrategicMergePatch(out[at], item) as JsonObject;
    else out.push(applyStrategicMergePatch({}, item) as JsonObject);
  }
  return out;
}
