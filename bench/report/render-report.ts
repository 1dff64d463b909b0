/**
 * The benchmark report as one self-contained HTML page: inline CSS and SVG, no script, no external
 * resource (a Content-Security-Policy forbids them, so a stray reference shows up as a console
 * error in the browser test). Each section puts a measurement beside its anchor from the same run,
 * with the spread over rounds: bars at the median, whiskers from min to max, and a table.
 */
import { barChart, escapeXml, type BarGroup } from './svg-bar-chart.js';
import { spread, type InformerRow, type ReportData, type Spread } from './report-data.js';

const esc = escapeXml;

function fmtSpread(s: Spread | undefined, digits = 0, unit = ''): string {
  if (!s) return 'n/a';
  const f = (v: number): string =>
    v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const u = unit ? ` ${unit}` : '';
  return s.n > 1
    ? `${f(s.median)}${u} <span class="spread">(${f(s.min)}–${f(s.max)}, n=${s.n})</span>`
    : `${f(s.median)}${u} <span class="spread">(n=1)</span>`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  // Cells are HTML built here from escaped text and numbers.
  return `<table><thead><tr>${header.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
}

function section(id: string, title: string, intro: string, body: string): string {
  return `<section id="${esc(id)}"><h2>${esc(title)}</h2><p class="intro">${esc(intro)}</p>${body}</section>`;
}

function informerSection(data: ReportData): string {
  const r = data.informer;
  if (!r) return '';
  const impls = [...new Set(r.rows.map((x) => x.impl))];
  const counts = [...r.counts];
  const rowsFor = (count: number, impl: string) => r.rows.filter((x) => x.count === count && x.impl === impl);
  const groups = (pick: (x: InformerRow) => number): BarGroup[] =>
    counts.map((count) => ({
      label: `${count.toLocaleString('en-US')} objects`,
      bars: impls.map((impl) => ({ series: impl, value: spread(rowsFor(count, impl).map(pick)) })),
    }));
  const charts =
    barChart({ title: 'Informer sync time (start → synced)', unit: 'ms', groups: groups((x) => x.syncMs) }) +
    barChart({
      title: 'Informer heap per cached object (after gc, minus baseline)',
      unit: 'bytes/object',
      groups: groups((x) => x.bytesPerObject),
    });
  const rows = counts.flatMap((count) =>
    impls.map((impl) => {
      const xs = rowsFor(count, impl);
      const lost = xs.filter(
        (x) => x.deliveredAfterRestartMs === undefined || x.deliveredAfterRestartMs === null,
      ).length;
      return [
        esc(count.toLocaleString('en-US')),
        esc(impl),
        fmtSpread(spread(xs.map((x) => x.syncMs)), 0, 'ms'),
        fmtSpread(spread(xs.map((x) => x.bytesPerObject)), 0, 'B'),
        fmtSpread(spread(xs.map((x) => x.relistMs)), 0, 'ms'),
        esc(
          xs
            .map((x) => x.stoppedOnError)
            .filter((v, i, a) => a.indexOf(v) === i)
            .join('; '),
        ),
        esc(
          lost
            ? `lost in ${lost} of ${xs.length} (not within ${r.deliveryWindowMs / 1000} s)`
            : `delivered in ${xs.length} of ${xs.length}`,
        ),
      ];
    }),
  );
  return section(
    'informer',
    'Informer: operator-runtime vs @kubernetes/client-node',
    `Same Widgets, same API server, same run; each measurement in a fresh process, ${r.rounds} round(s) per count and informer, alternating. Sync: start until synced. Heap: heapUsed after gc once synced, minus before start, over the objects held.`,
    charts +
      table(
        [
          'objects',
          'informer',
          'sync',
          'heap per object',
          'relist after API server restart',
          'stopped on error',
          'a change after the restart',
        ],
        rows,
      ),
  );
}

function controllerSection(data: ReportData): string {
  const r = data.controller;
  if (!r) return '';
  const ratios = r.controllerPerSecond.map((c, i) => c / r.ceilingPerSecond[i]!);
  const watchedRatios = r.controllerPerSecond.map((c, i) => c / r.ceilingWithWatchPerSecond[i]!);
  const chart = barChart({
    title: `Status writes per second, ${r.objects.toLocaleString('en-US')} objects, ${r.workers}-way`,
    unit: 'writes/s',
    groups: [
      { label: 'API write ceiling (plain undici)', bars: [{ series: 'ceiling', value: spread(r.ceilingPerSecond) }] },
      {
        label: 'ceiling, a watch open',
        bars: [{ series: 'ceiling with watch', value: spread(r.ceilingWithWatchPerSecond) }],
      },
      {
        label: 'controller (list + sync included)',
        bars: [{ series: 'controller', value: spread(r.controllerPerSecond) }],
      },
    ],
  });
  return section(
    'controller',
    'Controller throughput vs the API write ceiling',
    `A controller with ${r.workers} workers reconciles each Widget once (cache read + status PATCH); alternated over ${r.rounds} round(s) with a plain undici loop patching the same objects at the same concurrency.`,
    chart +
      table(
        ['measure', 'value'],
        [
          ['ceiling', fmtSpread(spread(r.ceilingPerSecond), 0, 'writes/s')],
          ['ceiling with a watch open', fmtSpread(spread(r.ceilingWithWatchPerSecond), 0, 'writes/s')],
          ['controller', fmtSpread(spread(r.controllerPerSecond), 0, 'reconciles/s')],
          ['controller / ceiling (per round)', fmtSpread(spread(ratios.map((x) => 100 * x)), 0, '%')],
          [
            'controller / ceiling with a watch (per round)',
            fmtSpread(spread(watchedRatios.map((x) => 100 * x)), 0, '%'),
          ],
          ['controller start-up until the first reconcile', fmtSpread(spread(r.startupSeconds), 2, 's')],
        ],
      ),
  );
}

function workqueueSection(data: ReportData): string {
  const r = data.workqueue;
  if (!r) return '';
  type Config = (typeof r.configs)[number];
  const variant = (c: Config): string =>
    c.anchor ? 'plain FIFO (anchor)' : c.metrics ? 'operator-runtime, metrics on' : 'operator-runtime';
  const shapes = [...new Set(r.configs.map((c) => `${c.shape}, ${c.workers} worker${c.workers === 1 ? '' : 's'}`))];
  const shapeOf = (c: Config): string => `${c.shape}, ${c.workers} worker${c.workers === 1 ? '' : 's'}`;
  const chart = barChart({
    title: `Work queue: add/get/done on ${r.keys.toLocaleString('en-US')} keys, items per CPU-second`,
    unit: 'items/CPU-s',
    groups: shapes.map((shape) => ({
      label: shape,
      bars: r.configs
        .filter((c) => shapeOf(c) === shape)
        .map((c) => ({ series: variant(c), value: spread(c.perCpuSecond) })),
    })),
    referenceLines: [{ value: r.goalPerSecond, label: 'goal' }],
  });
  return section(
    'workqueue',
    'Work queue throughput',
    `${r.rounds} round(s) after a warm-up per shape (batch: add all then drain; stream: add while workers wait), worker count and variant. The anchor is a plain deduplicating FIFO (array + Set) measured in the same run: the distance to it is what the queue's guarantees (one worker per key, dirty re-add, backoff) cost. The goal line is the project's 500k items per CPU-second.`,
    chart +
      table(
        ['configuration', 'items/s (wall clock)', 'items per CPU-s', 'goal met'],
        r.configs.map((c) => {
          const cpu = spread(c.perCpuSecond);
          const met = c.anchor ? 'anchor' : cpu && cpu.median >= r.goalPerSecond ? 'yes' : '<strong>no</strong>';
          return [esc(`${shapeOf(c)}: ${variant(c)}`), fmtSpread(spread(c.totalPerSecond)), fmtSpread(cpu), met];
        }),
      ),
  );
}

function leaderSection(data: ReportData): string {
  const r = data.leaderFailover;
  if (!r) return '';
  const s = (ms: readonly number[]) => spread(ms.map((x) => x / 1000));
  const chart = barChart({
    title: 'Leader failover with the default timings',
    unit: 's',
    groups: [
      { label: 'leader killed (kill -9)', bars: [{ series: 'time to new leader', value: s(r.killMs) }] },
      {
        label: 'leader stopped (SIGTERM, releases the Lease)',
        bars: [{ series: 'time to new leader', value: s(r.termMs) }],
      },
    ],
    referenceLines: [
      { value: (r.leaseDurationMs + r.retryPeriodMs) / 1000, label: 'bound after kill -9: lease + retry' },
      { value: r.retryPeriodMs / 1000, label: 'bound after release: retry' },
    ],
  });
  return section(
    'leader-failover',
    'Leader failover',
    `Two replica processes, default timings (lease ${r.leaseDurationMs} ms, renew deadline ${r.renewDeadlineMs} ms, retry ${r.retryPeriodMs} ms), ${r.runs} run(s) each: time from the signal until the standby starts its leader-only work. The reference lines are the bounds those timings allow.`,
    chart +
      table(
        ['leader', 'time to new leader'],
        [
          ['kill -9', fmtSpread(s(r.killMs), 2, 's')],
          ['SIGTERM', fmtSpread(s(r.termMs), 2, 's')],
        ],
      ),
  );
}

function relistSection(data: ReportData): string {
  const r = data.relist;
  const inf = data.informer;
  if (!r && !inf) return '';
  let body = '';
  if (r) {
    const labels = [...new Set(r.results.map((x) => x.label))];
    const mb = (b: number): number => b / 1e6;
    const of = (label: string) => r.results.filter((x) => x.label === label);
    body += barChart({
      title: `In-process relist (410), ${r.objects.toLocaleString('en-US')} objects: live heap`,
      unit: 'MB',
      groups: labels.map((l) => ({
        label: l.replace('relist, ', ''),
        bars: [
          { series: 'steady', value: spread(of(l).map((x) => mb(x.steadyBytes))) },
          { series: 'relist peak', value: spread(of(l).map((x) => mb(x.peakBytes))) },
        ],
      })),
    });
    body += table(
      ['scenario', 'steady', 'peak', 'peak / steady'],
      labels.map((l) => [
        esc(l),
        fmtSpread(spread(of(l).map((x) => mb(x.steadyBytes))), 1, 'MB'),
        fmtSpread(spread(of(l).map((x) => mb(x.peakBytes))), 1, 'MB'),
        fmtSpread(spread(of(l).map((x) => x.peakBytes / x.steadyBytes)), 2, '×'),
      ]),
    );
  }
  if (inf) {
    const impls = [...new Set(inf.rows.map((x) => x.impl))];
    const ratio = (x: InformerRow): number => (x.livePeakMb - x.baseMb) / (x.steadyMb - x.baseMb);
    body += barChart({
      title: 'Relist after an API server restart: cache live peak / steady (informer bench)',
      unit: '× steady',
      groups: [...inf.counts].map((count) => ({
        label: `${count.toLocaleString('en-US')} objects`,
        bars: impls.map((impl) => ({
          series: impl,
          value: spread(inf.rows.filter((x) => x.count === count && x.impl === impl).map(ratio)),
        })),
      })),
      referenceLines: [{ value: 1, label: 'steady' }],
    });
  }
  return section(
    'relist',
    'Relist peak memory',
    'How much the heap grows while a relist replaces the cache: in-process against a synthetic source (the cache alone), and against the real API server next to client-node (live data: gc as each list response arrives).',
    body,
  );
}

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:980px;padding:16px 24px;color:#1d2330}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #d6dae3;padding-bottom:4px}
.intro{color:#4a5366}.facts td:first-child{color:#4a5366;padding-right:16px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #d6dae3;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f4f8}.spread{color:#6b7385;font-size:12px}
svg.chart{width:100%;max-width:720px;height:auto;display:block;margin:8px 0}
svg .chart-title{font-weight:600;font-size:14px}svg .tick,svg .group-label,svg .legend,svg .value,svg .reference-label,svg .axis-label,svg .missing{font-size:11px;fill:#2c3345}
svg .grid{stroke:#e6e9ef}svg .axis{stroke:#2c3345}svg .whisker{stroke:#1d2330;stroke-width:1.5;fill:none}
svg .reference{stroke:#c0392b;stroke-dasharray:5 4}svg .reference-label{fill:#c0392b}
.failures{background:#fdecea;border:1px solid #f5c6c2;padding:8px 12px}
`;

export function renderReport(data: ReportData): string {
  const m = data.machine;
  const load = (xs: readonly number[]): string => xs.map((x) => x.toFixed(2)).join(' / ');
  const facts = table(
    ['fact', 'value'],
    [
      ['generated', esc(data.generatedAt)],
      ['mode', esc(data.quick ? 'quick (--quick): small sizes, few rounds' : 'full')],
      ['duration', esc(`${(data.durationMs / 1000).toFixed(0)} s`)],
      ['CPUs', esc(`${m.cpus} × ${m.cpuModel}`)],
      ['memory', esc(`${m.totalMemoryMb.toLocaleString('en-US')} MB`)],
      ['load average (1/5/15 min) at start', esc(load(m.loadAverageStart))],
      ['load average at end', esc(load(m.loadAverageEnd))],
      ['runtime', esc(`node ${m.node}, ${m.platform}`)],
    ],
  );
  const failures = data.failures.length
    ? `<div class="failures"><strong>Benchmarks that failed</strong><ul>${data.failures.map((f) => `<li>${esc(f.bench)}: <code>${esc(f.message)}</code></li>`).join('')}</ul></div>`
    : '';
  const commands = Object.keys(data.commands).length
    ? `<details><summary>Commands</summary><ul>${Object.entries(data.commands)
        .map(([k, v]) => `<li>${esc(k)}: <code>${esc(v)}</code></li>`)
        .join('')}</ul></details>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(data.title)}</title><style>${CSS}</style></head>
<body><h1>${esc(data.title)}</h1>
<p class="intro">Bars are medians over rounds, whiskers span min to max. Wall-clock figures depend on the machine and its load; compare bars within one report, not across machines.</p>
<section id="machine"><h2>Machine</h2>${facts}${commands}</section>
${failures}
${informerSection(data)}
${controllerSection(data)}
${workqueueSection(data)}
${leaderSection(data)}
${relistSection(data)}
</body></html>
`;
}
