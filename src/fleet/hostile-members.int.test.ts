/**
 * Hostile members (issue 35). docs/fleet.md promises that one member cluster's trouble does not
 * stop the other members' work. One manager, one fleet controller (built as fleet.int.test.ts
 * builds one: default options), one healthy member and, one at a time, a hostile one: slow, flapping,
 * huge, or lying (a wrong /version, 500s on writes, 500s on everything, watches cut mid-event). For
 * each, the healthy member's edit→reconcile latency is measured and held against a baseline taken
 * in the same run with no hostile member engaged, and the healthy member's objects must converge.
 *
 * Every member is the same kube-apiserver (one TestEnv, also the host) reached through a fault
 * proxy and link of its own (ProxiedMember): one control plane instead of three on a 2-core box.
 * Members share the data, so each kind of member has its own namespace and the reconciler leaves
 * the other's objects alone; a background writer edits the hostile namespace for the whole run
 * (baseline included), so the hostile member always has work of its own and the healthy member
 * sees the same event traffic in every phase.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeClient } from '../client/kube-client.js';
import type { Kubeconfig } from '../client/kubeconfig.js';
import type { KubeObject } from '../core/object-key.js';
import { createLogger } from '../logging/create-logger.js';
import { Manager } from '../manager/manager.js';
import { WIDGET_CRD } from '../testing/conformance/client-conformance.js';
import { eventually } from '../testing/control-plane/eventually.js';
import type { FaultHandle } from '../testing/chaos/fault-proxy.js';
import { ProxiedMember } from '../testing/fleet/proxied-member.js';
import { freePort } from '../testing/control-plane/free-port.js';
import { TestEnv } from '../testing/control-plane/test-env.js';
import type { MemberCluster } from './cluster-provider.js';
import type { FleetReconcileContext } from './fleet-reconciler.js';
import type { FleetRequest } from './fleet-request.js';
import { checkKubeconfig, kubeconfigMember } from './providers/kubeconfig-member.js';
import { manualClusters } from './testing/manual-clusters.js';

const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const HEALTHY = 'healthy';
const HEALTHY_WIDGETS = 5;
const HOSTILE_WIDGETS = 4;
/** Healthy edits per phase: p99 of 10 is their maximum, which is what a stall shows up in. */
const EDITS = 10;
/** One healthy edit starts this often (at most), so a phase spans ~3 s: long enough for a flap or a relist to land in it. */
const EDIT_SPACING_MS = 300;
/**
 * A phase stops editing once it has run this long (with what it measured so far): a member that
 * stalls the healthy one for seconds per edit would otherwise hold the file for minutes.
 */
const PHASE_BUDGET_MS = 12_000;
/** The background writer edits a hostile-namespace Widget this often. */
const HOSTILE_EDIT_EVERY_MS = 250;
/** A healthy edit not reconciled within this long is counted at this latency (and the phase fails). */
const EDIT_TIMEOUT_MS = 15_000;
/**
 * The bound is 2 × the baseline p99 plus this. Why a floor: the baseline p99 is tens of ms, and on
 * a shared, loaded 2-core machine (other test files and builds running at once) one sample in ten
 * regularly catches a scheduler or GC pause of 100–200 ms that has nothing to do with the hostile
 * member; 2 × 40 ms would flag that noise. 250 ms is still far below any stall a hostile member
 * causes by holding the worker (the slow member's 2 s per request, a flap's reset), so those fail.
 */
const NOISE_FLOOR_MS = 250;
const SLOW_DELAY_MS = 2_000;
const HUGE_ITEMS = 5_000;
const HUGE_PAD_BYTES = 2_048;
/** The huge member relists (its watch cut, the next one answered 410) this often. */
const HUGE_RELIST_EVERY_MS = 1_500;

interface Widget extends KubeObject {
  metadata: {
    name: string;
    namespace: string;
    resourceVersion: string;
    generation: number;
    annotations?: Record<string, string>;
  };
  spec: { size: number };
  status?: { observedGeneration?: number };
}

interface Span {
  readonly cluster: string;
  readonly name: string;
  readonly startMs: number;
  endMs: number;
}

interface Figures {
  /** The slowest edit: when it was written and when a reconcile saw it (performance.now()). */
  readonly worst: { readonly fromMs: number; readonly toMs: number };
  readonly p50: number;
  readonly p99: number;
  /** This process's event-loop delay during the phase (the operator, its members' clients and the proxies share it). */
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  readonly max: number;
  readonly timedOut: number;
  readonly samples: readonly number[];
}

/** A hostile member made hostile: what it did, and how to make it harmless again. */
interface Armed {
  /** Resolves once the hostility is in force for the operator, before the healthy edits start. */
  ready?(): Promise<void>;
  /** Runs after the healthy edits, before `witness` and `assertHostile`. */
  measured?(): Promise<void>;
  /** For the diagnostic line: what the hostility amounted to during the phase. */
  witness(): string;
  /** Throws unless the member was really hostile during the phase (a phase that cannot fail is a defect). */
  assertHostile(): void;
  disarm(): void;
}

interface HostileKind {
  readonly name: string;
  readonly what: string;
  arm(member: ProxiedMember, cluster: string): Armed;
  /** Known to fail on today's code (see the report in the test's name). */
  readonly todo?: string;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

function figures(
  samples: readonly number[],
  worst: Figures['worst'],
  loop: { readonly percentile: (p: number) => number; readonly max: number },
): Figures {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    worst,
    loopDelayP99Ms: loop.percentile(99) / 1e6,
    loopDelayMaxMs: loop.max / 1e6,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1)!,
    timedOut: samples.filter((s) => s >= EDIT_TIMEOUT_MS).length,
    samples,
  };
}

const ms = (n: number): string => `${Math.round(n)} ms`;

describe('hostile members: the healthy member keeps its pace', { timeout: 180_000 }, () => {
  let env: TestEnv;
  let direct: KubeClient;
  let host: KubeClient;
  let healthyNs: string;
  let hostileNs: string;
  let healthy: ProxiedMember;
  let hostile: ProxiedMember;
  let manager: Manager;
  const clusters = manualClusters();
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let writer: NodeJS.Timeout | undefined;
  let baseline: Figures | undefined;
  /** Generation of each healthy Widget as the test last wrote it. */
  const generations = new Map<string, number>();
  /** `name@generation` → when a healthy reconcile first saw it (performance.now()). */
  const seenAt = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  /** Status writes each cluster's reconciles attempted. */
  const writesAttempted = new Map<string, number>();
  const hostileEdits = { done: 0, failed: 0 };
  /** Every reconcile that got past the namespace check, for "what ran while the healthy edit waited". */
  const spans: Span[] = [];

  const healthyName = (i: number): string => `h-${i}`;
  const hostileName = (i: number): string => `x-${i}`;

  async function member(name: string, through: ProxiedMember): Promise<MemberCluster> {
    return kubeconfigMember({
      name,
      revision: `${name}-1`,
      kubeconfig: await checkKubeconfig(name, through.kubeconfig),
    });
  }

  before(async () => {
    env = await TestEnv.start({ crds: [WIDGET_CRD] });
    direct = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    host = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    healthyNs = await env.createNamespace('healthy');
    hostileNs = await env.createNamespace('hostile');
    for (let i = 0; i < HEALTHY_WIDGETS; i++) {
      await direct.create({ ...WIDGET, metadata: { name: healthyName(i), namespace: healthyNs }, spec: { size: 1 } });
      generations.set(healthyName(i), 1);
    }
    for (let i = 0; i < HOSTILE_WIDGETS; i++)
      await direct.create({ ...WIDGET, metadata: { name: hostileName(i), namespace: hostileNs }, spec: { size: 1 } });
    [healthy, hostile] = await Promise.all([ProxiedMember.start(HEALTHY, env), ProxiedMember.start('hostile', env)]);

    manager = new Manager({
      client: host,
      metricsPort: 0,
      healthPort: await freePort(),
      logger: createLogger({ level: 'silent' }),
      fleet: { provider: clusters.provider },
    });
    manager
      .fleetController('widget-status')
      .for<Widget>(WIDGET)
      .complete(async (request: FleetRequest, ctx: FleetReconcileContext<Widget>) => {
        // The members are one API server: each acts only on its own namespace.
        const own = request.cluster === HEALTHY ? healthyNs : hostileNs;
        if (request.namespace !== own) return;
        const span: Span = {
          cluster: request.cluster,
          name: request.name,
          startMs: performance.now(),
          endMs: Infinity,
        };
        spans.push(span);
        try {
          await reconcileOwn(request, ctx);
        } finally {
          span.endMs = performance.now();
        }
      });

    async function reconcileOwn(request: FleetRequest, ctx: FleetReconcileContext<Widget>): Promise<void> {
      const w = await ctx.get();
      if (!w) return;
      if (request.cluster === HEALTHY) {
        const key = `${w.metadata.name}@${w.metadata.generation}`;
        if (!seenAt.has(key)) {
          seenAt.set(key, performance.now());
          waiters.get(key)?.();
        }
      }
      if (w.status?.observedGeneration === w.metadata.generation) return;
      writesAttempted.set(request.cluster, (writesAttempted.get(request.cluster) ?? 0) + 1);
      await ctx.cluster.apiClient.update(
        { ...w, status: { observedGeneration: w.metadata.generation } },
        { subresource: 'status', signal: ctx.signal },
      );
    }
    running = manager.start(stop.signal);
    clusters.engage(await member(HEALTHY, healthy));
    await eventually('the healthy member converged', () => converged(), { timeoutMs: 30_000 });

    let next = 0;
    writer = setInterval(() => {
      const name = hostileName(next++ % HOSTILE_WIDGETS);
      direct.patch(WIDGET, name, { spec: { size: (next % 10) + 1 } }, { namespace: hostileNs, type: 'merge' }).then(
        () => hostileEdits.done++,
        () => hostileEdits.failed++,
      );
    }, HOSTILE_EDIT_EVERY_MS);
  });

  after(async () => {
    clearInterval(writer);
    stop.abort();
    await running;
    await host?.close();
    await direct?.close();
    await Promise.allSettled([healthy?.close(), hostile?.close()]);
    await env?.stop();
  });

  /** Every healthy Widget's status observed its generation (read straight from the API server). */
  async function converged(): Promise<boolean> {
    const list = await direct.list<Widget>(WIDGET, { namespace: healthyNs });
    return (
      list.items.length === HEALTHY_WIDGETS &&
      list.items.every((w) => w.status?.observedGeneration === w.metadata.generation)
    );
  }

  /** `EDITS` spaced edits of the healthy Widgets; each one's latency until a reconcile saw it. */
  async function measure(): Promise<Figures> {
    const samples: number[] = [];
    let worst = { fromMs: 0, toMs: 0 };
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const startedMs = performance.now();
    for (let i = 0; i < EDITS && performance.now() - startedMs < PHASE_BUDGET_MS; i++) {
      const name = healthyName(i % HEALTHY_WIDGETS);
      const generation = generations.get(name)! + 1;
      generations.set(name, generation);
      const key = `${name}@${generation}`;
      const seen = new Promise<void>((resolve) => waiters.set(key, resolve));
      const t0 = performance.now();
      await direct.patch(
        WIDGET,
        name,
        { spec: { size: (generation % 10) + 1 } },
        { namespace: healthyNs, type: 'merge' },
      );
      const timedOut = await Promise.race([seen.then(() => false), delay(EDIT_TIMEOUT_MS, true)]);
      waiters.delete(key);
      const toMs = timedOut ? t0 + EDIT_TIMEOUT_MS : seenAt.get(key)!;
      samples.push(toMs - t0);
      if (toMs - t0 > worst.toMs - worst.fromMs) worst = { fromMs: t0, toMs };
      const rest = EDIT_SPACING_MS - (performance.now() - t0);
      if (rest > 0) await delay(rest);
    }
    loop.disable();
    return figures(samples, worst, loop);
  }

  /** What the fleet controller's workers did while the slowest edit waited: reconciles per cluster, time in them. */
  function duringWorst(f: Figures): string {
    const { fromMs, toMs } = f.worst;
    const by = new Map<string, { n: number; ms: number; longest: number }>();
    for (const s of spans) {
      if (s.endMs < fromMs || s.startMs > toMs) continue;
      const inWindow = Math.min(s.endMs, toMs) - Math.max(s.startMs, fromMs);
      const e = by.get(s.cluster) ?? { n: 0, ms: 0, longest: 0 };
      by.set(s.cluster, {
        n: e.n + 1,
        ms: e.ms + inWindow,
        longest: Math.max(e.longest, Math.min(s.endMs, performance.now()) - s.startMs),
      });
    }
    const parts = [...by].map(([c, e]) => `${c} ${e.n} (${ms(e.ms)} in the window, longest ${ms(e.longest)})`);
    return `reconciles overlapping the slowest edit's ${ms(toMs - fromMs)}: ${parts.join(', ') || 'none'}`;
  }

  test('baseline: the healthy member alone (the hostile namespace still being edited)', async (t) => {
    baseline = await measure();
    t.diagnostic(
      `baseline: healthy edit→reconcile p50 ${ms(baseline.p50)}, p99 ${ms(baseline.p99)} over ${baseline.samples.length} edits ` +
        `(samples ${baseline.samples.map(Math.round).join(' ')}; event-loop delay p99 ${ms(baseline.loopDelayP99Ms)}, ` +
        `max ${ms(baseline.loopDelayMaxMs)}); bound for the hostile phases: ` +
        `${ms(2 * baseline.p99 + NOISE_FLOOR_MS)} (2 × p99 + ${NOISE_FLOOR_MS} ms floor)`,
    );
    assert.equal(baseline.timedOut, 0);
  });

  const kinds: HostileKind[] = [
    {
      name: 'lying-version',
      what: '/version answers v1.99.0 (a server that lies about what it is)',
      arm(member) {
        const rule = member.proxy.inject({
          kind: 'rewrite',
          match: { path: /^\/version(\?|$)/ },
          rewrite: (body) => ({ ...(body as object), major: '1', minor: '99', gitVersion: 'v1.99.0-lie' }),
        });
        let served = '';
        return {
          // Nothing in the runtime asks /version today, so the test asks, to prove the member lies.
          async ready() {
            served = (JSON.parse(await rawGet(member, '/version')) as { gitVersion: string }).gitVersion;
          },
          witness: () => `served ${served} to the test; /version requests from the operator: ${rule.injected - 1}`,
          assertHostile: () => assert.equal(served, 'v1.99.0-lie'),
          disarm: () => rule.remove(),
        };
      },
    },
    {
      name: 'lying-500-writes',
      what: 'every write answered 500',
      arm(member, cluster) {
        const rules = ['POST', 'PUT', 'PATCH', 'DELETE'].map((method) =>
          member.proxy.inject({ kind: 'status', status: 500, match: { method } }),
        );
        return injectedArmed(rules, cluster, 'writes answered 500', { writes: true });
      },
    },
    {
      name: 'lying-500-all',
      what: 'every request answered 500',
      arm(member, cluster) {
        return injectedArmed([member.proxy.inject({ kind: 'status', status: 500 })], cluster, 'requests answered 500');
      },
    },
    {
      name: 'truncated-watch',
      what: 'every watch cut inside an event, 500 ms after it starts',
      arm(member, cluster) {
        return injectedArmed(
          [member.proxy.inject({ kind: 'cut-watch', afterMs: 500, midEvent: true })],
          cluster,
          'watches cut mid-event',
        );
      },
    },
    {
      name: 'flapping',
      what: 'the member down (connections reset) 700 ms of every 1.5 s',
      arm(member, cluster) {
        const flap = member.flap({ downMs: 700, upMs: 800 });
        const writesBefore = writesAttempted.get(cluster) ?? 0;
        return {
          witness: () => `${flap.cuts} cuts; ${(writesAttempted.get(cluster) ?? 0) - writesBefore} status writes tried`,
          assertHostile: () => assert.ok(flap.cuts >= 2, `the member went down ${flap.cuts} times`),
          disarm: () => flap.stop(),
        };
      },
    },
    {
      name: 'huge',
      // The reconcile half of this stall is fixed (a worker yields every WORKER_TIME_SLICE_MS); what
      // is left is the list itself, decoded whole on the event loop (issue 41: decode lists as a stream).
      todo:
        'stalls: each relist of 5,000 Widgets of 2 KiB (10 MB) blocks the event loop 0.5-0.9 s — the ' +
        'body decoded with one JSON.parse, the store page and GC — and a healthy edit landing in it waits it ' +
        'out (seen: p99 844 ms against a 327 ms bound, event-loop delay max 895 ms)',
      what: `every Widget list padded with ${HUGE_ITEMS} Widgets of ${HUGE_PAD_BYTES} B, relisting every ${HUGE_RELIST_EVERY_MS} ms`,
      arm(member, cluster) {
        const synthetic = hugeItems(hostileNs);
        const rule = member.proxy.inject({
          kind: 'rewrite',
          match: { method: 'GET', path: /^\/apis\/example\.com\/v1\/widgets(\?|$)/ },
          rewrite: (body, response) => (response.status === 200 ? hugeList(body as WidgetList, synthetic) : body),
        });
        // A relist: the watch cut, the next one answered 410 Gone (as a too-small watch cache does).
        const relist = setInterval(() => {
          member.proxy.inject({ kind: 'status', status: 410, match: { watch: true }, count: 1 });
          member.proxy.cutWatches();
        }, HUGE_RELIST_EVERY_MS);
        let cached = 0;
        return {
          async measured() {
            const view = manager.fleet!.cluster(cluster);
            cached = view ? (await view.client.list(WIDGET)).items.length : 0;
          },
          witness: () => `${rule.injected} lists of ${HUGE_ITEMS}+ Widgets served; ${cached} Widgets in its cache`,
          assertHostile: () => {
            assert.ok(rule.injected >= 2, `the huge member listed ${rule.injected} times`);
            assert.ok(cached >= HUGE_ITEMS, `the huge member's cache held ${cached} Widgets`);
          },
          disarm: () => {
            clearInterval(relist);
            rule.remove();
          },
        };
      },
    },
    {
      name: 'slow',
      what: `every request held ${SLOW_DELAY_MS} ms`,
      arm(member, cluster) {
        return {
          ...injectedArmed(
            [member.proxy.inject({ kind: 'delay', delayMs: SLOW_DELAY_MS })],
            cluster,
            'requests delayed',
            {
              writes: true,
            },
          ),
          // Its keys reach the queue only once it has listed: measure from then on.
          ready: () =>
            eventually('the slow member synced', () => manager.fleet!.cluster(cluster)?.synced === true, {
              timeoutMs: 20_000,
            }),
        };
      },
    },
  ];

  /** Armed by rules: hostile once the rules injected something (and, with `writes`, once the member tried a write). */
  function injectedArmed(
    rules: readonly FaultHandle[],
    cluster: string,
    label: string,
    options: { readonly writes?: boolean } = {},
  ): Armed {
    const writesBefore = writesAttempted.get(cluster) ?? 0;
    const injected = (): number => rules.reduce((sum, r) => sum + r.injected, 0);
    const writes = (): number => (writesAttempted.get(cluster) ?? 0) - writesBefore;
    return {
      witness: () => `${injected()} ${label}; ${writes()} status writes tried by the hostile member`,
      assertHostile: () => {
        assert.ok(injected() >= 1, `no fault injected (${label})`);
        if (options.writes) assert.ok(writes() >= 1, 'the hostile member tried no write during the phase');
      },
      disarm: () => {
        for (const r of rules) r.remove();
      },
    };
  }

  for (const kind of kinds) {
    test(
      `${kind.name}: ${kind.what}; the healthy member's p99 stays within 2 × baseline + ${NOISE_FLOOR_MS} ms and it converges`,
      kind.todo ? { todo: kind.todo } : {},
      async (t: TestContext) => {
        assert.ok(baseline, 'the baseline ran');
        const cluster = `hostile-${kind.name}`;
        const armed = kind.arm(hostile, cluster);
        let result: Figures;
        try {
          clusters.engage(await member(cluster, hostile));
          await armed.ready?.();
          result = await measure();
          await armed.measured?.();
        } finally {
          armed.disarm();
          hostile.heal();
          await clusters.disengage(cluster);
        }
        const bound = 2 * baseline.p99 + NOISE_FLOOR_MS;
        t.diagnostic(
          `${kind.name}: healthy edit→reconcile p50 ${ms(result.p50)}, p99 ${ms(result.p99)} over ${result.samples.length} edits ` +
            `(baseline p50 ${ms(baseline.p50)}, p99 ${ms(baseline.p99)}; bound ${ms(bound)}); ` +
            `samples ${result.samples.map(Math.round).join(' ')}; event-loop delay p99 ${ms(result.loopDelayP99Ms)}, ` +
            `max ${ms(result.loopDelayMaxMs)} (baseline ${ms(baseline.loopDelayP99Ms)}, ${ms(baseline.loopDelayMaxMs)}); hostile member: ${armed.witness()}; ${duringWorst(result)}`,
        );
        armed.assertHostile();
        await eventually('the healthy member converged', () => converged(), { timeoutMs: 15_000 });
        assert.equal(
          result.timedOut,
          0,
          `${result.timedOut} healthy edits never reconciled within ${EDIT_TIMEOUT_MS} ms`,
        );
        assert.ok(
          result.p99 <= bound,
          `healthy p99 ${ms(result.p99)} > bound ${ms(bound)} with a ${kind.name} member (baseline p99 ${ms(baseline.p99)})`,
        );
      },
    );
  }

  test('the background writer kept the hostile namespace busy', (t) => {
    t.diagnostic(`hostile-namespace edits: ${hostileEdits.done} done, ${hostileEdits.failed} failed`);
    assert.ok(hostileEdits.done > 0);
  });
});

interface WidgetList {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string };
  items: unknown[];
}

/**
 * The synthetic items of the huge list as JSON bytes (`,`-led, ~HUGE_ITEMS × HUGE_PAD_BYTES), built
 * once before the phase: the proxy runs in this process, and building them per answer would stall
 * the event loop the operator runs on, a cost a real huge member pays on its own server.
 */
function hugeItems(namespace: string): Buffer {
  const items = Array.from({ length: HUGE_ITEMS }, (_, i) =>
    JSON.stringify({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: {
        name: `huge-${i}`,
        namespace,
        uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        resourceVersion: '1',
        generation: 1,
        annotations: { 'example.com/pad': 'x'.repeat(HUGE_PAD_BYTES) },
      },
      spec: { size: 1 },
      status: { observedGeneration: 1 },
    }),
  );
  return Buffer.from(`,${items.join(',')}`);
}

/**
 * `list` with the synthetic Widgets appended (already observed: their reconciles write nothing), as
 * bytes joined around the prebuilt items so that an answer costs a copy, not a serialization.
 */
function hugeList(list: WidgetList, synthetic: Buffer): Buffer {
  const marker = '"__ITEMS__"';
  const shell = JSON.stringify({ ...list, items: marker });
  const at = shell.indexOf(JSON.stringify(marker));
  const real = `[${list.items.map((item) => JSON.stringify(item)).join(',')}`;
  // An empty real list must not start with the synthetic items' leading comma.
  const items = list.items.length ? synthetic : synthetic.subarray(1);
  return Buffer.concat([
    Buffer.from(shell.slice(0, at) + real),
    items,
    Buffer.from(`]${shell.slice(at + JSON.stringify(marker).length)}`),
  ]);
}

/** A GET through a member's proxy with the API server's admin token; the body. */
function rawGet(through: ProxiedMember, path: string): Promise<string> {
  const token = (through.kubeconfig.users[0]!.user as { token?: string }).token;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, through.proxy.url),
      { ca: through.proxy.caPem, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
