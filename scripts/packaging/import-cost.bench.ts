/**
 * Where the operator's start-up memory goes: for each module, fresh Node processes import it alone
 * and report resident memory (VmRSS) and V8's heapUsed after a full GC, as deltas over a bare Node
 * running the same probe. Modules resolve from `--from` (default: the repo, whose package name
 * resolves to its dist/ through `exports`; give the directory of scripts/layout-runtime.sh to
 * measure the image's files, where `./dist/main.js` is the operator itself).
 *
 *   npm run build && node --import tsx scripts/packaging/import-cost.bench.ts [--from DIR] [--samples N] [--node BIN] [--cumulative | --alone] [MODULE…]
 *   (Node 24: --node "$(scripts/install-node24.sh | tail -n1)")
 *
 * A module is a bare specifier (`undici`, `operator-runtime/webhook`) or a path from DIR
 * (`./dist/client/transport.js`). Deltas overlap: undici and operator-runtime both count undici's
 * cost, so the column does not add up across rows. With --cumulative one process imports the modules
 * in the order given and each row is what that module adds to the ones above it (the column adds up
 * to the last row). Each figure is the median of `samples` processes.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { REPO, userEnv } from './dist.js';

const run = promisify(execFile);

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    from: { type: 'string', default: REPO },
    samples: { type: 'string', default: '5' },
    node: { type: 'string', default: process.execPath },
    cumulative: { type: 'boolean', default: false },
    // Also pay the one-time cost of ESM importing CommonJS in the module's row instead of before
    // it (what a process that loads only this module pays).
    alone: { type: 'boolean', default: false },
  },
});

const DEFAULT_MODULES = [
  // Third-party dependencies, as the runtime's code imports them.
  'undici',
  'prom-client',
  'pino',
  'yaml',
  'typebox',
  'lossless-json',
  'commander',
  // Node's own modules the runtime loads.
  'node:http',
  'node:https',
  'node:crypto',
  // The package's entry points.
  'operator-runtime',
  'operator-runtime/client',
  'operator-runtime/cache',
  'operator-runtime/controller',
  'operator-runtime/manager',
  'operator-runtime/helpers',
  'operator-runtime/metrics',
  'operator-runtime/webhook',
  'operator-runtime/crd',
  'operator-runtime/leader-election',
];

const from = resolve(values.from);
const samples = Number(values.samples);
const modules = positionals.length > 0 ? positionals : DEFAULT_MODULES;

/** A bare specifier as it is; a path from DIR as a file URL (an import from `-e` resolves from the cwd). */
const target = (specifier: string) =>
  specifier.startsWith('.') ? pathToFileURL(resolve(from, specifier)).href : specifier;

/**
 * The probe: imports the modules in order and, before the first and after each, collects garbage
 * twice (the second pass frees what the first one's finalizers released) after letting work an
 * import scheduled run, then prints the process's memory: one JSON line per point.
 */
function probe(targets: readonly string[]): string {
  return `
    const { readFileSync } = await import('node:fs');
    const point = async () => {
      await new Promise((r) => setTimeout(r, 100));
      globalThis.gc(); globalThis.gc();
      const rssKiB = Number(/VmRSS:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
      console.log(JSON.stringify({ rss: rssKiB * 1024, heapUsed: process.memoryUsage().heapUsed }));
    };
    await point();
    for (const target of ${JSON.stringify(targets)}) { await import(target); await point(); }
    process.exit(0);
  `;
}

interface Sample {
  readonly rss: number;
  readonly heapUsed: number;
}

/** The median over `samples` processes of each point of the probe. */
async function measure(targets: readonly string[]): Promise<Sample[]> {
  const runs: Sample[][] = [];
  for (let i = 0; i < samples; i++) {
    const { stdout } = await run(values.node, ['--expose-gc', '--input-type=module', '-e', probe(targets)], {
      cwd: from,
      env: userEnv(),
    });
    runs.push(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Sample),
    );
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1] ?? 0;
  return runs[0]!.map((_, point) => ({
    rss: median(runs.map((r) => r[point]!.rss)),
    heapUsed: median(runs.map((r) => r[point]!.heapUsed)),
  }));
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const row = (name: string, cost: Sample, over: Sample) =>
  console.log(
    `${name.padEnd(48)} ${mib(cost.rss - over.rss).padStart(8)} ${mib(cost.heapUsed - over.heapUsed).padStart(9)}`,
  );

// In a bare Node 20 the first CommonJS file above ~8 KB that ESM imports costs ~4.6 MiB once (its
// ESM-to-CJS translation; Node 24 ~0.9 MiB, `require` ~0.3): every module row is measured with it
// already paid, unless --alone.
const fixtureDir = await mkdtemp(join(tmpdir(), 'import-cost-'));
const cjsFixture = join(fixtureDir, 'large.cjs');
await writeFile(cjsFixture, `/*${' '.repeat(16 * 1024)}*/\nmodule.exports = {};\n`);
try {
  const { stdout: version } = await run(values.node, ['--version']);
  const cjsOnce = pathToFileURL(cjsFixture).href;
  const load = loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
  console.log(`node ${version.trim()}, from ${from}, median of ${samples} processes per row, load ${load}`);
  const [bare, paid] = await measure([cjsOnce]);
  console.log(`bare node: RSS ${mib(bare!.rss)} MiB, heapUsed ${mib(bare!.heapUsed)} MiB`);
  console.log(`${'module'.padEnd(48)} ${'+RSS MiB'.padStart(8)} ${'+heap MiB'.padStart(9)}`);
  row('(one-time) ESM imports a large CJS file', paid!, bare!);
  if (values.cumulative) {
    // One process imports them in order: each row is what that module adds to those above it.
    const points = await measure([cjsOnce, ...modules.map(target)]);
    modules.forEach((specifier, i) => row(specifier, points[i + 2]!, points[i + 1]!));
    row('(all of the above)', points.at(-1)!, points[1]!);
  } else {
    for (const specifier of modules) {
      if (values.alone) {
        const points = await measure([target(specifier)]);
        row(`${specifier} (alone)`, points[1]!, points[0]!);
      } else {
        const points = await measure([cjsOnce, target(specifier)]);
        row(specifier, points[2]!, points[1]!);
      }
    }
  }
} finally {
  await rm(fixtureDir, { recursive: true, force: true });
}
