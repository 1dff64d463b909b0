/**
 * The per-object history in a real browser (Debian's chromium, headless, driven by playwright-core),
 * against a real TestEnv: one ConfigMap reconciled five times — created, edited, failing on purpose,
 * fixed, relabelled — its timeline opened from its row in "Recent reconciles", each reconcile with
 * its trigger, result and the Secret it wrote as a diff with the Secret's values redacted; hostile
 * text (in an annotation the reconciler copies, in its error, in the controller's name) shown as
 * text. The screenshot is checked as the console's other browser test checks its own.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { chromium, type Browser } from 'playwright-core';
import { KubeClient } from '../client/kube-client.js';
import { eventually } from '../testing/control-plane/eventually.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import { Manager } from '../manager/manager.js';
import { TerminalError } from '../controller/terminal-error.js';
import { resourceVersionChanged } from '../controller/predicates.js';
import { pngColours } from './testing/png-colours.js';
import type { ObjectTimeline } from './object-history.js';

/** One object's timeline from the console's HTTP API (`api/history`). */
async function timelineOf(consoleUrl: string, controller: string, key: string): Promise<ObjectTimeline> {
  const res = await fetch(`${consoleUrl}api/history?${new URLSearchParams({ controller, key })}`);
  if (!res.ok) throw new Error(`api/history answered ${res.status}`);
  return (await res.json()) as ObjectTimeline;
}

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT_DIR = fileURLToPath(new URL('../../.tmp/console-test/', import.meta.url));
const NS = 'default';
const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const PAYLOAD_NAME = '<img src=x onerror=alert(1)>';
const PAYLOAD_SCRIPT = '<script>window.__xss = 1; alert(2)</script>';
const CONTROLLER = `settings ${PAYLOAD_SCRIPT}`;

describe('the console timeline of one object across five reconciles, in Chromium', () => {
  let env: TestEnv;
  let client: KubeClient;
  let manager: Manager;
  let browser: Browser;
  const stop = new AbortController();
  let running: Promise<void>;

  before(async () => {
    mkdirSync(OUT_DIR, { recursive: true });
    env = await TestEnv.start();
    client = await KubeClient.fromKubeconfig({ path: env.kubeconfigPath });
    manager = new Manager({ client, metricsPort: 0, healthPort: 0, console: { port: 0 }, heapCompaction: false });
    const writer = manager.client;
    manager
      .controller(CONTROLLER)
      // A ConfigMap has no generation: every change counts (the default predicate reads generations).
      .for(CM, { predicates: [resourceVersionChanged] })
      .complete(async (req, ctx) => {
        const cm = (await ctx.get()) as ConfigMap | undefined;
        if (!cm || !cm.metadata?.name?.startsWith('app')) return;
        if (cm.data?.mode === 'fail') throw new TerminalError(`cannot reconcile ${req.name}: ${PAYLOAD_SCRIPT}`);
        await writer.apply(
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: `${req.name}-creds`, namespace: NS, annotations: { note: cm.data?.note ?? '' } },
            stringData: { password: cm.data?.password ?? '' },
          },
          { fieldManager: 'history-test', force: true },
        );
      });
    running = manager.start(stop.signal);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
  });

  after(async () => {
    await browser?.close();
    stop.abort();
    await running;
    await client?.close();
    await env?.stop();
  });

  /** Waits until the object's history holds `n` reconciles. */
  const reconciles = (n: number): Promise<ObjectTimeline> =>
    eventually(`${n} reconciles remembered`, async () => {
      const t = await timelineOf(manager.endpoints.consoleUrl!, CONTROLLER, `${NS}/app`);
      return t && t.reconciles.length >= n ? t : undefined;
    });

  const edit = async (data: Record<string, string>, labels?: Record<string, string>): Promise<void> => {
    await client.patch(
      CM,
      'app',
      { data, ...(labels ? { metadata: { labels } } : {}) },
      { namespace: NS, type: 'merge' },
    );
  };

  test('five reconciles: triggers, results, the Secret written as a redacted diff; opened from its row; hostile text stays text', async () => {
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app', namespace: NS },
      data: { password: 'first-s3cret', note: PAYLOAD_NAME },
    });
    await reconciles(1);
    await edit({ password: 'second-s3cret' });
    await reconciles(2);
    await edit({ mode: 'fail' });
    await reconciles(3);
    await edit({ mode: 'ok', password: 'third-s3cret' });
    await reconciles(4);
    await edit({}, { tier: 'gold' });
    const timeline = await reconciles(5);

    // The JSON the page reads: newest first, each with its trigger and writes.
    const [fifth, fourth, third, , first] = timeline.reconciles;
    assert.deepEqual(first!.trigger, { type: 'event', source: 'for', kind: 'ConfigMap', listed: false });
    assert.equal(third!.result, 'terminal_error');
    assert.match(third!.error!, /cannot reconcile app/);
    assert.equal(third!.writes.length, 0);
    for (const r of [first!, fourth!, fifth!]) {
      assert.equal(r.result, 'success');
      assert.equal(r.writes.length, 1);
      const w = r.writes[0]!;
      assert.equal(`${w.verb} ${w.kind} ${w.namespace}/${w.name}`, `apply Secret ${NS}/app-creds`);
      assert.deepEqual((w.diff as { stringData: unknown }).stringData, { password: '[Redacted]' });
    }
    assert.ok(!JSON.stringify(timeline).includes('s3cret'), 'no Secret value is remembered');
    const url = manager.endpoints.consoleUrl!;
    const api = (await (
      await fetch(`${url}api/history?${new URLSearchParams({ controller: CONTROLLER, key: `${NS}/app` })}`)
    ).json()) as ObjectTimeline;
    assert.equal(api.reconciles.length, 5);
    assert.equal((await fetch(`${url}api/history?controller=x`)).status, 400);

    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    page.setDefaultTimeout(90_000);
    const problems: string[] = [];
    const dialogs: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('dialog', (d) => void (dialogs.push(d.message()), d.dismiss()));
    try {
      assert.equal((await page.goto(url))?.status(), 200);
      await page.locator('#status.live').waitFor();
      assert.equal(await page.locator('#timeline').isHidden(), true, 'no timeline until an object is chosen');
      // Reached from its row: the key in "Recent reconciles" links to the object's timeline.
      await page
        .locator('#recent a.key', { hasText: `${NS}/app` })
        .first()
        .click();
      await page.waitForFunction('document.querySelectorAll("#timeline-body tr.reconcile").length === 5');
      const title = await page.locator('#timeline-title').innerText();
      assert.ok(title.includes(CONTROLLER), title);
      const body = await page.locator('#timeline-body').innerText();
      assert.match(body, /ConfigMap changed \(for\)/);
      assert.match(body, /terminal_error/);
      assert.match(body, /apply Secret default\/app-creds/);
      assert.ok(body.includes('[Redacted]'));
      assert.ok(body.includes(PAYLOAD_NAME), 'the annotation shows as text');
      assert.ok(body.includes(PAYLOAD_SCRIPT), 'the error shows as text');
      assert.ok(!body.includes('s3cret'));
      assert.equal(await page.locator('#timeline-chart circle').count(), 5, 'one marker per reconcile');

      const count = (selector: string): Promise<number> =>
        page.evaluate(`document.querySelectorAll(${JSON.stringify(selector)}).length`);
      assert.equal(await count('img'), 0, 'no <img> was injected');
      assert.equal(await count('script'), 1, "only the page's own script");
      assert.equal(await page.evaluate('typeof window.__xss'), 'undefined');

      const screenshot = `${OUT_DIR}console-timeline.png`;
      await page.locator('#timeline').screenshot({ path: screenshot });
      const image = pngColours(readFileSync(screenshot));
      assert.ok(image.width >= 600 && image.height >= 300, `${image.width}x${image.height}`);
      assert.ok(image.colours >= 50, `only ${image.colours} distinct colours`);
      assert.ok(image.dominantShare < 0.98, `${(image.dominantShare * 100).toFixed(1)} % of the pixels are one colour`);
      assert.deepEqual(problems, []);
      assert.deepEqual(dialogs, []);
    } finally {
      await context.close();
    }
  });
});
