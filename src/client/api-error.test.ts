import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { ApiError, isNotFound } from './api-error.js';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl';

// Issue 18, item 6: a reflecting proxy echoed the request's bearer token into the error message.
test('server or proxy text in an ApiError has bearer tokens, credential pairs and URL passwords redacted', () => {
  const reflected = [
    `<html>Bad request: Authorization: Bearer tok-SECRET-1 was not accepted</html>`,
    `upstream https://admin:pw-SECRET-2@10.0.0.1:6443/api refused`,
    `{"error":"bad","token":"tok-SECRET-3"}`,
    `GET /api?access_token=tok-SECRET-4&watch=1`,
    `X-Api-Key: key-SECRET-5`,
    `token ${JWT} expired`,
  ];
  for (const message of reflected) {
    const err = new ApiError({ status: 400, message, method: 'GET', path: '/api' });
    const text = `${err.message}\n${inspect(err, { depth: 10 })}`;
    assert.ok(!text.includes('SECRET') && !text.includes(JWT), text);
    assert.match(err.message, /^400 BadRequest: /);
  }
});

test('a Status body from the server is redacted the same way, including its causes, and keeps its meaning', () => {
  const err = ApiError.fromStatus(
    {
      kind: 'Status',
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'Secret "db" is invalid: proxy http://u:pw-SECRET@p:3128',
      details: {
        name: 'db',
        kind: 'secrets',
        causes: [{ reason: 'FieldValueInvalid', field: 'data', message: 'Bearer tok-SECRET' }],
      },
    },
    500,
  );
  const text = inspect(err, { depth: 10 });
  assert.ok(!text.includes('SECRET'), text);
  assert.equal(err.status, 422);
  assert.equal(err.reason, 'Invalid');
  assert.equal(err.details?.name, 'db');
  assert.equal(err.details?.causes?.[0]?.field, 'data');
  assert.match(err.message, /Secret "db" is invalid: proxy http:\/\/u:\[Redacted\]@p:3128/);
});

test('ordinary API server messages pass unchanged', () => {
  const message = 'databases.example.com "db-1" not found';
  const err = ApiError.fromStatus({ kind: 'Status', code: 404, reason: 'NotFound', message }, 404, {
    method: 'GET',
    path: '/apis/example.com/v1/databases/db-1',
  });
  assert.equal(err.message, `404 NotFound: ${message} (GET /apis/example.com/v1/databases/db-1)`);
  assert.ok(isNotFound(err));
});

test('a Status body of the wrong shape still gives a well-formed ApiError (a watch ERROR event carries whatever the server sent)', () => {
  for (const body of [
    null,
    undefined,
    'text',
    42,
    [],
    { code: '503', reason: 7, message: { m: 1 }, details: 'x' },
    { code: 99999 },
    { code: 404.5 },
    { details: { retryAfterSeconds: 'soon', causes: 'x' } },
  ]) {
    const err = ApiError.fromStatus(body as never, 500);
    assert.ok(err instanceof ApiError);
    assert.ok(Number.isInteger(err.status) && err.status >= 100 && err.status <= 599, `status ${err.status}`);
    assert.equal(typeof err.reason, 'string');
    assert.equal(typeof err.message, 'string');
    assert.ok(
      err.retryAfterMs === undefined || (Number.isFinite(err.retryAfterMs) && err.retryAfterMs >= 0),
      `retryAfterMs ${err.retryAfterMs}`,
    );
    assert.ok(
      err.details === undefined ||
        (typeof err.details === 'object' && (err.details.causes === undefined || Array.isArray(err.details.causes))),
    );
  }
  assert.equal(ApiError.fromStatus({ code: 409, reason: 'Conflict' }, 500).status, 409);
  assert.equal(ApiError.fromStatus({ details: { retryAfterSeconds: 3 } }, 429).retryAfterMs, 3000);
});
