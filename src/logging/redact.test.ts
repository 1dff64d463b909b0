import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRedactor, DEFAULT_REDACT_KEYS, REDACTED, REDACTED_TOO_DEEP } from './redact.js';

test('the default redaction list covers the credentials the runtime handles', () => {
  const keys = DEFAULT_REDACT_KEYS.map((k) => k.toLowerCase());
  for (const k of ['authorization', 'token', 'password', 'client-key-data', 'stringdata'])
    assert.ok(keys.includes(k), k);
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

// Issue 18, item 6: each of these reached the logs before.

test('X-Api-Key headers, auth-provider access-tokens and exec env values are redacted', () => {
  const redact = createRedactor(DEFAULT_REDACT_KEYS);
  const out = redact({
    headers: { 'X-Api-Key': 'key-SECRET', accept: 'json' },
    user: {
      'auth-provider': { name: 'gcp', config: { 'access-token': 'at-SECRET', 'cmd-path': '/bin/gcloud' } },
      exec: { command: 'aws', env: [{ name: 'PLUGIN_PASSPHRASE', value: 'env-SECRET' }] },
    },
  });
  assert.ok(!JSON.stringify(out).includes('SECRET'), JSON.stringify(out));
  assert.equal(out.headers.accept, 'json');
  assert.equal(out.user['auth-provider'].config['cmd-path'], '/bin/gcloud');
  assert.deepEqual(
    out.user.exec.env,
    [{ name: 'PLUGIN_PASSPHRASE', value: REDACTED }],
    'the variable name stays for diagnosis',
  );
});

test('a password inside any URL-shaped string is redacted, wherever it sits in the string', () => {
  const redact = createRedactor(DEFAULT_REDACT_KEYS);
  const out = redact({
    proxy: 'http://user:pw-SECRET@proxy.example:3128',
    note: 'tunnelling via https://bob:p%40ss-SECRET@10.0.0.1:8443/path?q=1 failed, retrying',
    list: ['socks5://a:b-SECRET@h:1', 'plain text', 'https://no-password.example/x'],
  });
  assert.ok(!JSON.stringify(out).includes('SECRET'), JSON.stringify(out));
  assert.equal(out.proxy, `http://user:${REDACTED}@proxy.example:3128`);
  assert.match(out.note, /^tunnelling via https:\/\/bob:\[Redacted\]@10\.0\.0\.1:8443\/path\?q=1 failed, retrying$/);
  assert.equal(out.list[1], 'plain text');
  assert.equal(out.list[2], 'https://no-password.example/x');
});

test('a Secret nested below the depth limit is replaced by a marker, not passed through', () => {
  const redact = createRedactor(DEFAULT_REDACT_KEYS);
  let deep: Record<string, unknown> = {
    kind: 'Secret',
    data: { password: 'c2VjcmV0' },
    stringData: { key: 'deep-SECRET' },
  };
  for (let i = 0; i < 12; i++) deep = { [`level${i}`]: deep };
  const out = redact(deep);
  const text = JSON.stringify(out);
  assert.ok(!text.includes('SECRET') && !text.includes('c2VjcmV0'), text);
  assert.ok(text.includes(REDACTED_TOO_DEEP), text);
});

test('the redactor still returns the very same object when no string needs redacting', () => {
  const redact = createRedactor(DEFAULT_REDACT_KEYS);
  const value = { url: 'https://k8s:6443/api', env: [{ name: 'A' }], msg: 'user:pass without a scheme' };
  assert.equal(redact(value), value);
});
