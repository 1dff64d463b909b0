import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Registry, collectDefaultMetrics as promCollectDefaultMetrics } from 'prom-client';
import { collectDefaultMetrics } from './default-metrics.js';

const run = promisify(execFile);

/** Each series' name, type, help and label names: what a scrape shows besides the values. */
async function shapeOf(registry: Registry): Promise<string[]> {
  const metrics = await registry.getMetricsAsJSON();
  return metrics
    .map((m) => {
      const labels = [...new Set(m.values.flatMap((v) => Object.keys(v.labels)))].sort().join(',');
      return `${m.name} ${m.type} ${labels} ${m.help}`;
    })
    .sort();
}

test('the default metrics are the series, types, help and labels of prom-client collectDefaultMetrics', async () => {
  const ours = new Registry();
  collectDefaultMetrics(ours);
  const theirs = new Registry();
  promCollectDefaultMetrics({ register: theirs });
  const expected = await shapeOf(theirs);
  assert.ok(expected.length > 10, 'prom-client registers its default metrics');
  assert.deepEqual(await shapeOf(ours), expected);
});

test('the CPU counters count this process CPU time, in seconds', async () => {
  const registry = new Registry();
  collectDefaultMetrics(registry);
  const before = process.cpuUsage();
  // Burn CPU the counters must see: at least 50 ms of user time.
  for (let spin = Date.now(); process.cpuUsage(before).user < 50_000 && Date.now() - spin < 10_000;);
  const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]!.value;
  const user = await value('process_cpu_user_seconds_total');
  const system = await value('process_cpu_system_seconds_total');
  const total = await value('process_cpu_seconds_total');
  assert.ok(user >= 0.05, `user ${user} s`);
  assert.ok(Math.abs(total - (user + system)) < 1e-9, `total ${total} = user ${user} + system ${system}`);
});

test('collecting the default metrics does not load @opentelemetry/api nor prom-client index', async () => {
  const script = `
    import { createRequire } from 'node:module';
    const { createMetricsRegistry } = await import('./src/metrics/create-metrics-registry.ts');
    await createMetricsRegistry({ defaultMetrics: true }).metrics();
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify(loaded.filter((f) => /@opentelemetry|prom-client[/\\\\]index\\.js$/.test(f))));
  `;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: new URL('../..', import.meta.url),
  });
  assert.deepEqual(JSON.parse(stdout), []);
});
