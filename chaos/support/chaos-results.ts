/**
 * The chaos suite's result rows: each scenario records one row (a JSON file per scenario, since
 * node --test runs files in separate processes); scripts/chaos.sh merges them into
 * `.tmp/chaos-results.json` and prints the table.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export interface ChaosResult {
  readonly scenario: string;
  /** What was injected, e.g. `partition etcd leader 15000 ms`. */
  readonly faults: readonly string[];
  readonly objects: number;
  /** From heal until every live object converged; null when it did not within the bound. */
  readonly convergenceMs: number | null;
  /** null where the scenario has no backup service. */
  readonly backupsStarted: number | null;
  readonly backupsCompleted: number | null;
  readonly apiWrites: number;
  /** Reconciles of one key that overlapped (must be 0); null when not measured. */
  readonly reconcileOverlaps: number | null;
  /** From the consistency audit (must be 0). */
  readonly lostUpdates: number;
  readonly outOfOrderStatusWrites: number;
  readonly passed: boolean;
  /** Free-form measured figures (leader election time, stall duration…). */
  readonly notes?: Readonly<Record<string, number | string>>;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const RESULTS_DIR = join(ROOT, '.tmp', 'chaos-results.d');
export const RESULTS_FILE = join(ROOT, '.tmp', 'chaos-results.json');

const COLUMNS: readonly [string, (r: ChaosResult) => string][] = [
  ['scenario', (r) => r.scenario],
  ['faults injected', (r) => r.faults.join('; ')],
  ['objects', (r) => String(r.objects)],
  [
    'convergence after heal',
    (r) => (r.convergenceMs === null ? 'NOT CONVERGED' : `${(r.convergenceMs / 1000).toFixed(1)} s`),
  ],
  [
    'backups started/completed',
    (r) => (r.backupsStarted === null ? 'n/a' : `${r.backupsStarted}/${r.backupsCompleted ?? 0}`),
  ],
  ['API writes', (r) => String(r.apiWrites)],
  ['reconcile overlaps', (r) => (r.reconcileOverlaps === null ? 'n/a' : String(r.reconcileOverlaps))],
  ['lost updates', (r) => String(r.lostUpdates)],
  ['out-of-order status', (r) => String(r.outOfOrderStatusWrites)],
  ['result', (r) => (r.passed ? 'pass' : 'FAIL')],
];

/** Writes the scenario's row for the summary and prints it as a table line. */
export async function recordChaosResult(result: ChaosResult): Promise<void> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${result.scenario.replace(/[^A-Za-z0-9_.-]+/g, '_')}.json`);
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`# ${formatChaosTable([result]).split('\n').slice(2).join('\n')}`);
}

/** A Markdown table of the rows, columns as the issue lists them. */
export function formatChaosTable(results: readonly ChaosResult[]): string {
  const header = `| ${COLUMNS.map(([name]) => name).join(' | ')} |`;
  const rule = `|${COLUMNS.map(() => '---').join('|')}|`;
  return [header, rule, ...results.map((r) => `| ${COLUMNS.map(([, cell]) => cell(r)).join(' | ')} |`)].join('\n');
}

/** Merges every recorded row into RESULTS_FILE; returns the rows. */
export async function mergeChaosResults(): Promise<ChaosResult[]> {
  let files: string[] = [];
  try {
    files = (await readdir(RESULTS_DIR)).filter((f) => f.endsWith('.json')).sort();
  } catch {
    // no scenario recorded anything
  }
  const results = await Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(RESULTS_DIR, f), 'utf8')) as ChaosResult),
  );
  await mkdir(join(RESULTS_DIR, '..'), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify({ generatedAt: new Date().toISOString(), results }, null, 2)}\n`);
  return results;
}
