import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';

const match = (selector: string, labels: Record<string, string>): boolean => matchesLabels(parseLabelSelector(selector), labels);

test('equality, inequality, set-based, existence and numeric label requirements all hold at once', () => {
  const labels = { app: 'web', tier: 'fe', 'example.com/rank': '3' };
  assert.equal(match('app=web,tier in (fe,be),!missing,example.com/rank>2,example.com/rank<4', labels), true);
  assert.equal(match('app==web,tier!=fe', labels), false);
  assert.equal(match('tier notin (be)', labels), true);
  assert.equal(match('tier notin (fe)', labels), false);
  assert.equal(match('missing notin (x)', labels), true, 'notin matches objects without the key');
  assert.equal(match('missing!=x', labels), true, '!= matches objects without the key');
  assert.equal(match('', labels), true, 'the empty selector matches everything');
});

test('malformed label selectors throw SelectorError', () => {
  for (const bad of ['app in (', 'app=a b', 'app>x', '=web', 'a,,b', 'bad key=1']) {
    assert.throws(() => parseLabelSelector(bad), SelectorError, bad);
  }
});

test('field selectors support metadata.name and metadata.namespace only', () => {
  const sel = parseFieldSelector('metadata.name=a,metadata.namespace!=kube-system');
  assert.equal(matchesFields(sel, { name: 'a', namespace: 'default' }), true);
  assert.equal(matchesFields(sel, { name: 'a', namespace: 'kube-system' }), false);
  assert.throws(() => parseFieldSelector('spec.size=1'), /field label not supported/);
  assert.throws(() => parseFieldSelector('metadata.name'), SelectorError);
});
