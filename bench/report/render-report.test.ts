import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderReport } from './render-report.js';
import { spread, type ReportData } from './report-data.js';
import { barChart, niceScale } from './svg-bar-chart.js';

const fixture = JSON.parse(readFileSync(new URL('./fixture-report.json', import.meta.url), 'utf8')) as ReportData;

test('spread gives min, median (mean of the middle two for an even count) and max, ignoring non-finite values', () => {
  assert.deepEqual(spread([3, 1, 2]), { min: 1, median: 2, max: 3, n: 3 });
  assert.deepEqual(spread([4, 1, 3, 2, NaN]), { min: 1, median: 2.5, max: 4, n: 4 });
  assert.equal(spread([]), undefined);
});

test('the axis maximum is a round number at or above the largest value', () => {
  assert.deepEqual(niceScale(9.3), { max: 10, step: 2 });
  assert.deepEqual(niceScale(430), { max: 500, step: 100 });
  assert.deepEqual(niceScale(0), { max: 1, step: 0.2 });
});

test('a bar stands at the median and its whisker spans min to max', () => {
  // Axis 0..500 over a 200 px plot (300 − 36 − 64): 1 px per 2.5 units, zero at y = 236.
  const svg = barChart({
    title: 't',
    unit: 'u',
    groups: [{ label: 'g', bars: [{ series: 's', value: { min: 100, median: 250, max: 450, n: 3 } }] }],
  });
  assert.match(svg, /<rect class="bar" [^>]*y="136\.0" [^>]*height="100\.0"/);
  assert.match(svg, /<path class="whisker" d="M[\d.]+ 56\.0V196\.0/);
});

test('the report renders every section of the fixture with its charts', () => {
  const html = renderReport(fixture);
  for (const id of ['machine', 'informer', 'controller', 'workqueue', 'leader-failover', 'relist'])
    assert.match(html, new RegExp(`<section id="${id}">`));
  // informer: sync + heap; controller; workqueue; leader; relist: in-process + informer live peak.
  assert.equal(html.match(/<svg class="chart"/g)?.length, 7);
  assert.match(html, /load average \(1\/5\/15 min\) at start<\/td><td>1\.00 \/ 0\.50 \/ 0\.25/);
  assert.match(html, /330 reconciles\/s <span class="spread">\(300–340, n=3\)/);
  // The work queue's anchor is shown beside it and is not held to the goal.
  assert.match(html, /<td>batch, 1 worker: plain FIFO \(anchor\)<\/td><td>1,600,000 [^]*?<td>anchor<\/td>/);
  assert.match(html, /<td>stream, 8 workers: operator-runtime, metrics on<\/td>[^]*?<strong>no<\/strong>/);
});

test('text from the results is escaped and the page references nothing outside itself', () => {
  const html = renderReport(fixture);
  assert.ok(!html.includes('<script'), 'no script element, not even from a result string');
  assert.ok(html.includes('yes: &lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(html.includes('&lt;b&gt;made-up&lt;/b&gt;'));
  const urls = [...html.matchAll(/(?:https?:)?\/\/[^\s"'<>)]+/g)]
    .map((m) => m[0])
    .filter((u) => u !== 'http://www.w3.org/2000/svg');
  assert.deepEqual(urls, []);
});

test('a section whose bench did not run is left out', () => {
  const { informer: _informer, leaderFailover: _leader, ...rest } = fixture;
  const html = renderReport({ ...rest, failures: [] });
  assert.doesNotMatch(html, /<section id="informer">|<section id="leader-failover">/);
  assert.match(html, /<section id="relist">/, 'the in-process relist still shows');
  assert.doesNotMatch(html, /class="failures"/);
});
