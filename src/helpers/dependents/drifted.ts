/**
 * Whether the object as read still holds what we want: every field `desired` sets has that value in
 * `current` (fields the server or others added are fine). The spec hash alone says only that our
 * desired state did not change; an edit someone made to a field we own leaves the hash in place, so
 * without this check a server-side apply skipped on the hash would never undo it.
 */
import { isPlainObject } from '../merge-patch.js';

export function drifted(desired: object, current: object): boolean {
  const { status: _ignored, ...wanted } = desired as { status?: unknown };
  return !contains(current, wanted);
}

function contains(have: unknown, want: unknown): boolean {
  if (Array.isArray(want))
    return Array.isArray(have) && have.length === want.length && want.every((w, i) => contains(have[i], w));
  if (isPlainObject(want))
    return isPlainObject(have) && Object.entries(want).every(([k, v]) => v === undefined || contains(have[k], v));
  return have === want;
}
