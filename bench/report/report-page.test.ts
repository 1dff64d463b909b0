import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Debian's chromium; scripts/install-test-tools.sh installs it for the test command. */
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

test('the report rendered from a fixed JSON by `run-report.ts --render` shows its charts in Chromium with no console errors', async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'bench-report-page-'));
  t.after(() => rm(out, { recursive: true, force: true }));
  // The CLI path users take, without running any benchmark.
  await run(
    process.execPath,
    ['--import', 'tsx', 'bench/report/run-report.ts', '--render', 'bench/report/fixture-report.json', '--out', out],
    { cwd: ROOT },
  );
  assert.equal(
    JSON.parse(await readFile(join(out, 'report.json'), 'utf8')).workqueue.keys,
    1000,
    'the JSON is written beside the page',
  );

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  const url = pathToFileURL(join(out, 'report.html')).href;
  await page.goto(url, { waitUntil: 'load' });

  // Evaluated in the page (as strings: this project compiles without the DOM library).
  const charts = await page.evaluate<{ title: string; width: number; bars: number }[]>(`
    [...document.querySelectorAll('svg.chart')].map((svg) => ({
      title: svg.getAttribute('aria-label'),
      width: svg.getBoundingClientRect().width,
      // Bars the browser actually laid out with a height.
      bars: [...svg.querySelectorAll('rect.bar')].filter((r) => r.getBBox().height > 0).length,
    }))`);
  assert.equal(charts.length, 7, JSON.stringify(charts));
  for (const c of charts) {
    assert.ok(c.bars > 0, `chart "${c.title}" has no visible bar`);
    assert.ok(c.width > 300, `chart "${c.title}" is ${c.width} px wide`);
  }
  const text = await page.evaluate<string>('document.body.innerText');
  assert.match(text, /yes: <script>alert\(1\)<\/script>/, 'a result string shows as text');
  assert.equal(await page.evaluate<number>('document.scripts.length'), 0);
  assert.deepEqual(requests, [url], 'the page loads nothing but itself');
  assert.deepEqual(problems, []);
});
