/**
 * RFC 6902 JSON Patch (add, remove, replace, move, copy, test) over plain JSON. Any failing
 * operation, a failed `test` included, fails the whole patch: the caller gets nothing applied.
 */
import { clone, deepEqual, isObject } from './json-value.js';

export class JsonPatchError extends Error {}

export interface JsonPatchOperation {
  readonly op: string;
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

/** Returns true if `patch` has the shape of a JSON patch document (an array of objects). */
export function isJsonPatch(patch: unknown): patch is JsonPatchOperation[] {
  return Array.isArray(patch) && patch.every((p) => isObject(p));
}

export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let root = clone(doc);
  for (const op of ops) {
    if (typeof op.path !== 'string') throw new JsonPatchError('operation has no path');
    switch (op.op) {
      case 'add':
        requireValue(op);
        root = add(root, parsePointer(op.path), clone(op.value));
        break;
      case 'remove':
        root = remove(root, parsePointer(op.path)).root;
        break;
      case 'replace': {
        requireValue(op);
        const tokens = parsePointer(op.path);
        get(root, tokens); // must exist
        root = set(root, tokens, clone(op.value));
        break;
      }
      case 'move': {
        if (typeof op.from !== 'string') throw new JsonPatchError('move needs from');
        const { root: r, removed } = remove(root, parsePointer(op.from));
        root = add(r, parsePointer(op.path), removed);
        break;
      }
      case 'copy':
        if (typeof op.from !== 'string') throw new JsonPatchError('copy needs from');
        root = add(root, parsePointer(op.path), clone(get(root, parsePointer(op.from))));
        break;
      case 'test':
        requireValue(op);
        if (!deepEqual(get(root, parsePointer(op.path)), op.value))
          throw new JsonPatchError(`test failed at ${op.path}`);
        break;
      default:
        throw new JsonPatchError(`unknown operation ${String(op.op)}`);
    }
  }
  return root;
}

function requireValue(op: JsonPatchOperation): void {
  if (!('value' in op)) throw new JsonPatchError(`${op.op} needs a value`);
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new JsonPatchError(`invalid pointer ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function arrayIndex(arr: unknown[], token: string, forAdd: boolean): number {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new JsonPatchError(`invalid array index ${token}`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) throw new JsonPatchError(`array index ${token} out of range`);
  return i;
}

function get(root: unknown, tokens: readonly string[]): unknown {
  let cur = root;
  for (const t of tokens) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, false)];
    else if (isObject(cur) && Object.hasOwn(cur, t)) cur = cur[t];
    else throw new JsonPatchError(`path not found at ${t}`);
  }
  return cur;
}

function parentOf(root: unknown, tokens: readonly string[]): { parent: unknown; last: string } {
  if (tokens.length === 0) throw new JsonPatchError('the root cannot be the target here');
  return { parent: get(root, tokens.slice(0, -1)), last: tokens[tokens.length - 1]! };
}

function add(root: unknown, tokens: readonly string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(root, tokens);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true), 0, value);
  else if (isObject(parent)) parent[last] = value;
  else throw new JsonPatchError('parent is not a container');
  return root;
}

function set(root: unknown, tokens: readonly string[], value: unknown): unknown {
  if (tokens.length === 0) return value;
  const { parent, last } = parentOf(root, tokens);
  if (Array.isArray(parent)) parent[arrayIndex(parent, last, false)] = value;
  else if (isObject(parent)) parent[last] = value;
  return root;
}

function remove(root: unknown, tokens: readonly string[]): { root: unknown; removed: unknown } {
  const { parent, last } = parentOf(root, tokens);
  if (Array.isArray(parent)) {
    const [removed] = parent.splice(arrayIndex(parent, last, false), 1);
    return { root, removed };
  }
  if (isObject(parent) && Object.hasOwn(parent, last)) {
    const removed = parent[last];
    delete parent[last];
    return { root, removed };
  }
  throw new JsonPatchError(`path not found at ${last}`);
}
