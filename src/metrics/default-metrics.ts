/**
 * prom-client's default metrics (`collectDefaultMetrics`) without loading @opentelemetry/api:
 * prom-client's process CPU collector requires it at load only to label exemplars with the active
 * trace, and the runtime never enables exemplars (1.6 MiB resident on Node 20, 7 MiB on Node 24;
 * docs/footprint.md). Every other collector is prom-client's own file, called in prom-client's
 * order with prom-client's configuration; the CPU counters are its collector without the exemplar
 * branch. default-metrics.test.ts holds the series to `collectDefaultMetrics`'s.
 */
import { createRequire } from 'node:module';
import type { Registry } from 'prom-client';
import { Counter } from '../core/prom-client-parts.js';

const require = createRequire(import.meta.url);

interface DefaultMetricsConfig {
  readonly register: Registry;
  readonly eventLoopMonitoringPrecision: number;
}

type Collector = (registry: Registry, config: DefaultMetricsConfig) => void;

/** prom-client's collector files, in lib/defaultMetrics.js's order, the CPU one replaced. */
function collectors(): Collector[] {
  const load = (name: string): Collector => require(`prom-client/lib/metrics/${name}.js`);
  return [
    processCpuTotal,
    load('processStartTime'),
    load('osMemoryHeap'),
    load('processOpenFileDescriptors'),
    load('processMaxFileDescriptors'),
    load('eventLoopLag'),
    // prom-client registers this one only where Node has the API (Node 17+).
    ...(typeof process.getActiveResourcesInfo === 'function' ? [load('processResources')] : []),
    load('processHandles'),
    load('processRequests'),
    load('heapSizeAndUsed'),
    load('heapSpacesSizeAndUsed'),
    load('version'),
    load('gc'),
  ];
}

/** `collectDefaultMetrics({ register: registry })`, as prom-client does it. */
export function collectDefaultMetrics(registry: Registry): void {
  const config: DefaultMetricsConfig = { eventLoopMonitoringPrecision: 10, register: registry };
  for (const collect of collectors()) collect(registry, config);
}

/** prom-client's lib/metrics/processCpuTotal.js with exemplars off (no prefix, no labels). */
function processCpuTotal(registry: Registry): void {
  let lastCpuUsage = process.cpuUsage();
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers: [registry],
    labelNames: [],
    // One metric's `collect` sets all three, as prom-client's does.
    collect() {
      const cpuUsage = process.cpuUsage();
      const userMicros = cpuUsage.user - lastCpuUsage.user;
      const systemMicros = cpuUsage.system - lastCpuUsage.system;
      lastCpuUsage = cpuUsage;
      user.inc(userMicros / 1e6);
      system.inc(systemMicros / 1e6);
      total.inc((userMicros + systemMicros) / 1e6);
    },
  });
  const system = new Counter({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    registers: [registry],
    labelNames: [],
  });
  const total = new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers: [registry],
    labelNames: [],
  });
}
