import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidLabelSelectorError } from '../../cache/errors.js';
import { matchesLabels as cacheMatches, parseLabelSelector as cacheParse } from '../../cache/label-selector.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';

const match = (selector: string, labels: Record<string, string>): boolean =>
  matchesLabels(parseLabelSelector(selector), labels);

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

// Issue 13 item 4: the fake had its own parser with other key rules. These are the selectors on
// which it and the cache's parser disagreed (and a few where both differed from the API server);
// the fake now uses the cache's parser, and must answer as it does: same verdict, same matches.
const DISAGREED: readonly {
  readonly selector: string;
  readonly valid: boolean;
  readonly labels?: Record<string, string>;
  readonly matches?: boolean;
}[] = [
  { selector: 'a..b/c=1', valid: false }, // the cache accepted a malformed key prefix
  { selector: 'a.-b/c=1', valid: false },
  { selector: 'a-.b/c', valid: false },
  { selector: 'a in ()', valid: true, labels: { a: '' }, matches: true }, // the cache refused the set {""}
  { selector: 'a notin ()', valid: true, labels: { a: '' }, matches: false },
  { selector: 'a\r=b', valid: true, labels: { a: 'b' }, matches: true }, // the cache read \r as part of the key
  { selector: `${'n'.repeat(64)}=1`, valid: false }, // both accepted a 64-character name
  { selector: `${'p'.repeat(254)}/n=1`, valid: false }, // both accepted a 254-character prefix
  { selector: 'a>-1', valid: false }, // both accepted a negative operand the server refuses
  { selector: 'a>9223372036854775808', valid: false }, // both accepted an operand past int64
  { selector: 'a>9223372036854775806', valid: true, labels: { a: '9223372036854775807' }, matches: true },
  { selector: 'in=notin', valid: true, labels: { in: 'notin' }, matches: true },
];

test('the fake reads label selectors exactly as the cache does, including where their parsers used to disagree', () => {
  for (const c of DISAGREED) {
    const name = JSON.stringify(
      c.selector.length > 40 ? `${c.selector.slice(0, 20)}…(${c.selector.length})` : c.selector,
    );
    if (!c.valid) {
      assert.throws(() => parseLabelSelector(c.selector), SelectorError, `fake refuses ${name}`);
      assert.throws(() => cacheParse(c.selector), InvalidLabelSelectorError, `cache refuses ${name}`);
      continue;
    }
    const fake = parseLabelSelector(c.selector);
    assert.deepEqual(fake, cacheParse(c.selector), name);
    assert.equal(matchesLabels(fake, c.labels), c.matches, `fake match ${name}`);
    assert.equal(cacheMatches(cacheParse(c.selector), c.labels), c.matches, `cache match ${name}`);
  }
});

test("a refused label selector is a SelectorError (an OperatorRuntimeError with a code) carrying the parser's position", () => {
  const err = (() => {
    try {
      parseLabelSelector('app in (x');
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  assert.ok(err instanceof SelectorError);
  assert.equal(err.code, 'ERR_INVALID_SELECTOR');
  assert.match(err.message, /position 9/);
});
