import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneJson } from './json-values.js';

// JSON.parse and lossless-json make "__proto__" an own key; Kubernetes objects may carry it (a label map, free-form spec).
test('a "__proto__" key is copied as a key: the copy keeps Object\'s prototype and loses nothing', () => {
  const original = JSON.parse('{"spec":{"__proto__":{"polluted":true},"labels":{"__proto__":"x"}}}') as {
    spec: Record<string, unknown>;
  };
  const copy = cloneJson(original);
  assert.equal(JSON.stringify(copy), JSON.stringify(original));
  assert.equal(Object.getPrototypeOf(copy.spec), Object.prototype);
  assert.equal((copy.spec as { polluted?: boolean }).polluted, undefined);
  assert.notEqual(copy.spec['__proto__'], original.spec['__proto__'], 'a deep copy');
});
