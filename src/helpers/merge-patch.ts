import { jsonEqual } from './canonical-json.js';

/**
 * The RFC 7386 JSON merge patch that turns `before` into `after`: changed members, `null` for
 * removed ones, nested objects diffed recursively, arrays replaced whole (which is why every merge
 * patch the helpers send also carries the resourceVersion it was computed from). Returns undefined
 * when the two are equal, so callers can skip the write.
 */
export function createMergePatch(before: unknown, after: unknown): unknown {
  if (jsonEqual(before, after)) return undefined;
  if (!isPlainObject(before) || !isPlainObject(after)) return after === undefined ? null : after;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && after[key] === undefined) patch[key] = null;
  }
  for (const key of Object.keys(after)) {
    const a = after[key];
    if (a === undefined) continue;
    const b = before[key];
    if (b === undefined) {
      patch[key] = a;
      continue;
    }
    const sub = createMergePatch(b, a);
    if (sub !== undefined) patch[key] = sub;
  }
  return patch;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
