/**
 * Runs the resident-memory measurement's processes: the loopback list server (list-server.ts) and
 * one fresh measured process per figure (informer-child.mjs, over the built package in `dist/`).
 * Used by bench/informer-resident.bench.ts and by the CI check src/cache/resident-memory.test.ts.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = fileURLToPath(new URL('./informer-child.mjs', import.meta.url));
const SERVER = fileURLToPath(new URL('./list-server.ts', import.meta.url));

export type ResidentMode = 'bare' | 'ours' | 'baseline' | 'client-node';

export interface ResidentFigures {
  readonly mode: ResidentMode;
  readonly node: string;
  readonly objects: number;
  readonly syncMs: number;
  readonly peakRss: number;
  readonly settledRss: number;
  readonly liveHeap: number;
  readonly heapTotal: number;
  /** After a last-resort GC, as the manager's idle heap compaction runs one (V8 12+ only). */
  readonly compactedRss?: number;
  /** Resident memory by what backs it, at the end (after the compaction where there is one). */
  readonly mappings?: { binary: number; anonymous: number; mallocHeap: number; otherFiles: number };
}

export interface ListServer {
  readonly port: number;
  stop(): void;
}

/** Starts the list server for `objects` Database-like objects (its own process, run with tsx). */
export async function startListServer(objects: number): Promise<ListServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, String(objects)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '--conditions=operator-runtime-source' },
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`list server exited with ${code}`)));
  });
  return { port, stop: () => child.kill() };
}

export interface MeasureOptions {
  /** Node binary. @defaultValue this process's */
  readonly node?: string;
  /** V8 flags for the measured process, e.g. `--max-semi-space-size=2`. */
  readonly flags?: readonly string[];
  /** A checkout whose `dist/` the `baseline` mode loads. */
  readonly baseline?: string;
  /** A folder where `npm i @kubernetes/client-node@2` ran, for the `client-node` mode. */
  readonly clientNode?: string;
  readonly settleMs?: number;
}

/** One figure, from a fresh process. Throws, naming the fix, when the built package is missing. */
export async function measureResident(
  server: ListServer,
  objects: number,
  mode: ResidentMode,
  options: MeasureOptions = {},
): Promise<ResidentFigures> {
  const src = mode === 'baseline' ? options.baseline : ROOT;
  if (mode === 'baseline' && !src) throw new Error('the baseline mode needs a checkout (RESIDENT_BASELINE)');
  if ((mode === 'ours' || mode === 'baseline') && !existsSync(join(src!, 'dist/cache/informer.js')))
    throw new Error(`${join(src!, 'dist')} has no built package: run \`npm run build\` there first`);
  const args = [...(options.flags ?? []), '--expose-gc', CHILD, String(server.port), String(objects)];
  const { stdout } = await run(options.node ?? process.execPath, [...args, mode === 'baseline' ? 'ours' : mode], {
    cwd: ROOT,
    timeout: 300_000,
    env: {
      ...process.env,
      // The measured process loads the built package only: no TypeScript loader, no source condition.
      NODE_OPTIONS: '',
      RESIDENT_SRC: src ?? ROOT,
      ...(options.clientNode ? { RESIDENT_CLIENT_NODE: options.clientNode } : {}),
      ...(options.settleMs !== undefined ? { RESIDENT_SETTLE_MS: String(options.settleMs) } : {}),
    },
  });
  return { ...(JSON.parse(stdout.trim().split('\n').pop()!) as ResidentFigures), mode };
}
