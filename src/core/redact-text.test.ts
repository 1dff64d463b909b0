import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REDACTED, redactCredentialText, redactUrlCredentials } from './redact-text.js';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJl';

test('credential shapes in free text are redacted, glued to other text or not', () => {
  const cases: [string, string][] = [
    ['via http://user:pw@proxy:3128 now', `via http://user:${REDACTED}@proxy:3128 now`],
    ['x_https://u:pw@h/p', `x_https://u:${REDACTED}@h/p`],
    ['https://a:b@c@host/x', `https://a:${REDACTED}@host/x`],
    ['https://ghp_token@github.com/x', `https://${REDACTED}@github.com/x`],
    ['Authorization: Bearer abc.def-ghi', `Authorization: Bearer ${REDACTED}`],
    ['xBearer abc', `xBearer ${REDACTED}`],
    [`token ${JWT} expired`, `token ${REDACTED} expired`],
    [`prefix${JWT}`, REDACTED],
    ['?access_token=abc&watch=1', `?access_token=${REDACTED}&watch=1`],
    ['mytoken=abc', `mytoken=${REDACTED}`],
    ['{"password":"p\\"w","a":1}', `{"password":"${REDACTED}","a":1}`],
    ['{"token":"unterminated', `{"token":"${REDACTED}`],
    ['X-Api-Key: abc', `X-Api-Key: ${REDACTED}`],
  ];
  for (const [input, expected] of cases) assert.equal(redactCredentialText(input), expected, input);
});

test('ordinary text passes unchanged', () => {
  for (const text of [
    'databases.example.com "db-1" not found',
    'GET https://10.0.0.1:6443/api/v1/namespaces/default/pods?limit=500 (https://h/p?e=a@b)',
    'user:pass without a scheme',
    'basic auth required',
    'io.k8s.api.core.v1.PodSpec.containers',
  ]) {
    assert.equal(redactCredentialText(text), text);
  }
  assert.equal(redactUrlCredentials('no url here'), 'no url here');
});

test('hostile text is redacted in linear time (no regex backtracking blow-up)', () => {
  // Each of these took quadratic time with a backtracking JWT or URL pattern; 256 KiB of each would
  // take minutes then, and takes milliseconds now.
  const size = 256 * 1024;
  const texts = ['eyJ-', 'eyJa', '://a', 'Bearer ', 'token=', '"token":"\\', 'a@'].map((unit) =>
    unit.repeat(Math.ceil(size / unit.length)),
  );
  texts.push(
    `${'a'.repeat(size)}://`,
    `Bearer${' '.repeat(size)}`,
    `://${'a@'.repeat(size / 2)}/`,
    `://${'a'.repeat(size)}`,
  );
  for (const text of texts) {
    const unit = text.slice(0, 12);
    const start = performance.now();
    redactCredentialText(text);
    const ms = performance.now() - start;
    assert.ok(ms < 2000, `${JSON.stringify(unit)} × ${text.length}: ${ms.toFixed(0)} ms`);
  }
});
