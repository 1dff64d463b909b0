import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeError, redactMessage } from './redact-message.js';

describe('redactMessage', () => {
  const cases: [string, string, string][] = [
    ['a bearer token', 'GET /x failed: authorization: Bearer abc.def-123 rejected', 'abc.def-123'],
    ['basic credentials', 'header Basic dXNlcjpwYXNz was refused', 'dXNlcjpwYXNz'],
    ['a password in a URL', 'connect ECONNREFUSED http://admin:s3cret@127.0.0.1:1/backups', 's3cret'],
    ['token=value', 'request to /login?token=tok123&x=1 failed', 'tok123'],
    ['a quoted JSON password', 'bad config {"password":"hunter2","user":"bob"}', 'hunter2'],
    ['client-key-data', 'kubeconfig user has client-key-data: LS0tLS1CRUdJTg==', 'LS0tLS1CRUdJTg=='],
    [
      'a PEM private key',
      'cannot parse -----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY----- here',
      'MIIEow',
    ],
    ['a JWT', 'token expired: eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl', 'c2lnbmF0dXJl'],
  ];
  for (const [what, input, secret] of cases) {
    test(`removes ${what}`, () => {
      const out = redactMessage(input);
      assert.ok(!out.includes(secret), out);
      assert.ok(out.includes('[Redacted]'), out);
    });
  }

  test('leaves ordinary messages alone', () => {
    const message = 'StatefulSet default/db-1 is invalid: spec.replicas must be >= 0';
    assert.equal(redactMessage(message), message);
  });

  test('cuts long messages after redacting', () => {
    const out = redactMessage(`${'x'.repeat(600)} password=p`, 100);
    assert.equal(out.length, 101);
    assert.ok(out.endsWith('…'));
  });

  test('describeError names the code and survives odd thrown values', () => {
    const err = Object.assign(new Error('boom with token=abc'), { code: 'ERR_X' });
    assert.equal(describeError(err), 'ERR_X: boom with token=[Redacted]');
    assert.equal(describeError('plain'), 'plain');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    assert.equal(describeError(circular), '[object Object]');
    assert.equal(describeError(undefined), 'undefined');
  });
});
