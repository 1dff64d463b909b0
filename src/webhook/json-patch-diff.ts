/**
 * The JSONPatch (RFC 6902) that turns a reviewed object into the one a mutator returned, in time
 * and memory linear in the two objects and without recursion (a review may be nested deep).
 * Objects are compared member by member; arrays of equal length element by element; an array
 * whose length changed is diffed on the common prefix, then trimmed from the end or appended to
 * (never an LCS: that is quadratic, and a correct patch is what matters, not the shortest).
 * `checkDeadline` is called every few thousand nodes so a huge diff cannot outlive the review.
 */
import { isLosslessNumber } from 'lossless-json';
import { isPlainObject } from './json-values.js';

export type JsonPatchOperation =
  | { readonly op: 'add'; readonly path: string; readonly value: unknown }
  | { readonly op: 'remove'; readonly path: string }
  | { readonly op: 'replace'; readonly path: string; readonly value: unknown };

/** How many nodes are compared between two deadline checks. */
const CHECK_EVERY_NODES = 4096;

const escapeToken = (key: string): string => (/[~/]/.test(key) ? key.replaceAll('~', '~0').replaceAll('/', '~1') : key);

/** JSON drops members whose value is undefined, a function or a symbol; so does the diff. */
const absent = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** What JSON makes of an array element that JSON cannot hold. */
const inArray = (v: unknown): unknown => (absent(v) ? null : v);

function sameLeaf(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isLosslessNumber(a) && isLosslessNumber(b)) return a.value === b.value;
  return false;
}

export function createJsonPatch(
  original: unknown,
  mutated: unknown,
  checkDeadline: () => void = () => undefined,
): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  const stack: Array<[unknown, unknown, string]> = [[original, mutated, '']];
  let nodes = 0;
  while (stack.length > 0) {
    const [a, b, path] = stack.pop()!;
    if (++nodes % CHECK_EVERY_NODES === 0) checkDeadline();
    if (a === b) continue;
    if (isPlainObject(a) && isPlainObject(b)) {
      for (const key of Object.keys(a)) {
        if (absent(a[key])) continue;
        if (!Object.hasOwn(b, key) || absent(b[key])) ops.push({ op: 'remove', path: `${path}/${escapeToken(key)}` });
      }
      for (const key of Object.keys(b)) {
        const bv = b[key];
        if (absent(bv)) continue;
        const child = `${path}/${escapeToken(key)}`;
        if (!Object.hasOwn(a, key) || absent(a[key])) ops.push({ op: 'add', path: child, value: bv });
        else stack.push([a[key], bv, child]);
      }
      continue;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const common = Math.min(a.length, b.length);
      // Removals from the end first (highest index first) and appends after: neither moves an index of the common prefix.
      for (let i = a.length - 1; i >= common; i--) ops.push({ op: 'remove', path: `${path}/${i}` });
      for (let i = common; i < b.length; i++) ops.push({ op: 'add', path: `${path}/-`, value: inArray(b[i]) });
      for (let i = common - 1; i >= 0; i--) stack.push([inArray(a[i]), inArray(b[i]), `${path}/${i}`]);
      continue;
    }
    if (sameLeaf(a, b)) continue;
    ops.push({ op: 'replace', path, value: b });
  }
  return ops;
}
