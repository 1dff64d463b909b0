/**
 * Regression (issue 35): hostile kubeconfig Secrets given to `kubeconfigSecrets`. Before the
 * limits, the provider parsed a member Secret's kubeconfig on the event loop whatever its size or
 * shape: 380 KiB of keys stalled the loop 14 s, 512 KiB of `[[[…` 15 s and +488 MiB of RSS. Each
 * shape here must be refused with a named limit, logged with the Secret's namespace/name, while
 * the event loop stalls under 100 ms and RSS rises under 16 MiB.
 *
 * The stall is measured for real (the provider runs on promise callbacks only, so a timer that
 * cannot fire while it works measures it): the fake clock cannot see time spent on the CPU. On a
 * loaded machine a timer can be late for reasons of its own, so each shape gets up to ten tries and
 * keeps its best; the parse this guards against took seconds on every try.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock, flushMicrotasks } from '../../core/fake-clock.js';
import { recordingLogger } from '../../logging/recording-logger.js';
import { FakeClient } from '../../testing/fake-client/fake-client.js';
import type { ClusterEvents } from '../cluster-provider.js';
import { ClusterKubeconfigError, checkBase64KubeconfigSize } from './kubeconfig-member.js';
import { kubeconfigSecrets } from './kubeconfig-secrets.js';

const NS = 'fleet';
const MiB = 1024 * 1024;
const MAX_STALL_MS = 100;
const MAX_RSS_RISE_MIB = 16;
const TRIES = 10;
const MARK = 'S3CR3T';

/** `unit` repeated to `bytes` bytes (ASCII), then `tail`. */
const fill = (bytes: number, unit: string, tail = ''): string =>
  unit.repeat(Math.floor((bytes - tail.length) / unit.length)) + tail;

/** Hostile kubeconfigs of about `bytes` bytes, each after a valid-looking head. */
function shapes(bytes: number): Record<string, string> {
  const head = `apiVersion: v1\nkind: Config\ncurrent-context: x\n`;
  const size = bytes - head.length;
  let keys = '';
  for (let i = 0; keys.length < size - 16; i++) keys += `k${i}: ${MARK}\n`;
  let mappings = '';
  for (let d = 0; mappings.length < size - d - 8; d++) mappings += `${' '.repeat(d)}k:\n`;
  return {
    'many keys': head + keys,
    'deep flow nesting': `${head}x: ${fill(size - 4, '[')}`,
    'deep flow mapping nesting': `${head}x: ${fill(size - 4, '{a: ')}`,
    'deep block nesting (compact sequences)': `${head}x:\n${fill(size - 4, '- ')}`,
    'deep block nesting (indented mappings)': head + mappings,
    'one long line of flow items': `${head}x: [${fill(size - 8, `${MARK},`)}]\n`,
    'one long scalar line': `${head}token: ${fill(size - 10, 'A')}\n`,
    'alias bomb': `${head}a: &a [${MARK}]\nb: [${fill(size - 40, '*a, ')}]\n`,
    'blank lines and comments': head + fill(size, `# ${MARK}\n\n`),
  };
}

function secret(name: string, kubeconfig: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: NS, labels: { 'operator-runtime.io/fleet-member': 'true' } },
    data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
  };
}

interface Measured {
  readonly stallMs: number;
  /** Wall and CPU time from `start()` to the refusal (CPU: every thread of the process). */
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly rssRiseMiB: number;
  readonly maxRssRiseMiB: number;
  readonly problem: string;
}

/**
 * Starts the provider on a fake API holding the Secret and waits for its refusal, measuring the
 * event loop and RSS from the start: the informer's list, the decoding, the checks. The fake
 * client's own write of a megabyte (~100 ms of cloning on a loaded machine) happens before.
 */
async function refuse(name: string, text: string): Promise<Measured> {
  const clock = new FakeClock();
  const client = new FakeClient({ clock, objects: [secret(name, text)] });
  const log = recordingLogger();
  const engaged: string[] = [];
  const sink: ClusterEvents = { engage: (c) => void engaged.push(c.name), disengage: () => undefined };
  const stop = new AbortController();
  const provider = kubeconfigSecrets({ client, namespace: NS, clock, logger: log });

  let last = performance.now();
  let stallMs = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 2);
  // Let the probe tick, so it does not count the setup.
  await new Promise((resolve) => setTimeout(resolve, 20));
  stallMs = 0;
  const rss = process.memoryUsage().rss;
  const maxRss = process.resourceUsage().maxRSS * 1024;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const run = provider.start(stop.signal, sink);
  let wallMs: number;
  let cpuMs: number;
  try {
    // Promise callbacks only (the fake clock never moves): the refusal is done when they are.
    for (let i = 0; i < 10; i++) await flushMicrotasks();
    wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    cpuMs = (used.user + used.system) / 1000;
    // Two more ticks of the probe: the gap that held the work is then recorded.
    await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    clearInterval(probe);
    stop.abort();
    await run;
  }
  const warning = log.entries.find((e) => e.level === 'warn' && e.msg === 'member Secret skipped');
  assert.deepEqual(engaged, [], `${name}: not engaged`);
  assert.ok(warning, `${name}: the refusal is logged`);
  assert.equal(warning.obj.namespace, NS);
  assert.equal(warning.obj.name, name);
  const problem = String(warning.obj.error);
  return {
    stallMs,
    wallMs,
    cpuMs,
    rssRiseMiB: (process.memoryUsage().rss - rss) / MiB,
    maxRssRiseMiB: (process.resourceUsage().maxRSS * 1024 - maxRss) / MiB,
    problem,
  };
}

const signed = (n: number): string => `${n < 0 ? '' : '+'}${n.toFixed(1)}`;

function report(label: string, bytes: number, m: Measured): void {
  console.log(
    `# ${label} (${(bytes / 1024).toFixed(0)} KiB): stall ${m.stallMs.toFixed(1)} ms` +
      ` (refused in ${m.wallMs.toFixed(1)} ms, CPU ${m.cpuMs.toFixed(1)} ms), RSS ${signed(m.rssRiseMiB)} MiB` +
      ` (peak ${signed(m.maxRssRiseMiB)} MiB): ${m.problem}`,
  );
}

async function hostile(
  label: string,
  text: string,
  maxStallMs = MAX_STALL_MS,
  maxRssRiseMiB = MAX_RSS_RISE_MIB,
): Promise<void> {
  const name = label.replace(/[^a-z]+/g, '-').replace(/-+$/, '');
  let best: Measured | undefined;
  for (let i = 0; i < TRIES; i++) {
    const m = await refuse(name, text);
    // The reason first: a parse that completes (slowly) and fails later for another reason is no refusal.
    if (!/\((maxBytes|maxDepth|maxNodes|maxAliases)\)/.test(m.problem)) {
      report(label, text.length, m);
      assert.fail(`${label}: not refused by a limit: ${m.problem}`);
    }
    assert.ok(m.problem.includes(`cluster "${name}"`), `${label}: names the cluster: ${m.problem}`);
    assert.ok(!m.problem.includes(MARK), `${label}: no content in the log`);
    if (!best || m.stallMs < best.stallMs) best = m;
    if (best.stallMs < maxStallMs && best.rssRiseMiB < maxRssRiseMiB && best.maxRssRiseMiB < maxRssRiseMiB) break;
    // Let whatever else runs on the machine have its turn before the next try.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const m = best!;
  report(label, text.length, m);
  assert.ok(m.stallMs < maxStallMs, `${label}: the event loop stalled ${m.stallMs.toFixed(1)} ms`);
  assert.ok(m.rssRiseMiB < maxRssRiseMiB, `${label}: RSS rose ${m.rssRiseMiB.toFixed(1)} MiB`);
  assert.ok(m.maxRssRiseMiB < maxRssRiseMiB, `${label}: peak RSS rose ${m.maxRssRiseMiB.toFixed(1)} MiB`);
}

// Just under the 1 MiB a Secret may hold: refused on its size, before it is even decoded to text.
for (const [label, text] of Object.entries(shapes(MiB - 1024))) {
  test(`regression (issue 35): a 1 MiB kubeconfig Secret (${label}) is refused by kubeconfigSecrets with a named limit, the event loop never stalled ${MAX_STALL_MS} ms, RSS up under ${MAX_RSS_RISE_MIB} MiB`, async () => {
    await hostile(label, text);
  });
}

// Just under the size limit: refused on its shape, by the pre-scan, before the parser builds anything.
// Lexing up to the node limit takes 55-70 ms on a quiet machine, so these get a looser bound: a
// tripwire for a return to the seconds the parser took (10 s for 250 KiB of keys), robust beside
// the other test files on 2 busy cores. The issue's 100 ms figure is for the 1 MiB Secret above.
const MAX_SHAPE_STALL_MS = 250;
// And the lexer's tokens for 20,000 nodes on one line peaked at +17.6 MiB on Node 24 (+13 MiB for
// many keys): bounded, against the +27-93 MiB and growing of the parser these shapes once reached.
const MAX_SHAPE_RSS_RISE_MIB = 32;
for (const [label, text] of Object.entries(shapes(250 * 1024))) {
  if (label === 'one long scalar line') continue; // one scalar is a shape the parser handles in linear time
  test(`regression (issue 35): a 250 KiB kubeconfig Secret (${label}) is refused on its shape with a named limit, the event loop never stalled ${MAX_SHAPE_STALL_MS} ms`, async () => {
    await hostile(`${label}, 250 KiB`, text, MAX_SHAPE_STALL_MS, MAX_SHAPE_RSS_RISE_MIB);
  });
}

test("a Secret's base64 kubeconfig is measured from its length exactly, and refused over the limit without decoding", () => {
  for (let n = 0; n < 64; n++) {
    const data = Buffer.alloc(n, 7).toString('base64');
    for (const text of [data, data.replace(/=+$/, '')]) {
      const limits = { maxBytes: Buffer.from(text, 'base64').length };
      assert.doesNotThrow(() => checkBase64KubeconfigSize('c', text, limits), `${n} bytes fit ${limits.maxBytes}`);
      if (limits.maxBytes > 0)
        assert.throws(
          () => checkBase64KubeconfigSize('c', text, { maxBytes: limits.maxBytes - 1 }),
          (err: unknown) => err instanceof ClusterKubeconfigError && err.message.includes(`is ${n} bytes`),
        );
    }
  }
  // Line breaks would make the length overstate the size: left to the check after decoding.
  assert.doesNotThrow(() => checkBase64KubeconfigSize('c', 'QUJD\n'.repeat(100), { maxBytes: 300 }));
});
