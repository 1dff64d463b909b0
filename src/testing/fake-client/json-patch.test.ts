import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyJsonPatch, JsonPatchError } from './json-patch.js';
import { applyMergePatch, applyStrategicMergePatch } from './merge-patch.js';

test('JSON patch applies add, remove, replace, move, copy and test in order, on a copy', () => {
  const doc = { a: { b: 1 }, list: ['x', 'z'], 'we/ird~': 1 };
  const out = applyJsonPatch(doc, [
    { op: 'test', path: '/a/b', value: 1 },
    { op: 'add', path: '/list/1', value: 'y' },
    { op: 'add', path: '/list/-', value: 'end' },
    { op: 'replace', path: '/a/b', value: 2 },
    { op: 'copy', from: '/a', path: '/c' },
    { op: 'move', from: '/c/b', path: '/d' },
    { op: 'remove', path: '/we~1ird~0' },
  ]);
  assert.deepEqual(out, { a: { b: 2 }, list: ['x', 'y', 'z', 'end'], c: {}, d: 2 });
  assert.deepEqual(doc, { a: { b: 1 }, list: ['x', 'z'], 'we/ird~': 1 }, 'the input is untouched');
});

test('JSON patch fails whole on a failed test, a missing path, a bad index or an unknown op', () => {
  const doc = { a: 1, list: [1] };
  for (const ops of [
    [{ op: 'test', path: '/a', value: 2 }],
    [{ op: 'replace', path: '/missing', value: 1 }],
    [{ op: 'remove', path: '/missing' }],
    [{ op: 'add', path: '/missing/deeper', value: 1 }],
    [{ op: 'add', path: '/list/5', value: 1 }],
    [{ op: 'frob', path: '/a' }],
  ]) {
    assert.throws(() => applyJsonPatch(doc, ops), JsonPatchError, JSON.stringify(ops));
  }
});

test('merge patch replaces lists, merges maps and deletes on null', () => {
  assert.deepEqual(applyMergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] }), {
    a: { c: 2, d: 3 },
    l: [3],
  });
});

test('strategic merge merges object lists by name or type and honours $patch: delete', () => {
  const target = {
    containers: [
      { name: 'a', image: '1' },
      { name: 'b', image: '1' },
    ],
    conditions: [{ type: 'Ready', status: 'False' }],
    args: ['x'],
  };
  const patch = {
    containers: [
      { name: 'b', $patch: 'delete' },
      { name: 'c', image: '1' },
      { name: 'a', image: '2' },
    ],
    conditions: [{ type: 'Ready', status: 'True' }],
    args: ['y'],
  };
  assert.deepEqual(applyStrategicMergePatch(target, patch), {
    containers: [
      { name: 'a', image: '2' },
      { name: 'c', image: '1' },
    ],
    conditions: [{ type: 'Ready', status: 'True' }],
    args: ['y'],
  });
});
