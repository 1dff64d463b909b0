/**
 * A test operator process for the manager's signal handling: reconciles Widgets slowly
 * (SLOW_RECONCILE_MS) and prints markers on stdout so the test sees what ran before exit.
 */
import { KubeClient } from '../../client/kube-client.js';
import { createLogger } from '../../logging/create-logger.js';
import { Manager } from '../manager.js';
import { runUntilSignal } from '../run-until-signal.js';

const slowMs = Number(process.env.SLOW_RECONCILE_MS ?? 3000);
const client = await KubeClient.fromKubeconfig();
const manager = new Manager({ client, metricsPort: 0, healthPort: 0, logger: createLogger({ level: 'silent' }) });
manager
  .controller('slow-widget')
  .for({ apiVersion: 'example.com/v1', kind: 'Widget' })
  .complete(async (req) => {
    const key = `${req.namespace}/${req.name}`;
    console.log(`reconcile-started ${key}`);
    await new Promise((r) => setTimeout(r, slowMs));
    console.log(`reconcile-finished ${key}`);
  });
const code = await runUntilSignal(manager);
await client.close();
console.log(`exited ${code}`);
process.exit(code);
