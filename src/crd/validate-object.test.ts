import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidOptionError } from '../core/errors.js';
import { GADGET } from './testing/gadget-kind.js';
import { validateAgainstSchema } from './validate-object.js';

const valid = {
  apiVersion: 'test.operator-runtime.io/v1',
  kind: 'Gadget',
  metadata: { name: 'g', namespace: 'n' },
  spec: {
    mode: 'safe',
    size: '1Gi',
    replicas: 1,
    target: 'http',
    ports: [{ name: 'a', port: 1 }],
    nickname: null,
    template: { apiVersion: 'v1', kind: 'ConfigMap' },
  },
};

test('a valid object has no violations, in the storage version and in the one named', () => {
  assert.deepEqual(validateAgainstSchema(GADGET, undefined, valid), []);
  assert.deepEqual(
    validateAgainstSchema(GADGET, 'v1beta1', {
      ...valid,
      apiVersion: 'test.operator-runtime.io/v1beta1',
      spec: { mode: 'anything' },
    }),
    [],
  );
});

test('each schema constraint is reported with its JSON pointer, a literal union as the values it allows', () => {
  const check = (spec: Record<string, unknown>) =>
    validateAgainstSchema(GADGET, 'v1', { ...valid, spec: { ...valid.spec, ...spec } });
  assert.deepEqual(check({ mode: 'slow' }), [{ path: '/spec/mode', message: 'must be one of "fast", "safe"' }]);
  assert.deepEqual(check({ size: '1G' }), [{ path: '/spec/size', message: 'must match pattern "^[0-9]+(Mi|Gi)$"' }]);
  assert.deepEqual(check({ replicas: 11 }), [{ path: '/spec/replicas', message: 'must be <= 10' }]);
  assert.deepEqual(check({ ratio: 0 }), [{ path: '/spec/ratio', message: 'must be > 0' }]);
  assert.deepEqual(check({ ports: [{ name: 'a' }] }), [{ path: '/spec/ports/0/port', message: 'is required' }]);
  assert.ok(check({ target: true }).some((v) => v.path === '/spec/target'));
  assert.ok(check({ nickname: 5 }).some((v) => v.path === '/spec/nickname'));
  const { mode: _mode, ...withoutMode } = valid.spec;
  assert.deepEqual(validateAgainstSchema(GADGET, 'v1', { ...valid, spec: withoutMode }), [
    { path: '/spec/mode', message: 'is required' },
  ]);
});

test('apiVersion and kind must name the version validated against', () => {
  assert.deepEqual(validateAgainstSchema(GADGET, 'v1beta1', valid).slice(0, 1), [
    { path: '/apiVersion', message: 'must be test.operator-runtime.io/v1beta1' },
  ]);
  assert.deepEqual(validateAgainstSchema(GADGET, 'v1', { ...valid, kind: 'Widget' }), [
    { path: '/kind', message: 'must be Gadget' },
  ]);
  assert.deepEqual(validateAgainstSchema(GADGET, 'v1', 'not an object'), [{ path: '', message: 'must be an object' }]);
  assert.throws(() => validateAgainstSchema(GADGET, 'v3', valid), InvalidOptionError);
});

test('CEL rules are not evaluated here (the API server does that): an object breaking one passes', () => {
  assert.deepEqual(
    validateAgainstSchema(GADGET, 'v1', { ...valid, spec: { ...valid.spec, limits: { min: 5, max: 1 } } }),
    [],
  );
});
