import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRedactor, DEFAULT_REDACT_KEYS, REDACTED } from './redact.js';

test('the default redaction list covers the credentials the runtime handles', () => {
  const keys = DEFAULT_REDACT_KEYS.map((k) => k.toLowerCase());
  for (const k of ['authorization', 'token', 'password', 'client-key-data', 'stringdata']) assert.ok(keys.includes(k), k);
});

test('the redactor returns the very same object when nothing needs redacting', () => {
  const redact = createRedactor(DEFAULT_REDACT_KEYS);
  const value = { controller: 'x', nested: { list: [1, 2, { a: 'b' }] } };
  assert.equal(redact(value), value);
});

test('the redactor copies only the branches it changes and keeps class instances as they are', () => {
  const redact = createRedactor(['token']);
  const when = new Date(0);
  const untouched = { a: 1 };
  const value = { untouched, when, deep: [{ token: 't' }] };
  const out = redact(value);
  assert.notEqual(out, value);
  assert.equal(out.untouched, untouched);
  assert.equal(out.when, when);
  assert.deepEqual(out.deep, [{ token: REDACTED }]);
  assert.deepEqual(value.deep, [{ token: 't' }]);
});

test('the redactor terminates on a cyclic object', () => {
  const redact = createRedactor(['token']);
  const a: Record<string, unknown> = { token: 't' };
  a.self = a;
  const out = redact(a);
  assert.equal(out.token, REDACTED);
});
