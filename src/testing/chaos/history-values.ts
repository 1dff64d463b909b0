/**
 * etcd values of a recorded history as JSON objects, decoded once: the consistency audit and the
 * simulation's lost-update oracle read the same values, and the simulation's history recorder
 * encodes them from objects it already holds. A decoded object is shared by every reader, so
 * readers never change it; a value (its bytes) is never changed once recorded.
 */

/** Decoded values by the bytes' identity; `null`: not a JSON object. */
const decoded = new WeakMap<Uint8Array, Record<string, unknown> | null>();

/** The value as a JSON object, or undefined if it is none (empty, protobuf, not an object, bad JSON). */
export function decodeHistoryValue(value: Uint8Array): Record<string, unknown> | undefined {
  let obj = decoded.get(value);
  if (obj === undefined) {
    obj = parseJsonObject(value) ?? null;
    decoded.set(value, obj);
  }
  return obj ?? undefined;
}

/**
 * `obj` as a history value (JSON bytes), remembered as decoded to `obj` itself: the caller hands
 * `obj` over (plain JSON data, which nobody changes afterwards).
 */
export function encodeHistoryValue(obj: Record<string, unknown>): Uint8Array {
  const value = Buffer.from(JSON.stringify(obj), 'utf8');
  decoded.set(value, obj);
  return value;
}

function parseJsonObject(value: Uint8Array): Record<string, unknown> | undefined {
  if (value.length === 0 || value[0] !== 0x7b /* { */) return undefined;
  try {
    const v = JSON.parse(Buffer.from(value).toString('utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
