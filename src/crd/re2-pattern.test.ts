import { test } from 'node:test';
import assert from 'node:assert/strict';
import { translateRe2Pattern } from './re2-pattern.js';

const matches = (pattern: string, value: string): boolean => {
  const result = translateRe2Pattern(pattern);
  assert.ok(result.ok, `${pattern}: ${result.ok ? '' : result.why}`);
  return result.regexp.test(value);
};
const refusal = (pattern: string): string => {
  const result = translateRe2Pattern(pattern);
  assert.equal(result.ok, false, `${pattern} should be refused`);
  return result.ok ? '' : result.why;
};

test('what RE2 cannot compile is refused, saying what: lookaround, backreferences, possessive and atomic forms, \\Z, \\u, big repeats', () => {
  assert.match(refusal('^(?=a)'), /lookahead/);
  assert.match(refusal('^(?!a)'), /lookahead/);
  assert.match(refusal('(?<=a)b'), /lookbehind/);
  assert.match(refusal('(?<!a)b'), /lookbehind/);
  assert.match(refusal('(a)\\1'), /backreference/);
  assert.match(refusal('(?P<x>a)(?P=x)'), /backreference/);
  assert.match(refusal('a++'), /possessive/);
  assert.match(refusal('a**'), /nested repetition/);
  assert.match(refusal('(?>a)'), /atomic/);
  assert.match(refusal('a\\Z'), /\\z/);
  assert.match(refusal('\\u00e9'), /\\x\{00e9\}/);
  assert.match(refusal('a{1001}'), /limit of 1000/);
  assert.match(refusal('(a'), /missing closing \)/);
  assert.match(refusal('[a'), /missing closing \]/);
  assert.match(refusal('*a'), /missing argument/);
  assert.match(refusal('(?<name>a)'), /\(\?P<name>/);
  assert.match(
    refusal('^\\pL+$'),
    /Unicode versions/,
    'Go 1.19 (kube-apiserver 1.20) and Node disagree on letters added since Unicode 13',
  );
  assert.match(refusal('^\\p{Greek}$'), /Unicode versions/);
});

test('the Kubernetes patterns in use compile and match as in Go', () => {
  const dns = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
  assert.equal(matches(dns, 'my.example-1.com'), true);
  assert.equal(matches(dns, 'Bad_Name'), false);
  assert.equal(matches('^[0-9]+(Mi|Gi)$', '10Gi'), true);
  assert.equal(matches('^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', 'Checked'), true);
});

test("syntax RE2 reads differently from JavaScript is translated to RE2's meaning", () => {
  assert.equal(matches('^\\s$', '\u00a0'), false, 'RE2 \\s is ASCII whitespace only');
  assert.equal(matches('^\\s$', '\t'), true);
  assert.equal(matches('^[\\s]$', '\u2003'), false);
  assert.equal(matches('^.$', '\r'), true, 'RE2 . excludes only \\n');
  assert.equal(matches('^.$', '\n'), false);
  assert.equal(matches('(?s)^.$', '\n'), true);
  assert.equal(matches('(?i)^abc$', 'ABC'), true);
  assert.equal(matches('^\\Qa.b\\E$', 'a.b'), true);
  assert.equal(matches('^\\Qa.b\\E$', 'axb'), false);
  assert.equal(matches('^\\x{e9}$', 'é'), true);
  assert.equal(matches('^[[:alpha:]]+$', 'abc'), true);
  assert.equal(matches('^[[:digit:]]+$', 'abc'), false);
  assert.equal(matches('^a{,2}$', 'a{,2}'), true, 'a { that is not a repeat is a literal in RE2');
  assert.equal(matches('^\\#\\-\\:$', '#-:'), true, 'escaped punctuation is a literal');
  assert.equal(matches('\\Aab\\z', 'ab'), true);
  assert.equal(matches('^[]a]+$', ']a'), true, '] first in a class is a literal in RE2');
  assert.equal(matches('^(?P<x>a)b$', 'ab'), true);
  assert.equal(matches('abc', 'xxabcxx'), true, 'a pattern is not anchored');
  assert.equal(matches('^a{2,3}?$', 'aaa'), true);
});
