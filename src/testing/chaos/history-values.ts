/**
 * etcd values of a recorded history as JSON objects, decoded once: the consistency audit and the
 * simulation's lost-update oracle read the same values, and the simulation's history recorder
 * records objects it already holds, written out as bytes only if someone reads them. A decoded object is shared by every reader, so
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

/** Objects of kvs whose value is written out only when read (`withLazyValue`). */
const kvObjects = new WeakMap<object, Record<string, unknown>>();

/**
 * Gives `kv` a `value` (enumerable, after its other members) holding `obj` as JSON bytes, written
 * only when first read: the oracles read the object itself (`decodeHistoryKv`), so a simulated
 * run's values are usually never written. The caller hands `obj` over (plain JSON data, which
 * nobody changes afterwards).
 */
export function withLazyValue<K extends object>(
  kv: K,
  obj: Record<string, unknown>,
): K & { readonly value: Uint8Array } {
  let value: Uint8Array | undefined;
  Object.defineProperty(kv, 'value', {
    enumerable: true,
    configurable: true,
    get: () => {
      if (!value) {
        value = Buffer.from(JSON.stringify(obj), 'utf8');
        decoded.set(value, obj);
      }
      return value;
    },
  });
  kvObjects.set(kv, obj);
  return kv as K & { readonly value: Uint8Array };
}

/** `decodeHistoryValue(kv.value)`, without writing out a lazy value first. */
export function decodeHistoryKv(kv: { readonly value: Uint8Array }): Record<string, unknown> | undefined {
  return kvObjects.get(kv) ?? decodeHistoryValue(kv.value);
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
