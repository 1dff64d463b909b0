/**
 * The operator console in a real browser (Debian's chromium, headless, driven by playwright-core):
 * against the Database operator on a real TestEnv (failing keys, backoff, informers, Events, a
 * screenshot checked for content), and against hostile object names and messages (XSS). One
 * browser launch for the file. Screenshots go to .tmp/console-test/.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  KubeClient,
  Manager,
  createLogger,
  createMetricsRegistry,
  type Client,
  type Kubeconfig,
} from 'operator-runtime';
import { TestEnv, eventually, freePort, readManifests } from 'operator-runtime/testing';
import type { Database } from './src/database.js';
import { createDatabaseOperator, type DatabaseOperator } from './src/operator.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT_DIR = fileURLToPath(new URL('../../.tmp/console-test/', import.meta.url));
const NS = 'default';
const PAGE_TIMEOUT_MS = 90_000;

let browser: Browser;
before(async () => {
  mkdirSync(OUT_DIR, { recursive: true });
  browser = await chromium.launch({
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
});
after(async () => {
  await browser?.close();
});

/** A page on the console that records console errors, uncaught page errors and dialogs. */
async function openConsole(
  url: string,
): Promise<{ page: Page; problems: string[]; dialogs: string[]; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  const problems: string[] = [];
  const dialogs: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('dialog', (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  const response = await page.goto(url);
  assert.equal(response?.status(), 200);
  await page.locator('#status.live').waitFor();
  return { page, problems, dialogs, close: () => context.close() };
}

/** Distinct RGB(A) colours of an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes). */
function pngColours(png: Buffer): { width: number; height: number; colours: number; dominantShare: number } {
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.subarray(offset + 4, offset + 8).toString('latin1');
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth 8');
      assert.equal(data[12], 0, 'not interlaced');
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      assert.ok(channels > 0, `colour type ${data[9]}`);
    } else if (type === 'IDAT') idat.push(data);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const prev = Buffer.alloc(stride);
  const line = Buffer.alloc(stride);
  const counts = new Map<number, number>();
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter]!;
      line[i] = (src[i]! + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const colour = line.readUIntBE(x * channels, 3);
      counts.set(colour, (counts.get(colour) ?? 0) + 1);
    }
    line.copy(prev);
  }
  return { width, height, colours: counts.size, dominantShare: Math.max(...counts.values()) / (width * height) };
}

describe('the operator console against the Database operator on a real control plane', () => {
  let env: TestEnv;
  let client: KubeClient;
  let operatorClient: KubeClient;
  let operator: DatabaseOperator;
  const stop = new AbortController();
  let running: Promise<void>;

  before(async () => {
    env = await TestEnv.start({ crds: await readManifests(new URL('./config/crd.yaml', import.meta.url)) });
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    const registry = createMetricsRegistry();
    operatorClient = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig, registry });
    // Nothing listens there: every backup before delete fails, so a deleted Database sits in backoff.
    const deadBackupService = `http://127.0.0.1:${await freePort()}/`;
    operator = createDatabaseOperator({
      client: operatorClient,
      registry,
      logger: createLogger({ level: 'silent' }),
      backupEndpoint: deadBackupService,
      metricsPort: 0,
      healthPort: 0,
      consolePort: 0,
      leaderElectionNamespace: NS,
      identity: 'console-test',
    });
    running = operator.manager.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    await running;
    await operator?.close();
    await operatorClient?.close();
    await client?.close();
    await env?.stop();
  });

  const database = (name: string, version: string): Database =>
    ({
      apiVersion: 'example.com/v1',
      kind: 'Database',
      metadata: { name, namespace: NS },
      spec: { engine: 'postgres', version, replicas: 1, storage: '1Gi' },
    }) as Database;

  test('shows failing keys, keys in backoff, informers and Events live, with no console errors; the screenshot is not blank', async () => {
    const { page, problems, dialogs, close } = await openConsole(await consoleUrl(operator.manager));
    try {
      await client.create(database('fine', '16'));
      await client.create(database('broken', '99')); // unsupported version: a terminal error, on purpose
      await client.create(database('stuck', '16'));
      // Deleting "stuck" needs a backup first, and the backup service is down: it backs off.
      await waitForFinalizer(client, 'stuck');
      await client.delete({ apiVersion: 'example.com/v1', kind: 'Database' }, 'stuck', { namespace: NS });

      const broken = page.locator('#failing-body tr', { hasText: `${NS}/broken` }).first();
      await broken.waitFor();
      assert.match(await broken.innerText(), /terminal_error/);
      assert.match(await broken.innerText(), /unsupported version postgres 99/);
      await page
        .locator('#failing-body tr', { hasText: `${NS}/stuck` })
        .first()
        .waitFor();
      await page
        .locator('#backoff-body tr', { hasText: `${NS}/stuck` })
        .first()
        .waitFor();
      assert.equal(
        await page.locator('#failing-body tr', { hasText: `${NS}/fine` }).count(),
        0,
        'a healthy key is not listed as failing',
      );
      await page.locator('#events-body tr', { hasText: 'UnsupportedVersion' }).first().waitFor();
      await page
        .locator('#recent tr', { hasText: `${NS}/fine` })
        .first()
        .waitFor();
      const controllerRow = page.locator('#controllers-body tr', { hasText: 'database' });
      assert.equal((await controllerRow.locator('svg.chart rect').count()) > 0, true, 'the chart has bars');
      const informers = await page.locator('#informers-body').innerText();
      assert.match(informers, /Database/);
      assert.match(informers, /watching/);
      assert.match(
        await page.locator('#leader').innerText(),
        /this replica leads · identity console-test · Lease holder console-test/,
      );

      const screenshot = `${OUT_DIR}console.png`;
      await page.screenshot({ path: screenshot, fullPage: true });
      const image = pngColours(readFileSync(screenshot));
      assert.ok(image.width >= 1000 && image.height >= 600, `${image.width}x${image.height}`);
      // A blank page is one colour; text, tables and charts make hundreds (antialiasing).
      assert.ok(image.colours >= 50, `only ${image.colours} distinct colours`);
      assert.ok(image.dominantShare < 0.98, `${(image.dominantShare * 100).toFixed(1)} % of the pixels are one colour`);
      assert.deepEqual(problems, []);
      assert.deepEqual(dialogs, []);
    } finally {
      await close();
    }
  });
});

describe('the operator console renders hostile names and messages as text', () => {
  const PAYLOAD_NAME = '<img src=x onerror=alert(1)>';
  const PAYLOAD_SCRIPT = '<script>window.__xss = 1; alert(2)</script>';
  const stop = new AbortController();
  let manager: Manager;
  let running: Promise<void>;

  before(async () => {
    // No real API server accepts these names (DNS-1123): a hand-made client serves them, as a
    // compromised or buggy server could. The reconciler echoes them in its errors and Events.
    const hostile = {
      apiVersion: 'example.com/v1',
      kind: 'Database',
      metadata: {
        name: PAYLOAD_NAME,
        namespace: NS,
        uid: 'u1',
        resourceVersion: '1',
        labels: { team: PAYLOAD_SCRIPT },
      },
      spec: {},
    };
    manager = new Manager({ client: hostileClient([hostile]), metricsPort: 0, healthPort: 0, console: { port: 0 } });
    const recorder = manager.eventRecorder(`operator ${PAYLOAD_SCRIPT}`);
    manager
      .controller(`db ${PAYLOAD_SCRIPT}`)
      .for({ apiVersion: 'example.com/v1', kind: 'Database' })
      .complete(async (req) => {
        recorder.event(hostile, 'Warning', `Bad${PAYLOAD_NAME}`, `label team=${PAYLOAD_SCRIPT} on ${PAYLOAD_NAME}`);
        throw new Error(`cannot reconcile ${req.name}: ${PAYLOAD_SCRIPT}`);
      });
    running = manager.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    await running;
  });

  test('a Database named <img src=x onerror=alert(1)> and a label carrying script show as text: no dialog, no injected element', async () => {
    const { page, problems, dialogs, close } = await openConsole(await consoleUrl(manager));
    try {
      const row = page.locator('#failing-body tr', { hasText: `${NS}/${PAYLOAD_NAME}` }).first();
      await row.waitFor();
      assert.ok((await row.innerText()).includes(PAYLOAD_SCRIPT), 'the error message shows the script as text');
      await page.locator('#events-body tr', { hasText: PAYLOAD_SCRIPT }).first().waitFor();
      await page
        .locator('#controllers-body tr', { hasText: `db ${PAYLOAD_SCRIPT}` })
        .first()
        .waitFor();
      await page.locator('#backoff-body tr', { hasText: PAYLOAD_NAME }).first().waitFor();
      // Let a few polls re-render the rows with the payloads before looking for side effects.
      await page.waitForFunction('document.querySelectorAll("#recent tbody tr").length >= 3');

      const count = (selector: string): Promise<number> =>
        page.evaluate(`document.querySelectorAll(${JSON.stringify(selector)}).length`);
      assert.equal(await count('img'), 0, 'no <img> was injected');
      assert.equal(await count('script'), 1, "only the page's own script");
      assert.equal(await page.evaluate('typeof window.__xss'), 'undefined');
      assert.deepEqual(dialogs, []);
      assert.deepEqual(problems, []);
      await page.screenshot({ path: `${OUT_DIR}console-xss.png`, fullPage: true });

      // The check above can fail: the same payload parsed as HTML does create an element.
      await page.evaluate(`document.body.insertAdjacentHTML('beforeend', ${JSON.stringify(PAYLOAD_NAME)})`);
      assert.equal(await count('img'), 1);
    } finally {
      await close();
    }
  });
});

/** The manager binds its servers first thing in start(); waits for that. */
function consoleUrl(manager: Manager): Promise<string> {
  return eventually('the console is listening', () => manager.endpoints.consoleUrl);
}

async function waitForFinalizer(client: KubeClient, name: string): Promise<void> {
  await eventually(`${name} has the finalizer`, async () => {
    const db = await client.get<Database>({ apiVersion: 'example.com/v1', kind: 'Database' }, name, { namespace: NS });
    return (db.metadata.finalizers?.length ?? 0) > 0 || undefined;
  });
}

/**
 * A client that serves `objects` by list or by watch-list (ADDED events, then the
 * initial-events-end bookmark), keeps watches open until aborted, and accepts any create.
 */
function hostileClient(objects: readonly object[]): Client {
  type Event = { type: string; object: object };
  return {
    listPage: async () => ({ items: objects, resourceVersion: '1' }),
    watch: (_type: unknown, opts: { signal?: AbortSignal; sendInitialEvents?: boolean }) => {
      const initial: Event[] = opts.sendInitialEvents
        ? [
            ...objects.map((object) => ({ type: 'ADDED', object })),
            {
              type: 'BOOKMARK',
              object: { metadata: { resourceVersion: '1', annotations: { 'k8s.io/initial-events-end': 'true' } } },
            },
          ]
        : [];
      return {
        [Symbol.asyncIterator]: () => ({
          next: (): Promise<IteratorResult<Event, undefined>> => {
            const event = initial.shift();
            if (event) return Promise.resolve({ done: false, value: event });
            return new Promise((resolve) => {
              if (opts.signal?.aborted) resolve({ done: true, value: undefined });
              else
                opts.signal?.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true });
            });
          },
        }),
      };
    },
    create: async (obj: object) => obj,
  } as unknown as Client;
}
