import { test } from 'node:test';
import assert from 'node:assert/strict';
import { omitUndefined } from './omit-undefined.js';

interface Target {
  readonly required: string;
  readonly port?: number;
  readonly host?: string;
}

test('omitUndefined drops only the keys whose value is undefined', () => {
  const port: number | undefined = undefined;
  const out = omitUndefined({ port, zero: 0, empty: '', no: false, nothing: null });
  assert.deepEqual(Object.keys(out), ['zero', 'empty', 'no', 'nothing']);
  assert.equal('port' in out, false);
});

test('omitUndefined: a maybe-undefined value fits an optional option, and a spread keeps defaults', () => {
  const host = (value?: string): string | undefined => value;
  const target: Target = { required: 'x', ...omitUndefined({ port: 1 as number | undefined, host: host() }) };
  assert.deepEqual(target, { required: 'x', port: 1 });
  const defaults = { port: 8080, host: 'localhost' };
  assert.deepEqual(
    { ...defaults, ...omitUndefined({ port: undefined, host: host('example') }) },
    { port: 8080, host: 'example' },
  );
});
