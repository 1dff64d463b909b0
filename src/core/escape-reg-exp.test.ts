import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeRegExp } from './escape-reg-exp.js';

test('a pattern built from escapeRegExp matches the text literally, metacharacters included', () => {
  const text = 'a.b*c+d?e^f$g{h}i(j)k|l[m]n\\o';
  const re = new RegExp(`^${escapeRegExp(text)}$`);
  assert.ok(re.test(text));
  assert.ok(!re.test(text.replace('.', 'x')), 'the dot is no wildcard');
});
