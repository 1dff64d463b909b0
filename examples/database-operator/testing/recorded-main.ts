/**
 * The Database operator as a process, exactly as src/main.ts runs it, with what the test beds
 * record: RECONCILE_LOG names a file to which every finished reconcile (through the controller's
 * observer) and every Database status write (through a recording client) is appended as one
 * JSON line (testing/replica-records.ts), under the replica name POD_NAME. The rest of the
 * configuration is src/main.ts's.
 */
import { appendFileSync } from 'node:fs';
import { KubeClient, createLogger, createMetricsRegistry, runUntilSignal } from 'operator-runtime';
import { logLevelFromEnv, operatorOptionsFromEnv } from '../src/operator-env.js';
import { createOperatorUnderTest } from './operator-rig.js';
import { recordStatusWrites } from './record-status-writes.js';
import type { ReplicaRecord } from './replica-records.js';

const logger = createLogger({ name: 'database-operator', level: logLevelFromEnv(process.env) });
const options = operatorOptionsFromEnv(process.env, logger);
const file = process.env.RECONCILE_LOG;
if (!file) {
  logger.error({}, 'RECONCILE_LOG is required');
  process.exit(2);
}
const replica = process.env.POD_NAME || String(process.pid);
/** Appended synchronously, so a kill -9 loses nothing already recorded. */
const record = (r: ReplicaRecord): void => appendFileSync(file, `${JSON.stringify(r)}\n`);
const registry = createMetricsRegistry({ defaultMetrics: true });
const client = await KubeClient.fromDefault({ registry, logger });
const operator = createOperatorUnderTest({
  ...options,
  client: recordStatusWrites(client, (w) => record({ type: 'status-write', t: Date.now(), replica, ...w })),
  registry,
  logger,
  observer: {
    reconciled: (r) =>
      record({
        type: 'reconcile',
        replica,
        key: r.key,
        reconcileID: r.reconcileID,
        startedAtMs: r.startedAtMs,
        durationMs: r.durationMs,
        outcome: r.outcome,
      }),
  },
});
const code = await runUntilSignal(operator.manager, { logger });
await operator.close();
await client.close();
process.exit(code);
