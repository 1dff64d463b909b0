/**
 * One chart shape for the whole report: grouped bars at the median with a min–max whisker, optional
 * horizontal reference lines (a goal, a bound), a y axis from zero and a legend. Inline SVG, no
 * script, every text escaped, so the page stays self-contained and safe to open from disk.
 */
import type { Spread } from './report-data.js';

export interface Bar {
  /** The series (legend entry) this bar belongs to. */
  readonly series: string;
  readonly value: Spread | undefined;
}

export interface BarGroup {
  readonly label: string;
  readonly bars: readonly Bar[];
}

export interface ReferenceLine {
  readonly value: number;
  readonly label: string;
}

export interface BarChartOptions {
  readonly title: string;
  /** Axis unit, shown on the y axis and in bar tooltips. */
  readonly unit: string;
  readonly groups: readonly BarGroup[];
  readonly referenceLines?: readonly ReferenceLine[];
  /** Formats a value for ticks and labels. */
  readonly format?: (v: number) => string;
}

const WIDTH = 720;
const MARGIN = { top: 36, right: 16, bottom: 64, left: 72 };
const PLOT_HEIGHT = 200;
/** Above this many groups the group labels are slanted (and the chart taller) so they do not overlap. */
const UPRIGHT_GROUP_LABELS = 4;
const SLANT_EXTRA_HEIGHT = 40;
const PALETTE = ['#3b6fb6', '#e07b39', '#4c9a5b', '#9b59b6', '#c0392b', '#7f8c8d', '#d4ac0d', '#16a085'];

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A "nice" axis maximum and step (1, 2, 2.5 or 5 × a power of ten) for about five ticks. */
export function niceScale(max: number): { max: number; step: number } {
  if (!(max > 0)) return { max: 1, step: 0.2 };
  const raw = max / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  return { max: Math.ceil(max / step) * step, step };
}

export function defaultFormat(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 1e6) return `${+(v / 1e6).toFixed(2)}M`;
  if (abs >= 1e4) return `${+(v / 1e3).toFixed(1)}k`;
  if (abs >= 100) return v.toFixed(0);
  if (abs >= 1) return `${+v.toFixed(2)}`;
  return `${+v.toPrecision(2)}`;
}

export function barChart(options: BarChartOptions): string {
  const fmt = options.format ?? defaultFormat;
  const series = [...new Set(options.groups.flatMap((g) => g.bars.map((b) => b.series)))];
  const colour = (s: string): string => PALETTE[series.indexOf(s) % PALETTE.length]!;
  const values = options.groups.flatMap((g) => g.bars.flatMap((b) => (b.value ? [b.value.max] : [])));
  const scale = niceScale(Math.max(0, ...values, ...(options.referenceLines ?? []).map((r) => r.value)));
  const slanted = options.groups.length > UPRIGHT_GROUP_LABELS;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = PLOT_HEIGHT;
  const HEIGHT = MARGIN.top + plotH + MARGIN.bottom + (slanted ? SLANT_EXTRA_HEIGHT : 0);
  const y = (v: number): number => MARGIN.top + plotH - (v / scale.max) * plotH;
  const parts: string[] = [];
  parts.push(`<title>${escapeXml(options.title)}</title>`);
  parts.push(`<text class="chart-title" x="${MARGIN.left}" y="20">${escapeXml(options.title)}</text>`);
  // Axis and grid.
  const ticks = Math.round(scale.max / scale.step);
  for (let i = 0; i <= ticks; i++) {
    const v = i * scale.step;
    const yy = y(v).toFixed(1);
    parts.push(`<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${yy}" y2="${yy}"/>`);
    parts.push(
      `<text class="tick" x="${MARGIN.left - 6}" y="${yy}" text-anchor="end" dominant-baseline="middle">${escapeXml(fmt(v))}</text>`,
    );
  }
  parts.push(
    `<text class="axis-label" transform="translate(14 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.unit)}</text>`,
  );
  // Bars.
  const groupW = plotW / Math.max(1, options.groups.length);
  options.groups.forEach((g, gi) => {
    const barW = Math.min(48, (groupW * 0.8) / Math.max(1, g.bars.length));
    const x0 = MARGIN.left + gi * groupW + (groupW - barW * g.bars.length) / 2;
    g.bars.forEach((b, bi) => {
      const x = x0 + bi * barW;
      const cx = (x + barW / 2).toFixed(1);
      if (!b.value) {
        parts.push(`<text class="missing" x="${cx}" y="${y(0) - 4}" text-anchor="middle">n/a</text>`);
        return;
      }
      const { min, median, max, n } = b.value;
      const tip = `${g.label} · ${b.series}: median ${fmt(median)} ${options.unit} (min ${fmt(min)}, max ${fmt(max)}, ${n} round${n === 1 ? '' : 's'})`;
      parts.push(
        `<rect class="bar" x="${(x + 1).toFixed(1)}" y="${y(median).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(y(0) - y(median)).toFixed(1)}" fill="${colour(b.series)}"><title>${escapeXml(tip)}</title></rect>`,
      );
      if (n > 1 && max > min) {
        const w = Math.max(2, barW / 4);
        parts.push(
          `<path class="whisker" d="M${cx} ${y(max).toFixed(1)}V${y(min).toFixed(1)}M${(+cx - w).toFixed(1)} ${y(max).toFixed(1)}h${(2 * w).toFixed(1)}M${(+cx - w).toFixed(1)} ${y(min).toFixed(1)}h${(2 * w).toFixed(1)}"/>`,
        );
      }
      parts.push(
        `<text class="value" x="${cx}" y="${(y(max) - 4).toFixed(1)}" text-anchor="middle">${escapeXml(fmt(median))}</text>`,
      );
    });
    const gx = (MARGIN.left + gi * groupW + groupW / 2).toFixed(1);
    const gy = MARGIN.top + plotH + 16;
    parts.push(
      slanted
        ? `<text class="group-label" x="${gx}" y="${gy}" text-anchor="end" transform="rotate(-30 ${gx} ${gy})">${escapeXml(g.label)}</text>`
        : `<text class="group-label" x="${gx}" y="${gy}" text-anchor="middle">${escapeXml(g.label)}</text>`,
    );
  });
  for (const r of options.referenceLines ?? []) {
    const yy = y(r.value).toFixed(1);
    parts.push(`<line class="reference" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${yy}" y2="${yy}"/>`);
    parts.push(
      `<text class="reference-label" x="${WIDTH - MARGIN.right}" y="${(+yy - 4).toFixed(1)}" text-anchor="end">${escapeXml(`${r.label}: ${fmt(r.value)}`)}</text>`,
    );
  }
  parts.push(`<line class="axis" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(0)}" y2="${y(0)}"/>`);
  // Legend.
  let lx = MARGIN.left;
  const ly = HEIGHT - 14;
  for (const s of series) {
    parts.push(`<rect class="legend-swatch" x="${lx}" y="${ly - 9}" width="10" height="10" fill="${colour(s)}"/>`);
    parts.push(`<text class="legend" x="${lx + 14}" y="${ly}">${escapeXml(s)}</text>`);
    lx += 24 + s.length * 6.5;
  }
  return `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeXml(options.title)}">${parts.join('')}</svg>`;
}
