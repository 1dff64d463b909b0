/**
 * One replica of a sharded fleet, as a process (chaos/fleet-sharding-kill.test.ts starts two and
 * kill -9s one): a manager with leader election, ring membership and `fleet: { sharded: true }`
 * over FLEET_CLUSTERS (names for the API server of KUBECONFIG), reconciling ConfigMaps of
 * FLEET_NAMESPACE. Appends a JSON line per reconcile start and end, and the engaged clusters every
 * 100 ms, to FLEET_RECORDS.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { parse } from 'yaml';
import { KubeClient, LeaderElector, Manager, type Kubeconfig, type KubeObject } from 'operator-runtime';
import { staticClusters } from 'operator-runtime/fleet';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`fleet-replica: ${name} is not set`);
  return value;
};
const identity = env('FLEET_REPLICA');
const namespace = env('FLEET_NAMESPACE');
const records = env('FLEET_RECORDS');
const clusters = env('FLEET_CLUSTERS').split(',');
const timings = JSON.parse(env('FLEET_TIMINGS')) as {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
};
const kubeconfig = parse(readFileSync(env('KUBECONFIG'), 'utf8')) as Kubeconfig;
const record = (line: object): void => appendFileSync(records, `${JSON.stringify({ replica: identity, ...line })}\n`);

const client = await KubeClient.fromKubeconfig({ kubeconfig });
const manager = new Manager({
  client,
  metricsPort: 0,
  healthPort: 0,
  leaderElection: new LeaderElector({ client, name: 'fleet-leader', namespace, identity, ...timings }),
  sharding: { ring: 'fleet', namespace, identity, mode: 'label', ...timings },
  fleet: { provider: staticClusters(clusters.map((name) => ({ name, kubeconfig }))), sharded: true },
});
let seq = 0;
manager
  .fleetController('config-maps')
  .for<KubeObject>({ apiVersion: 'v1', kind: 'ConfigMap' })
  .withOptions({ maxConcurrentReconciles: 4 })
  .complete(async (request, ctx) => {
    if (request.namespace !== namespace) return;
    const id = `${identity}-${seq++}`;
    record({ type: 'start', id, key: `${request.cluster}/${request.name}`, atMs: Date.now() });
    try {
      await delay(20, undefined, { signal: ctx.signal }).catch(() => undefined);
    } finally {
      record({ type: 'end', id, atMs: Date.now() });
    }
  });
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
const running = manager.start(stop.signal);
const report = setInterval(() => {
  record({ type: 'engaged', clusters: (manager.fleet?.clusters() ?? []).map((c) => c.name).sort(), atMs: Date.now() });
}, 100);
try {
  await running;
} finally {
  clearInterval(report);
  await client.close();
}
