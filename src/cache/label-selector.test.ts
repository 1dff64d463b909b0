import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatLabelSelector, labelSelectorFromObject, matchesLabels, parseLabelSelector } from './label-selector.js';
import { InvalidLabelSelectorError } from './errors.js';

const m = (sel: string, labels: Record<string, string>): boolean => matchesLabels(parseLabelSelector(sel), labels);

test('equality, inequality, set, existence and absence requirements all parse and match like the API server', () => {
  const sel = 'a=b,c!=d,e in (x,y),!f,g';
  assert.equal(m(sel, { a: 'b', e: 'x', g: '' }), true);
  assert.equal(m(sel, { a: 'b', c: 'z', e: 'y', g: '1' }), true);
  assert.equal(m(sel, { a: 'b', c: 'd', e: 'x', g: '1' }), false, 'c!=d fails when c=d');
  assert.equal(m(sel, { a: 'b', e: 'z', g: '1' }), false, 'e not in set');
  assert.equal(m(sel, { a: 'b', e: 'x', g: '1', f: '1' }), false, '!f fails when f present');
  assert.equal(m(sel, { a: 'b', e: 'x' }), false, 'g must exist');
  assert.equal(m(sel, { e: 'x', g: '1' }), false, 'a=b requires a');
});

test('!= and notin match objects without the label; = and in do not', () => {
  assert.equal(m('x!=1', {}), true);
  assert.equal(m('x notin (1,2)', {}), true);
  assert.equal(m('x=1', {}), false);
  assert.equal(m('x in (1)', {}), false);
  assert.equal(m('x==1', { x: '1' }), true);
});

test('the empty selector selects everything, including objects without labels', () => {
  assert.equal(matchesLabels(parseLabelSelector(''), undefined), true);
  assert.equal(m('   ', { a: '1' }), true);
});

test('prefixed keys, empty values and whitespace are accepted', () => {
  assert.equal(m('app.kubernetes.io/name = db , tier=', { 'app.kubernetes.io/name': 'db', tier: '' }), true);
  assert.equal(m('a in (x, )', { a: '' }), true);
});

test('gt and lt compare integer label values and fail on missing or non-integer ones', () => {
  assert.equal(m('n>5', { n: '6' }), true);
  assert.equal(m('n>5', { n: '5' }), false);
  assert.equal(m('n<5', { n: 'x' }), false);
  assert.equal(m('n<5', {}), false);
});

test('malformed selectors are rejected with the position of the problem', () => {
  for (const bad of ['a=b,', 'a in x', 'a in (x', '=b', 'a b', 'a=b=c', 'a>x', '-bad=1', ',a']) {
    assert.throws(() => parseLabelSelector(bad), InvalidLabelSelectorError, bad);
  }
  assert.throws(() => parseLabelSelector('a in (x'), /position/);
});

test('equal selectors written differently format to the same canonical string', () => {
  assert.equal(
    formatLabelSelector(parseLabelSelector('b=2, a==1')),
    formatLabelSelector(parseLabelSelector('a=1,b=2')),
  );
  assert.equal(formatLabelSelector(parseLabelSelector('e in (y,x),!f')), '!f,e in (x,y)');
  assert.equal(formatLabelSelector(parseLabelSelector('e in (x)')), 'e=x');
  const round = 'a!=1,b,c notin (p,q),n<3';
  assert.equal(formatLabelSelector(parseLabelSelector(round)), round);
});

test('the object form (matchLabels + matchExpressions) converts to the same requirements', () => {
  const sel = labelSelectorFromObject({
    matchLabels: { app: 'db' },
    matchExpressions: [
      { key: 'tier', operator: 'NotIn', values: ['cache'] },
      { key: 'x', operator: 'Exists' },
    ],
  });
  assert.equal(formatLabelSelector(sel), 'app=db,tier!=cache,x');
  assert.equal(matchesLabels(labelSelectorFromObject(undefined), { a: '1' }), true);
  assert.throws(
    () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }),
    InvalidLabelSelectorError,
  );
});

// Kubernetes' rules (apimachinery labels.Parse + IsQualifiedName/IsValidLabelValue), and the cases
// where this parser and the fake client's old one disagreed (issue 13 item 4: one parser).

const accepts = (sel: string): boolean => {
  try {
    parseLabelSelector(sel);
    return true;
  } catch (err) {
    assert.ok(err instanceof InvalidLabelSelectorError, `${JSON.stringify(sel)} threw ${String(err)}`);
    return false;
  }
};

test('a key prefix must be a DNS-1123 subdomain: no empty, leading, trailing or dash-adjoining dot labels (this parser used to accept them)', () => {
  for (const bad of [
    'a..b/c=1',
    'a.-b/c=1',
    'a-.b/c',
    '.a/c',
    'a./c',
    '-a/c',
    'a-/c',
    'A.com/c',
    'a_b.com/c',
    '/c',
    'a/b/c',
    'a/',
  ]) {
    assert.equal(accepts(bad), false, bad);
  }
  for (const good of ['a.b/c', 'a-b.c-d/e', '0.example.com/x', 'example.com/MyName_1.x-y'])
    assert.equal(accepts(good), true, good);
});

test('a key name part is at most 63 characters and a prefix at most 253, separately (no longer one 317-character total)', () => {
  const label = (n: number, c: string): string => c.repeat(n);
  const prefix253 = [label(63, 'a'), label(63, 'b'), label(63, 'c'), label(61, 'd')].join('.');
  assert.equal(prefix253.length, 253);
  assert.equal(accepts(`${label(63, 'n')}=1`), true);
  assert.equal(accepts(`${label(64, 'n')}=1`), false, 'a 64-character name, even without a prefix');
  assert.equal(accepts(`${prefix253}/${label(63, 'n')}`), true, '253 + 1 + 63 = 317 is the longest key');
  assert.equal(accepts(`${prefix253}e/n`), false, 'a 254-character prefix, even with a 1-character name');
  assert.equal(accepts(`${label(10, 'p')}/${label(64, 'n')}`), false);
});

test('values are empty or up to 63 characters of alphanumerics, -, _ and ., alphanumeric at both ends', () => {
  assert.equal(accepts(`a=${'v'.repeat(63)}`), true);
  assert.equal(accepts(`a=${'v'.repeat(64)}`), false);
  assert.equal(accepts(`a in (x,${'v'.repeat(64)})`), false);
  for (const bad of ['a=-x', 'a=x-', 'a=x/y', 'a=x:y', 'a=é']) assert.equal(accepts(bad), false, bad);
  for (const good of ['a=', 'a=X_1.y-Z', 'a=0']) assert.equal(accepts(good), true, good);
});

test('"a in ()" is the set {""}, as the API server reads it (this parser used to reject it; the fake accepted it)', () => {
  assert.deepEqual(parseLabelSelector('a in ()').requirements, [{ key: 'a', operator: 'In', values: [''] }]);
  assert.equal(m('a in ()', { a: '' }), true);
  assert.equal(m('a in ()', { a: 'x' }), false);
  assert.equal(m('a in ()', {}), false);
  assert.equal(m('a notin ()', {}), true);
  assert.deepEqual(parseLabelSelector('a in (,x,,)').requirements, [
    { key: 'a', operator: 'In', values: ['', 'x', '', ''] },
  ]);
  assert.equal(formatLabelSelector(parseLabelSelector('a in ()')), 'a=');
});

test('carriage return is whitespace, as space, tab and newline are (this parser used to make it part of a word)', () => {
  assert.equal(m('a\r=\rb,\r\nc', { a: 'b', c: '' }), true);
});

test('"in" and "notin" are operators only after a key: they may be keys and values', () => {
  assert.equal(m('in=notin', { in: 'notin' }), true);
  assert.equal(m('notin in (in)', { notin: 'in' }), true);
  assert.equal(m('in', { in: '' }), true);
  assert.equal(accepts('a in in (x)'), false);
});

test('a > or < operand is an int64 written as a label value, so never negative or signed', () => {
  for (const bad of ['a>-1', 'a<+1', 'a>', 'a>1.5', 'a>9223372036854775808', 'a>(1)'])
    assert.equal(accepts(bad), false, bad);
  assert.equal(accepts('a>9223372036854775807'), true);
  assert.equal(m('a<10', { a: '007' }), true, 'a leading zero is still an integer');
  assert.equal(m('a>0', { a: '9223372036854775807' }), true);
  assert.equal(m('a<1', { a: '9223372036854775808' }), false, 'a label past int64 is not an integer');
});

test('the object form is validated like metav1.LabelSelectorAsSelector: keys, values, and no values for Exists', () => {
  assert.throws(() => labelSelectorFromObject({ matchLabels: { 'a..b/c': 'x' } }), InvalidLabelSelectorError);
  assert.throws(() => labelSelectorFromObject({ matchLabels: { a: 'x'.repeat(64) } }), InvalidLabelSelectorError);
  assert.throws(
    () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: ['-x'] }] }),
    InvalidLabelSelectorError,
  );
  assert.throws(
    () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
    InvalidLabelSelectorError,
  );
  assert.throws(
    () => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }),
    InvalidLabelSelectorError,
  );
  assert.equal(
    formatLabelSelector(labelSelectorFromObject({ matchLabels: { 'example.com/a': '' } })),
    'example.com/a=',
  );
});
