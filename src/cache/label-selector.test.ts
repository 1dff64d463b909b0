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
  for (const bad of ['a in ()', 'a=b,', 'a in x', 'a in (x', '=b', 'a b', 'a=b=c', 'a>x', '-bad=1', ',a']) {
    assert.throws(() => parseLabelSelector(bad), InvalidLabelSelectorError, bad);
  }
  assert.throws(() => parseLabelSelector('a in (x'), /position/);
});

test('equal selectors written differently format to the same canonical string', () => {
  assert.equal(formatLabelSelector(parseLabelSelector('b=2, a==1')), formatLabelSelector(parseLabelSelector('a=1,b=2')));
  assert.equal(formatLabelSelector(parseLabelSelector('e in (y,x),!f')), '!f,e in (x,y)');
  assert.equal(formatLabelSelector(parseLabelSelector('e in (x)')), 'e=x');
  const round = 'a!=1,b,c notin (p,q),n<3';
  assert.equal(formatLabelSelector(parseLabelSelector(round)), round);
});

test('the object form (matchLabels + matchExpressions) converts to the same requirements', () => {
  const sel = labelSelectorFromObject({ matchLabels: { app: 'db' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['cache'] }, { key: 'x', operator: 'Exists' }] });
  assert.equal(formatLabelSelector(sel), 'app=db,tier!=cache,x');
  assert.equal(matchesLabels(labelSelectorFromObject(undefined), { a: '1' }), true);
  assert.throws(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }), InvalidLabelSelectorError);
});
