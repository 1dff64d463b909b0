/**
 * A webhook server alone in its own process, with the default limits, for measuring its memory
 * from outside (the RSS of this process, not of the test's). Prints one JSON line,
 * `{ port, ca }`, once it listens; stops on SIGTERM.
 */
import { realClock } from '../../core/clock.js';
import { recordingLogger } from '../../logging/recording-logger.js';
import { createMetricsRegistry } from '../../metrics/create-metrics-registry.js';
import { kind } from '../../client/kind.js';
import type { KubeObject } from '../../core/object-key.js';
import { WebhookServer } from '../webhook-server.js';
import { Webhooks } from '../webhooks.js';

const webhooks = new Webhooks();
// Looks at the object without copying it, as a validator of a large list would.
webhooks.validate(
  kind<KubeObject & { spec?: { items?: unknown[] } }>('example.com/v1', 'Widget'),
  (obj) => void obj.spec?.items?.length,
  { path: '/validate' },
);
const server = new WebhookServer(
  webhooks,
  { port: 0, host: '127.0.0.1', selfSignedHosts: ['127.0.0.1'] },
  { registry: createMetricsRegistry(), logger: recordingLogger(), clock: realClock, defaultHost: '127.0.0.1' },
);
await server.listen();
process.stdout.write(`${JSON.stringify({ port: server.port, ca: server.certificatePem })}\n`);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
