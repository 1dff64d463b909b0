import { createHash } from 'node:crypto';

/**
 * The console page: one self-contained HTML document (no CDN, no framework) that polls
 * `api/state` and renders it. Every piece of data goes into the DOM as text (`textContent` /
 * text nodes) or as a number in an SVG attribute, never through `innerHTML`; the server's
 * Content-Security-Policy allows only this exact script and style (by hash) as a second wall.
 */

const STYLE = `
:root { color-scheme: light; --fg:#1d2430; --muted:#667085; --line:#e4e7ec; --ok:#12805c; --err:#c0362c; --warn:#b54708; --bar:#4f6bed; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: #f7f8fa; }
header { display: flex; gap: 24px; align-items: baseline; padding: 12px 20px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { font-size: 16px; margin: 0; }
#status.live::before { content: "● "; color: var(--ok); }
#status.down::before { content: "● "; color: var(--err); }
main { padding: 12px 20px; display: grid; gap: 14px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; overflow-x: auto; }
h2 { font-size: 14px; margin: 0 0 8px; }
h3 { font-size: 13px; margin: 10px 0 4px; color: var(--muted); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
td.msg { white-space: pre-wrap; word-break: break-word; max-width: 640px; }
th { color: var(--muted); font-weight: 600; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.error, .terminal_error, .false { color: var(--err); font-weight: 600; }
.success, .true { color: var(--ok); }
.requeue_after, .Warning { color: var(--warn); }
.empty { color: var(--muted); font-style: italic; }
svg.chart { display: block; }
.legend { color: var(--muted); font-size: 11px; }
a.key { color: inherit; text-decoration: underline dotted; cursor: pointer; }
pre.diff { margin: 2px 0 6px; padding: 4px 8px; background: #f7f8fa; border-left: 3px solid var(--line); font: 12px/1.35 ui-monospace, Menlo, monospace; white-space: pre-wrap; word-break: break-word; max-width: 900px; }
.write { margin: 4px 0 0; }
`;

const SCRIPT = `
'use strict';
const POLL_MS = 1000;
const byId = (id) => document.getElementById(id);
function el(tag, className, ...children) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c === undefined || c === null ? '' : String(c)));
  return e;
}
const cell = (value, className) => el('td', className, value);
function fmtMs(ms) {
  if (ms === undefined || ms === null) return '–';
  if (ms < 1) return ms.toFixed(2) + ' ms';
  if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + ' ms';
  return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
}
function ago(atMs, now) {
  if (!atMs) return '–';
  const s = Math.max(0, (now - atMs) / 1000);
  return s < 60 ? s.toFixed(0) + ' s ago' : s < 3600 ? (s / 60).toFixed(0) + ' min ago' : (s / 3600).toFixed(1) + ' h ago';
}
function inFuture(atMs, now) {
  const s = (atMs - now) / 1000;
  return s <= 0 ? 'now' : 'in ' + (s < 60 ? s.toFixed(1) + ' s' : (s / 60).toFixed(1) + ' min');
}
const clock = (atMs) => new Date(atMs).toLocaleTimeString();
function fmtBytes(n) {
  if (n === undefined || n === null) return '–';
  if (n < 1024) return n.toFixed(0) + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(n < 10240 ? 1 : 0) + ' KiB';
  return (n / 1024 / 1024).toFixed(n < 10485760 ? 1 : 0) + ' MiB';
}
function fill(tbodyId, rows, columns, emptyText) {
  const body = byId(tbodyId);
  body.replaceChildren(...(rows.length ? rows : [el('tr', null, Object.assign(el('td', 'empty', emptyText), { colSpan: columns }))]));
}
const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  return e;
}
/** Bars: reconciles per slot (errors in red); line: p99 latency (own scale). Numbers only. */
function chart(series) {
  const W = 300, H = 56, n = series.length || 1, bw = W / n;
  const maxCount = Math.max(1, ...series.map((p) => p.count));
  const p99s = series.map((p) => p.p99Ms || 0);
  const maxP99 = Math.max(1, ...p99s);
  const root = svg('svg', { class: 'chart', width: W, height: H + 2, viewBox: '0 0 ' + W + ' ' + (H + 2), role: 'img' });
  root.append(svg('line', { x1: 0, y1: H, x2: W, y2: H, stroke: '#e4e7ec' }));
  series.forEach((p, i) => {
    const h = (p.count / maxCount) * H, eh = (p.errors / maxCount) * H;
    if (h > 0) root.append(svg('rect', { x: i * bw + 1, y: H - h, width: Math.max(1, bw - 2), height: h, fill: '#4f6bed' }));
    if (eh > 0) root.append(svg('rect', { x: i * bw + 1, y: H - eh, width: Math.max(1, bw - 2), height: eh, fill: '#c0362c' }));
  });
  const pts = series.map((p, i) => p.p99Ms === undefined || p.p99Ms === null ? null : (i * bw + bw / 2).toFixed(1) + ',' + (H - (p.p99Ms / maxP99) * (H - 4)).toFixed(1)).filter(Boolean);
  if (pts.length > 1) root.append(svg('polyline', { points: pts.join(' '), fill: 'none', stroke: '#b54708', 'stroke-width': 1.5 }));
  const title = document.createElementNS(SVG, 'title');
  title.textContent = 'reconciles per slot (max ' + maxCount + '), p99 line (max ' + fmtMs(maxP99) + ')';
  root.append(title);
  return root;
}
function render(s) {
  const now = s.generatedAtMs;
  const l = s.leader;
  byId('leader').textContent = l.enabled
    ? (l.isLeader ? 'this replica leads' : 'standby') + ' · identity ' + (l.identity || '?') + ' · Lease holder ' + (l.holder || '(none)')
    : 'no leader election (single replica)';
  fill('controllers-body', s.controllers.map((c) => el('tr', null,
    cell(c.name), cell(c.queued, 'num'), cell(c.delayed, 'num'), cell(c.inFlight + ' / ' + (c.workers ?? '?'), 'num'),
    cell(c.summary.ratePerSec.toFixed(1) + '/s', 'num'), cell(c.summary.errors, 'num' + (c.summary.errors ? ' error' : '')),
    cell(fmtMs(c.summary.p50Ms), 'num'), cell(fmtMs(c.summary.p99Ms), 'num'), el('td', null, chart(c.series)))), 9, 'no controllers');
  const failing = [], backoff = [];
  for (const c of s.controllers) {
    const retryAt = new Map(c.backoff.keys.map((k) => [k.key, k.retryAtMs]));
    for (const f of c.failing.keys) failing.push(el('tr', null, cell(c.name), el('td', null, keyLink(c.name, f.key)), cell(f.result, f.result), cell(f.failures, 'num'),
      cell(ago(f.lastAtMs, now)), cell(retryAt.has(f.key) ? inFuture(retryAt.get(f.key), now) : (f.result === 'terminal_error' ? 'not retried' : '–')), cell(f.lastError, 'msg')));
    for (const b of c.backoff.keys) backoff.push(el('tr', null, cell(c.name), cell(b.key), cell(b.requeues, 'num'), cell(inFuture(b.retryAtMs, now)), cell(clock(b.retryAtMs))));
  }
  fill('failing-body', failing, 7, 'no failing keys');
  fill('backoff-body', backoff, 5, 'no keys in backoff');
  const recent = byId('recent');
  recent.replaceChildren(...s.controllers.map((c) => {
    const rows = c.recent.map((r) => el('tr', null, cell(clock(r.atMs)), el('td', null, keyLink(c.name, r.key)), cell(r.result, r.result), cell(fmtMs(r.durationMs), 'num'), cell(r.error, 'msg')));
    const body = el('tbody', null, ...(rows.length ? rows : [el('tr', null, Object.assign(el('td', 'empty', 'none yet'), { colSpan: 5 }))]));
    const head = el('thead', null, el('tr', null, el('th', null, 'started'), el('th', null, 'key'), el('th', null, 'result'), el('th', 'num', 'duration'), el('th', null, 'error')));
    return el('div', null, el('h3', null, c.name + ' — last ' + c.recent.length), el('table', null, head, body));
  }));
  fill('informers-body', s.informers.map((i) => el('tr', null, cell(i.name), cell(i.state), cell(i.synced ? 'yes' : 'no', String(i.synced)), cell(i.objects, 'num'),
    cell(fmtBytes(i.estimatedBytesPerObject), 'num'), cell(fmtBytes(i.estimatedBytes), 'num'), cell(ago(i.lastEventAtMs, now)), cell(i.relists, 'num'), cell(i.restarts, 'num'), cell(i.stalls, 'num'), cell(i.pendingKeys, 'num'),
    cell(i.lastError ? i.lastError.message + ' (' + ago(i.lastError.atMs, now) + ')' : '', 'msg'))), 12, 'no informers');
  byId('clusters').hidden = s.clusters.length === 0;
  fill('clusters-body', s.clusters.map((c) => el('tr', null, cell(c.name), cell(c.state, c.state === 'unhealthy' ? 'error' : c.state === 'ready' ? 'success' : ''),
    cell(c.synced ? 'yes' : 'no', String(c.synced)), cell(c.connectFailures, 'num' + (c.connectFailures ? ' error' : '')), cell(c.informers, 'num'), cell(c.objects, 'num'),
    cell(fmtBytes(c.estimatedBytes), 'num'))), 7, 'no member clusters');
  fill('events-body', s.events.map((e) => el('tr', null, cell(clock(e.atMs)), cell(e.type, e.type), cell(e.reason + (e.count > 1 ? ' ×' + e.count : '')),
    cell((e.cluster ? e.cluster + ': ' : '') + e.involvedObject.kind + ' ' + (e.involvedObject.namespace ? e.involvedObject.namespace + '/' : '') + e.involvedObject.name), cell(e.message, 'msg'))), 5, 'no events recorded');
}
/** A key's cell: a link to its timeline (the hash carries controller and key, URL-encoded). */
function keyLink(controller, key) {
  const a = el('a', 'key', key);
  a.href = '#' + new URLSearchParams({ controller, key }).toString();
  return a;
}
function selected() {
  const q = new URLSearchParams(location.hash.slice(1));
  const controller = q.get('controller'), key = q.get('key');
  return controller && key ? { controller, key } : undefined;
}
function describeTrigger(t) {
  if (!t) return '–';
  if (t.type === 'event') return t.kind + (t.listed ? ' listed' : ' changed') + ' (' + t.source + ')';
  return { external: 'external trigger', requeue: 'requeue', retry: 'retry after error', unknown: '–' }[t.type] || String(t.type);
}
/** One marker per reconcile along its time axis, coloured by result (numbers only). */
function timelineChart(reconciles) {
  const W = 600, H = 28;
  const root = svg('svg', { class: 'chart', id: 'timeline-chart', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img' });
  root.append(svg('line', { x1: 8, y1: H / 2, x2: W - 8, y2: H / 2, stroke: '#e4e7ec' }));
  const times = reconciles.map((r) => r.startedAtMs);
  const min = Math.min(...times), span = Math.max(1, Math.max(...times) - min);
  for (const r of reconciles) {
    const x = 8 + ((r.startedAtMs - min) / span) * (W - 16);
    const fill = r.result === 'success' ? '#12805c' : r.result === 'requeue_after' ? '#b54708' : '#c0362c';
    root.append(svg('circle', { cx: x.toFixed(1), cy: H / 2, r: 6, fill }));
  }
  return root;
}
function renderTimeline(t) {
  byId('timeline').hidden = false;
  byId('timeline-title').textContent = t.controller + ' · ' + t.key + ' · last ' + t.reconciles.length + ' reconciles';
  if (t.reconciles.length === 0) {
    byId('timeline-body').replaceChildren(el('div', 'empty', 'nothing remembered for this object'));
    return;
  }
  const rows = [];
  for (const r of t.reconciles) {
    rows.push(el('tr', 'reconcile', cell(clock(r.startedAtMs)), cell(describeTrigger(r.trigger)), cell(fmtMs(r.durationMs), 'num'), cell(r.result, r.result),
      cell(r.writes.length + (r.omittedWrites ? ' (+' + r.omittedWrites + ')' : ''), 'num'), cell(r.error, 'msg')));
    if (r.writes.length) {
      const writes = r.writes.map((w) => el('div', 'write', el('span', w.error ? 'error' : null,
        w.verb + (w.subresource ? ' ' + w.subresource : '') + ' ' + w.kind + ' ' + (w.namespace ? w.namespace + '/' : '') + w.name + (w.dryRun ? ' (dry run)' : '') + (w.error ? ' failed: ' + w.error : '')),
        el('pre', 'diff', JSON.stringify(w.diff, null, 2))));
      const td = el('td', null, ...writes);
      td.colSpan = 6;
      rows.push(el('tr', 'writes', td));
    }
  }
  const head = el('thead', null, el('tr', null, el('th', null, 'started'), el('th', null, 'trigger'), el('th', 'num', 'duration'), el('th', null, 'result'), el('th', 'num', 'writes'), el('th', null, 'error')));
  byId('timeline-body').replaceChildren(timelineChart(t.reconciles), el('table', null, head, el('tbody', null, ...rows)));
}
async function loadTimeline() {
  const s = selected();
  if (!s) { byId('timeline').hidden = true; return; }
  const res = await fetch('api/history?' + new URLSearchParams(s).toString(), { cache: 'no-store' });
  if (!res.ok) throw new Error('HTTP ' + res.status);
  renderTimeline(await res.json());
}
window.addEventListener('hashchange', () => { loadTimeline().catch(() => undefined); });
async function poll() {
  const status = byId('status');
  try {
    const res = await fetch('api/state', { cache: 'no-store' });
    if (!res.ok) throw new Error('HTTP ' + res.status);
    const state = await res.json();
    render(state);
    await loadTimeline();
    status.className = 'live';
    status.textContent = 'live · updated ' + clock(state.generatedAtMs);
  } catch (err) {
    status.className = 'down';
    status.textContent = 'cannot reach the operator (' + (err && err.message ? err.message : String(err)) + '): retrying';
  }
  setTimeout(poll, POLL_MS);
}
poll();
`;

function table(id: string, headers: readonly string[]): string {
  const ths = headers.map((h) => `<th${h.startsWith('#') ? ' class="num"' : ''}>${h.replace(/^#/, '')}</th>`).join('');
  return `<table><thead><tr>${ths}</tr></thead><tbody id="${id}"></tbody></table>`;
}

/** The page; contains no data — it fetches `api/state` relative to its own URL. */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>operator console</title><style>${STYLE}</style></head>
<body>
<header><h1>operator console</h1><span id="leader">…</span><span id="status">connecting…</span></header>
<main>
<section id="timeline" hidden><h2>Object timeline: <span id="timeline-title"></span></h2><div id="timeline-body"></div>
<div class="legend">each reconcile of the object, newest first: what triggered it, its result, and each write as the fields it changed (a JSON merge patch; Secret values redacted). Open one from a key in the tables below.</div></section>
<section id="controllers"><h2>Controllers</h2>${table('controllers-body', ['controller', '#queued', '#delayed', '#in flight / workers', '#rate (1 min)', '#errors (1 min)', '#p50', '#p99', 'last 5 min'])}
<div class="legend">chart: reconciles per 10 s (errors red), p99 latency line (orange, own scale)</div></section>
<section id="failing"><h2>Failing keys</h2>${table('failing-body', ['controller', 'key', 'result', '#failures in a row', 'last failure', 'next retry', 'last error'])}</section>
<section id="backoff"><h2>Keys in backoff</h2>${table('backoff-body', ['controller', 'key', '#retries', 'next retry', 'at'])}</section>
<section id="informers"><h2>Informers</h2>${table('informers-body', ['informer', 'state', 'synced', '#objects', '#~bytes/object', '#~cache heap', 'last event', '#relists', '#restarts', '#stalls', '#pending', 'last error'])}
<div class="legend">~ estimated from a sample of each cache under a V8 cost model (docs/capacity.md); cache heap = objects × bytes/object</div></section>
<section id="clusters" hidden><h2>Member clusters</h2>${table('clusters-body', ['cluster', 'state', 'synced', '#connect failures', '#informers', '#objects', '#~cache heap'])}
<div class="legend">a fleet's member clusters (docs/fleet.md); their informers are listed below as &lt;cluster&gt;/&lt;kind&gt;</div></section>
<section id="events"><h2>Events recorded</h2>${table('events-body', ['time', 'type', 'reason', 'object', 'message'])}</section>
<section id="recent-reconciles"><h2>Recent reconciles</h2><div id="recent"></div></section>
</main>
<script>${SCRIPT}</script>
</body></html>
`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Allows exactly the page's own script and style, and fetches to its own origin. */
export const CONSOLE_CSP = `default-src 'none'; script-src ${sha256(SCRIPT)}; style-src ${sha256(STYLE)}; connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
