/**
 * The classes of prom-client the runtime uses, loaded from their own files instead of its index.
 * The index also loads the push gateway (http, https, zlib), cluster aggregation, summaries and
 * every default metric, one of which loads @opentelemetry/api for exemplars: 3 MiB resident on
 * Node 20 and 9 MiB on Node 24 (scripts/packaging/import-cost.bench.ts, docs/footprint.md). The
 * classes are the very ones the index exports (prom-client-parts.test.ts holds that to the
 * installed version), so a `Registry` from 'prom-client' works with the runtime's metrics and back.
 * `require`, not `import`: it skips Node's ESM-to-CommonJS translation.
 */
import { createRequire } from 'node:module';
import type {
  Counter as PromCounter,
  Gauge as PromGauge,
  Histogram as PromHistogram,
  Registry as PromRegistry,
} from 'prom-client';

const require = createRequire(import.meta.url);

// Each a value (the class) and a type (its instances), as the names are in 'prom-client'.
export const Registry: typeof PromRegistry = require('prom-client/lib/registry.js');
export type Registry = PromRegistry;
export const Counter: typeof PromCounter = require('prom-client/lib/counter.js');
export type Counter<T extends string = string> = PromCounter<T>;
export const Gauge: typeof PromGauge = require('prom-client/lib/gauge.js');
export type Gauge<T extends string = string> = PromGauge<T>;
export const Histogram: typeof PromHistogram = require('prom-client/lib/histogram.js');
export type Histogram<T extends string = string> = PromHistogram<T>;
