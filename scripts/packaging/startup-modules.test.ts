/**
 * What an operator's start-up loads (docs/footprint.md): the root entry, a logger and a registry
 * with the default metrics must not load the dependencies' heavy indexes the runtime does not use
 * (undici's index with fetch and WebSocket, prom-client's with the push gateway and
 * @opentelemetry/api) nor yaml, which only a kubeconfig file needs. A fresh process, as start-up is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO } from './dist.js';

const run = promisify(execFile);

test('the root entry, a logger and default metrics load no undici index, prom-client index, OpenTelemetry or yaml', async () => {
  const script = `
    import { createRequire } from 'node:module';
    const { createLogger, createMetricsRegistry } = await import('operator-runtime');
    createLogger({ level: 'silent' }).info('started');
    await createMetricsRegistry({ defaultMetrics: true }).metrics();
    const loaded = Object.keys(createRequire(import.meta.url).cache).map((f) => f.replaceAll('\\\\', '/'));
    console.log(JSON.stringify(loaded));
  `;
  const { stdout } = await run(
    process.execPath,
    ['--conditions=operator-runtime-source', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: REPO },
  );
  const loaded: string[] = JSON.parse(stdout);
  assert.ok(
    loaded.some((f) => f.endsWith('/undici/lib/dispatcher/pool.js')),
    'the probe sees the CJS modules start-up loads',
  );
  const unwanted = loaded.filter((f) =>
    /\/node_modules\/(undici\/index\.js|prom-client\/index\.js|@opentelemetry\/|yaml\/)/.test(f),
  );
  assert.deepEqual(unwanted, []);
});
