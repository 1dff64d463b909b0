/**
 * Run by reconcile-tracing.test.ts in a child process: `@opentelemetry/api` made unresolvable, as
 * in an application that never installed it, then one reconcile. Prints what it saw as JSON.
 */
import Module from 'node:module';

type Resolve = (request: string, ...rest: unknown[]) => string;
const resolver = Module as unknown as { _resolveFilename: Resolve };
const resolve = resolver._resolveFilename;
resolver._resolveFilename = function (this: unknown, request, ...rest) {
  if (request === '@opentelemetry/api' || request.startsWith('@opentelemetry/api/'))
    throw Object.assign(new Error(`Cannot find module '${request}'`), { code: 'MODULE_NOT_FOUND' });
  return resolve.call(this, request, ...rest);
};

const { openTelemetryApi } = await import('../../core/tracing.js');
const { Controller } = await import('../controller.js');
const { recordingLogger } = await import('../../logging/recording-logger.js');
const { createHttpClient } = await import('../../helpers/http-client.js');

const logger = recordingLogger();
let reconciled = 0;
const controller = new Controller({
  name: 'untraced',
  logger,
  reconciler: {
    reconcile: async (_req, ctx) => {
      reconciled++;
      ctx.log.info({}, 'working');
    },
  },
});
// Built without the API too: its tracing seam is off, nothing else changes.
await createHttpClient().close();
const stop = new AbortController();
const running = controller.start(stop.signal);
controller.enqueue({ name: 'a' });
while (reconciled === 0) await new Promise((r) => setTimeout(r, 5));
stop.abort();
await running;
console.log(
  JSON.stringify({
    apiLoaded: openTelemetryApi() !== undefined,
    traced: controller.traced,
    reconciled,
    traceIDBound: logger.entries.some((e) => 'traceID' in e.bindings),
  }),
);
