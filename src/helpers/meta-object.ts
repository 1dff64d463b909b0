import { types } from 'node:util';
import type { OwnerReference } from '../core/object-key.js';

/**
 * The metadata fields the helpers read and write. Structural, so `kubernetes-types` objects
 * (ConfigMap, Deployment…), `KubeObject` and custom resource interfaces all fit without casts.
 */
export interface MetadataLike {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: { [key: string]: string };
  annotations?: { [key: string]: string };
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
}

/** Any Kubernetes object as plain JSON, addressed by apiVersion + kind + metadata. */
export interface MetaObject {
  apiVersion?: string;
  kind?: string;
  metadata?: MetadataLike;
}

/**
 * A deep copy of plain JSON (objects from the API never hold anything else), exactly as
 * `structuredClone` makes it. Plain objects, arrays and primitives are copied directly, several
 * times faster (the helpers copy every object they diff); shared references and cycles stay shared
 * as `structuredClone` keeps them. Anything else (a Date, a Map, a class instance, a boxed
 * primitive, a function), and documents nested deeper than any object, go to `structuredClone`
 * whole, so the result (or the DataCloneError) is its own.
 */
export function cloneJson<T>(value: T): T {
  if (typeof value === 'function' || typeof value === 'symbol') return structuredClone(value); // throws as it does
  if (typeof value !== 'object' || value === null) return value;
  try {
    return copyPlain(value, new Map(), 0) as T;
  } catch (err) {
    if (err !== NOT_PLAIN) throw err;
    return structuredClone(value);
  }
}

const NOT_PLAIN: unique symbol = Symbol('not plain data');
const hasOwn = Object.prototype.hasOwnProperty;
const MAX_PLAIN_DEPTH = 100;

function copyPlain(v: unknown, copies: Map<object, unknown>, depth: number): unknown {
  if (typeof v !== 'object' || v === null) {
    if (typeof v === 'function' || typeof v === 'symbol') throw NOT_PLAIN;
    return v; // strings, numbers (-0 and NaN too), booleans, bigint, undefined: as they are
  }
  const seen = copies.get(v);
  if (seen !== undefined) return seen;
  if (depth > MAX_PLAIN_DEPTH || types.isProxy(v)) throw NOT_PLAIN; // structuredClone refuses a proxy
  const proto = Object.getPrototypeOf(v) as unknown;
  let out: Record<string, unknown>;
  if (Array.isArray(v)) {
    if (proto !== Array.prototype) throw NOT_PLAIN;
    out = new Array<unknown>(v.length) as unknown as Record<string, unknown>; // holes stay holes
  } else if (proto === Object.prototype) out = {};
  else throw NOT_PLAIN; // structuredClone gives a null-prototype object a prototype: its call
  copies.set(v, out);
  // for-in over own members (an array's too: its items, holes skipped, and any named member) is
  // Object.keys without allocating the keys.
  for (const key in v) {
    if (!hasOwn.call(v, key)) continue;
    const copy = copyPlain((v as Record<string, unknown>)[key], copies, depth + 1);
    // `out.__proto__ = copy` would set the prototype; structuredClone makes it a member.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}
