/**
 * Peak RSS of a KubeClient answered by a hostile API server: a 200 MiB 404 body and a 200 MiB list,
 * each once with a content-length and once chunked (no length: the limit must hold while reading),
 * and for scale a 30 MiB list, just under the default limit, read whole.
 *
 *   node --import tsx bench/hostile-response.bench.ts [MiB]
 *
 * The hostile server runs in this process and streams its bodies from one small buffer (with
 * backpressure), so it holds almost nothing. Each scenario runs the client in a fresh child
 * process, which reports its RSS after a warm-up request (discovery and one small GET) and its peak
 * RSS (`VmHWM`, reset through /proc/self/clear_refs after the warm-up) once the hostile request has
 * settled, plus what the request ended with. Figures are MiB.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../src/client/kube-client.js';
import { StaticTokenCredential } from '../src/client/credentials.js';
import { makeTlsConfig } from '../src/client/tls-config.js';

const MIB = 1024 * 1024;
const SCENARIOS = ['404', '404-chunked', 'list', 'list-chunked', 'list-30MiB'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface ChildResult {
  readonly scenario: Scenario;
  readonly baselineRssMiB: number;
  readonly peakRssMiB: number;
  readonly elapsedMs: number;
  readonly outcome: string;
}

const mib = (bytes: number): number => Math.round((bytes / MIB) * 10) / 10;

function vmHwmBytes(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

async function child(scenario: Scenario, url: string): Promise<void> {
  const client = new KubeClient(
    {
      server: url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'd',
    },
    { backoff: { maxAttempts: 1 } },
  );
  const type = { apiVersion: 'v1', kind: 'ConfigMap' };
  await client.get(type, 'small', { namespace: 'd' });
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage().rss;
  try {
    // "5" resets the peak RSS counter (Linux >= 4.0), so VmHWM is the peak of the request alone.
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Without it VmHWM is the process's lifetime peak, still >= the request's.
  }
  const start = performance.now();
  let outcome: string;
  try {
    if (scenario.startsWith('404')) await client.get(type, 'huge', { namespace: 'd' });
    else {
      const page = await client.listPage(type, { namespace: 'd' });
      outcome = `ok: ${page.items.length} items`;
    }
    outcome ??= 'ok';
  } catch (err) {
    const e = err as { code?: string; message?: string };
    outcome = `${e.code ?? 'error'}: ${String(e.message).slice(0, 160)}`;
  }
  const elapsedMs = Math.round(performance.now() - start);
  const result: ChildResult = {
    scenario,
    baselineRssMiB: mib(baseline),
    peakRssMiB: mib(vmHwmBytes()),
    elapsedMs,
    outcome,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
  await client.close();
}

/** Streams `total` bytes: `head`, then `fill` repeated, then `tail`, honouring backpressure. */
function streamBody(res: http.ServerResponse, total: number, head: string, fill: Buffer, tail: string): void {
  let sent = 0;
  const budget = total - Buffer.byteLength(head) - Buffer.byteLength(tail);
  res.write(head);
  const pump = (): void => {
    while (sent < budget) {
      const n = Math.min(fill.length, budget - sent);
      sent += n;
      if (!res.write(n === fill.length ? fill : fill.subarray(0, n))) {
        res.once('drain', pump);
        return;
      }
    }
    res.end(tail);
  };
  res.on('close', () => res.removeAllListeners('drain'));
  pump();
}

function hostileServer(totalBytes: number, chunked: boolean): http.Server {
  const length = (n: number): Record<string, string> => (chunked ? {} : { 'content-length': String(n) });
  // One list item (~1 KiB), repeated: a valid list of ~totalBytes.
  const item = JSON.stringify({
    metadata: { name: 'cm', namespace: 'd', resourceVersion: '1' },
    data: { k: 'v'.repeat(960) },
  });
  const itemsChunk = Buffer.from(Array.from({ length: 64 }, () => item + ',').join(''));
  const xs = Buffer.alloc(64 * 1024, 'x');
  return http.createServer((req, res) => {
    const path = req.url ?? '';
    if (path === '/api/v1') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'list', 'watch'] }],
        }),
      );
    } else if (path.startsWith('/api/v1/namespaces/d/configmaps/small')) {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small', namespace: 'd' } }));
    } else if (path.startsWith('/api/v1/namespaces/d/configmaps/huge')) {
      res.writeHead(404, { 'content-type': 'text/plain', ...length(totalBytes) });
      streamBody(res, totalBytes, '', xs, '');
    } else if (path.startsWith('/api/v1/namespaces/d/configmaps')) {
      res.writeHead(200, { 'content-type': 'application/json', ...length(totalBytes) });
      // The last item has no trailing comma: the filler ends on one, so the tail closes with an item.
      streamBody(
        res,
        totalBytes,
        '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[',
        itemsChunk,
        `${item}]}`,
      );
    } else {
      res.writeHead(404).end();
    }
  });
}

async function main(): Promise<void> {
  const totalMiB = Number(process.argv[2] ?? 200);
  // The list's filler is whole items: size it as head + k·chunk + tail, k chosen to reach the total.
  const probeItem = JSON.stringify({
    metadata: { name: 'cm', namespace: 'd', resourceVersion: '1' },
    data: { k: 'v'.repeat(960) },
  });
  const chunkLen = Buffer.byteLength(Array.from({ length: 64 }, () => probeItem + ',').join(''));
  const head = '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[';
  const listBytes = (mebibytes: number): number =>
    Buffer.byteLength(head) + Math.ceil((mebibytes * MIB) / chunkLen) * chunkLen + Buffer.byteLength(`${probeItem}]}`);
  const results: ChildResult[] = [];
  for (const scenario of SCENARIOS) {
    const bytes =
      scenario === 'list-30MiB' ? listBytes(30) : scenario.startsWith('list') ? listBytes(totalMiB) : totalMiB * MIB;
    const s = hostileServer(bytes, scenario !== '404' && scenario !== 'list');
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn(
        process.execPath,
        ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', scenario, url],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let buf = '';
      p.stdout.on('data', (d: Buffer) => (buf += d.toString()));
      p.on('error', reject);
      p.on('exit', (code) => (code === 0 ? resolve(buf) : reject(new Error(`child ${scenario} exited ${code}`))));
    });
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
    results.push(JSON.parse(out.trim().split('\n').pop()!) as ChildResult);
  }
  console.log(`hostile responses of ${totalMiB} MiB (RSS in MiB, one fresh process each)`);
  for (const r of results) {
    console.log(
      `${r.scenario.padEnd(12)} baseline ${String(r.baselineRssMiB).padStart(6)}  peak ${String(r.peakRssMiB).padStart(7)}  ${String(r.elapsedMs).padStart(6)} ms  ${r.outcome}`,
    );
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as Scenario, process.argv[4]!);
else await main();
