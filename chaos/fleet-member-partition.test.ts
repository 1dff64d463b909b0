/**
 * Chaos, fleet: three member clusters under spec churn, one operator reconciling all of them. First
 * a phase with no fault (the baseline), then one member cut off from the operator for
 * CHAOS_FAULT_MS (60 s) while every member keeps taking writes. The others must converge as if
 * nothing happened (reconcile latency p99 within 2× the baseline's), the cut member within the
 * bound after the heal, and the etcd-history audit of every member must find 0 lost updates.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, Manager } from 'operator-runtime';
import { kubeconfigSecrets } from 'operator-runtime/fleet';
import { TestFleet, auditFleet, fleetAuditMark, formatFleetAuditReport } from 'operator-runtime/testing/fleet';
import { freePort, readManifests } from 'operator-runtime/testing';
import { recordChaosResult } from './support/chaos-results.js';
import { statusCurrent, waitForConvergence } from './support/convergence.js';
import { FleetWidgetRecords, churnMember, fleetWidgetReconciler, percentile } from './support/fleet-widget-workload.js';
import { WIDGET, type Widget } from './support/toy-widget-operator.js';

const PHASE_MS = Number(process.env.CHAOS_FAULT_MS ?? 60_000);
const OBJECTS = Number(process.env.CHAOS_OBJECTS ?? 20);
const CONVERGENCE_BOUND_MS = 60_000;
const CHURN_PERIOD_MS = 100;
const NAMESPACE = 'default';
const MEMBERS = ['alpha', 'bravo', 'charlie'] as const;
const CUT = 'alpha';

describe('chaos: one member of a fleet cut off', () => {
  let fleet: TestFleet;
  let host: KubeClient;
  const direct = new Map<string, KubeClient>();

  before(async () => {
    const crds = await readManifests(new URL('../examples/quickstart/widget-crd.yaml', import.meta.url));
    fleet = await TestFleet.start({ members: MEMBERS, memberCrds: crds });
    host = await KubeClient.fromKubeconfig({ kubeconfig: fleet.host.kubeconfig });
    for (const m of fleet.members) direct.set(m.name, await m.directClient());
  });
  after(async () => {
    await host?.close();
    await fleet?.stop();
  });

  test('the other members converge as if nothing happened; the cut one after the heal; no lost update anywhere', async () => {
    const names = Array.from({ length: OBJECTS }, (_, i) => `w-${i}`);
    for (const client of direct.values())
      for (const name of names)
        await client.create({ ...WIDGET, metadata: { name, namespace: NAMESPACE }, spec: { size: 1 } });
    const mark = await fleetAuditMark(fleet);
    const secrets = await fleet.host.createNamespace('fleet');
    await fleet.registerMembers({ namespace: secrets });

    const records = new FleetWidgetRecords();
    const manager = new Manager({
      client: host,
      metricsPort: 0,
      healthPort: await freePort(),
      fleet: { provider: kubeconfigSecrets({ client: host, namespace: secrets }) },
    });
    manager
      .fleetController('widget-status')
      .for<Widget>(WIDGET)
      .withOptions({ maxConcurrentReconciles: 4 })
      .complete(fleetWidgetReconciler(records, NAMESPACE));
    const stopManager = new AbortController();
    const running = manager.start(stopManager.signal);
    const stopChurn = new AbortController();
    let churn: Promise<unknown> | undefined;
    let row: Parameters<typeof recordChaosResult>[0] | undefined;
    try {
      // Every member converged once before the measurement starts.
      for (const [name, client] of direct) {
        const ms = await waitForConvergence({
          list: async () => (await client.list<Widget>(WIDGET, { namespace: NAMESPACE })).items,
          converged: (items) => items.length === OBJECTS && statusCurrent(items),
          sinceMs: Date.now(),
          boundMs: CONVERGENCE_BOUND_MS,
        });
        assert.notEqual(ms, null, `${name} never converged at the start`);
      }
      churn = Promise.all(
        [...direct].map(([cluster, client]) =>
          churnMember({
            cluster,
            client,
            namespace: NAMESPACE,
            names,
            periodMs: CHURN_PERIOD_MS,
            records,
            signal: stopChurn.signal,
          }),
        ),
      );
      const baselineFrom = Date.now();
      await sleep(PHASE_MS);
      const cutAt = Date.now();
      fleet.member(CUT).cutOff();
      await sleep(PHASE_MS);
      fleet.member(CUT).heal();
      const healedAt = Date.now();
      stopChurn.abort();
      await churn;
      const cutConvergedMs = await waitForConvergence({
        list: async () => (await direct.get(CUT)!.list<Widget>(WIDGET, { namespace: NAMESPACE })).items,
        converged: (items) => items.length === OBJECTS && statusCurrent(items),
        sinceMs: healedAt,
        boundMs: CONVERGENCE_BOUND_MS,
      });
      // The others' last writes settle too, so every latency of the fault phase is observed.
      for (const name of MEMBERS.filter((m) => m !== CUT)) {
        await waitForConvergence({
          list: async () => (await direct.get(name)!.list<Widget>(WIDGET, { namespace: NAMESPACE })).items,
          converged: (items) => statusCurrent(items),
          sinceMs: Date.now(),
          boundMs: CONVERGENCE_BOUND_MS,
        });
      }

      const notes: Record<string, number | string> = { phaseMs: PHASE_MS };
      let worstRatio = 0;
      for (const name of MEMBERS.filter((m) => m !== CUT)) {
        const base = records.latencies(name, baselineFrom, cutAt);
        const fault = records.latencies(name, cutAt, healedAt);
        const p99Base = percentile(base.ms, 99);
        const p99Fault = percentile(fault.ms, 99);
        notes[`${name} p99 baseline ms`] = p99Base;
        notes[`${name} p99 during cut ms`] = p99Fault;
        notes[`${name} writes baseline/cut`] = `${base.ms.length}/${fault.ms.length}`;
        notes[`${name} unobserved`] = base.unobserved + fault.unobserved;
        worstRatio = Math.max(worstRatio, p99Fault / p99Base);
      }
      notes['worst p99 ratio (cut / baseline)'] = Number(worstRatio.toFixed(2));
      notes['cut member converged after heal ms'] = cutConvergedMs ?? 'not within bound';

      const audit = await auditFleet({
        fleet,
        resource: { group: 'example.com', plural: 'widgets' },
        since: mark,
        writes: Object.fromEntries(records.writes),
      });
      const apiWrites = [...records.writes.values()].reduce((n, w) => n + w.length, 0);
      const passed =
        cutConvergedMs !== null &&
        worstRatio <= 2 &&
        audit.lostUpdates === 0 &&
        audit.outOfOrderStatusWrites === 0 &&
        audit.historyGaps === 0;
      row = {
        scenario: 'fleet: one member of three cut off',
        faults: [`cut off member ${CUT} from the operator ${PHASE_MS} ms`],
        objects: OBJECTS * MEMBERS.length,
        convergenceMs: cutConvergedMs,
        backupsStarted: null,
        backupsCompleted: null,
        apiWrites,
        reconcileOverlaps: null,
        lostUpdates: audit.lostUpdates,
        outOfOrderStatusWrites: audit.outOfOrderStatusWrites,
        passed,
        notes,
      };
      console.log(JSON.stringify(notes, null, 2));
      await recordChaosResult(row);
      assert.notEqual(cutConvergedMs, null, 'the cut member converged within the bound after the heal');
      assert.ok(worstRatio <= 2, `the other members' p99 stayed within 2× the baseline: ${JSON.stringify(notes)}`);
      assert.equal(audit.lostUpdates, 0, formatFleetAuditReport(audit));
      assert.equal(audit.outOfOrderStatusWrites, 0, formatFleetAuditReport(audit));
      assert.equal(audit.historyGaps, 0, formatFleetAuditReport(audit));
    } finally {
      stopChurn.abort();
      await churn;
      stopManager.abort();
      await running;
    }
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
