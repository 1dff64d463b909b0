/**
 * The reference operator under load: N Databases created at once → time until all are Ready,
 * reconciles per Database, API writes per Database, and the operator's RSS (the operator runs as
 * its own process, as in a cluster; figures come from its /metrics).
 *
 *   NODE_OPTIONS=--conditions=operator-runtime-source node --import tsx bench/database-operator.bench.ts [databases=500]
 *   (the condition resolves the operator's 'operator-runtime' imports to src/; NODE_OPTIONS reaches its process)
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { BackupService } from '../examples/database-operator/testing/backup-service.js';
import { freePort } from '../src/testing/control-plane/free-port.js';
import { readManifests } from '../src/testing/control-plane/manifests.js';
import { TestEnv } from '../src/testing/control-plane/test-env.js';

const count = Number(process.argv[2] ?? 500);
const env = await TestEnv.start({
  crds: await readManifests(new URL('../examples/database-operator/config/crd.yaml', import.meta.url)),
  controllerManager: true,
  simulatePods: { readyDelayMs: 100 },
});
const backups = new BackupService();
await backups.start();
const port = await freePort();
const operator = spawn(
  process.execPath,
  ['--import', 'tsx', fileURLToPath(new URL('../examples/database-operator/src/main.ts', import.meta.url))],
  {
    env: {
      ...process.env,
      KUBECONFIG: env.kubeconfigPath,
      BACKUP_SERVICE_URL: backups.url,
      METRICS_PORT: String(port),
      HEALTH_PORT: String(port),
      BIND_HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
const agent = new Agent({ connect: { ca: env.caPem }, connections: 32 });
const headers = { authorization: `Bearer ${env.adminToken}`, 'content-type': 'application/json' };
const base = `${env.server}/apis/example.com/v1/namespaces/default/databases`;

async function metrics(): Promise<string> {
  const res = await request(`http://127.0.0.1:${port}/metrics`);
  return res.body.text();
}
const sum = (text: string, re: RegExp): number => [...text.matchAll(re)].reduce((s, m) => s + Number(m[1]), 0);

try {
  for (;;) {
    try {
      if ((await request(`http://127.0.0.1:${port}/readyz`)).statusCode === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = next++; i < count; i = next++) {
        const res = await request(base, {
          method: 'POST',
          dispatcher: agent,
          headers,
          body: JSON.stringify({
            apiVersion: 'example.com/v1',
            kind: 'Database',
            metadata: { name: `db-${i}` },
            spec: { engine: i % 2 ? 'mysql' : 'postgres', version: i % 2 ? '8.0' : '16', replicas: 1, storage: '1Gi' },
          }),
        });
        await res.body.dump();
        if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode}`);
      }
    }),
  );
  const createdAt = performance.now();
  let ready = 0;
  let peakRss = 0;
  while (ready < count) {
    await new Promise((r) => setTimeout(r, 1000));
    const res = await request(base, { dispatcher: agent, headers });
    const list = (await res.body.json()) as {
      items: { metadata: { generation: number }; status?: { phase?: string; observedGeneration?: number } }[];
    };
    ready = list.items.filter(
      (d) => d.status?.phase === 'Ready' && d.status.observedGeneration === d.metadata.generation,
    ).length;
    peakRss = Math.max(peakRss, Number(/^process_resident_memory_bytes (\S+)$/m.exec(await metrics())?.[1] ?? 0));
    if (performance.now() - t0 > 15 * 60_000) throw new Error(`only ${ready}/${count} Ready after 15 minutes`);
  }
  const allReadyS = (performance.now() - t0) / 1000;
  // Let the last events settle, then read the totals.
  await new Promise((r) => setTimeout(r, 3000));
  const text = await metrics();
  const reconciles = sum(text, /^controller_runtime_reconcile_total\{[^}]*\} (\S+)$/gm);
  const writes = sum(text, /^rest_client_requests_total\{[^}]*method="(?:POST|PUT|PATCH|DELETE)"[^}]*\} (\S+)$/gm);
  const reads = sum(text, /^rest_client_requests_total\{[^}]*method="GET"[^}]*\} (\S+)$/gm);
  const rss = Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1] ?? 0);
  console.log(
    `${count} Databases: created in ${((createdAt - t0) / 1000).toFixed(1)} s, all Ready after ${allReadyS.toFixed(1)} s`,
  );
  console.log(`reconciles per Database: ${(reconciles / count).toFixed(2)} (${reconciles} total)`);
  console.log(
    `API writes per Database: ${(writes / count).toFixed(2)} (${writes} total); API reads per Database: ${(reads / count).toFixed(2)}`,
  );
  console.log(
    `operator RSS: ${(rss / 2 ** 20).toFixed(0)} MiB at the end, ${(peakRss / 2 ** 20).toFixed(0)} MiB peak (sampled each second)`,
  );
} finally {
  operator.kill('SIGTERM');
  await new Promise((r) => operator.once('exit', r));
  await agent.close();
  await backups.stop();
  await env.stop();
}
