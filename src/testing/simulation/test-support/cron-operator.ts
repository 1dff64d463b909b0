/**
 * A time-driven operator written the way a CronJob user writes one, in a different style from the
 * widget operator: no finalizer, no external record, work that comes from the clock rather than
 * from the user's changes. A CronTask (`spec.intervalSeconds`, `command`, `historyLimit`,
 * `suspend`) gets one run — a ConfigMap `<task>-<slot>` owned by it — per interval slot (slots are
 * multiples of the interval since the epoch), keeps the newest `historyLimit` runs, records
 * `status.lastScheduleTime`, and requeues itself for the next slot. A slot missed while no process
 * was at work is skipped, as CronJob skips missed schedules: which runs exist at the end depends on
 * the faults, so the end-state comparison leaves runs to the invariants.
 *
 * Planted bugs:
 * - `requeue-in-seconds`: the requeue delay is computed in seconds and passed as milliseconds: at
 *   steady state the task is reconciled every few milliseconds (a hot loop);
 * - `duplicate-run`: decides from the cached list of runs whether the slot's run exists, and creates
 *   it under a generated name: a cache behind the store creates a second run for one slot.
 */
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { isAlreadyExists, isNotFound } from '../../../client/api-error.js';
import type { Client } from '../../../client/contracts.js';
import { kind } from '../../../client/kind.js';
import { kinds } from '../../../client/kinds.js';
import type { Clock } from '../../../core/clock.js';
import type { KubeObject } from '../../../core/object-key.js';
import { requeueAfter, type Result } from '../../../core/result.js';
import { patchStatus } from '../../../helpers/status.js';
import { Manager } from '../../../manager/manager.js';
import { DEFAULT_END_STATE_IGNORED_KINDS } from '../normalize-object.js';
import type { KindRegistration } from '../../fake-client/kind-registry.js';
import type { Scenario } from '../scenario.js';
import type { RunRecord } from '../simulation-records.js';
import type { OperatorSetup, SimulationOptions } from '../simulate.js';

export interface CronTask extends KubeObject {
  metadata: NonNullable<KubeObject['metadata']> & { name: string; namespace: string };
  spec: { intervalSeconds: number; command: 'backup' | 'report' | 'cleanup'; historyLimit?: number; suspend?: boolean };
  status?: { observedGeneration?: number; lastScheduleTime?: string };
}

export const CRON_TASK = kind<CronTask>('batch.example.com/v1', 'CronTask');
export const TASK_LABEL = 'batch.example.com/task';
const DEFAULT_HISTORY_LIMIT = 2;

export const CRON_TASK_KIND: KindRegistration = {
  apiVersion: CRON_TASK.apiVersion,
  kind: CRON_TASK.kind,
  plural: 'crontasks',
  statusSubresource: true,
  schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['intervalSeconds', 'command'],
        properties: {
          intervalSeconds: { type: 'integer', minimum: 5, maximum: 30 },
          command: { type: 'string', enum: ['backup', 'report', 'cleanup'] },
          historyLimit: { type: 'integer', minimum: 1, maximum: 3 },
          suspend: { type: 'boolean' },
        },
      },
      status: {
        type: 'object',
        properties: { observedGeneration: { type: 'integer' }, lastScheduleTime: { type: 'string' } },
      },
    },
  },
};

export type CronBug = 'requeue-in-seconds' | 'duplicate-run';

export function cronOperator(bug?: CronBug): OperatorSetup {
  return ({ client, clock, logger, registry }) => {
    const manager = new Manager({ client, clock, logger, registry, metricsPort: 0, healthPort: 0 });
    const reconciler = new CronReconciler(manager.client, clock, bug);
    manager
      .controller('crontask')
      .for(CRON_TASK)
      .owns(kinds.ConfigMap)
      .complete(async (_request, ctx) => reconciler.reconcile(await ctx.get()));
    return manager;
  };
}

class CronReconciler {
  constructor(
    private readonly client: Client,
    private readonly clock: Clock,
    private readonly bug: CronBug | undefined,
  ) {}

  async reconcile(read: CronTask | undefined): Promise<Result | void> {
    if (!read || read.metadata.deletionTimestamp) return;
    let task = read;
    const { name, namespace } = task.metadata;
    const intervalMs = task.spec.intervalSeconds * 1_000;
    const now = this.clock.now();
    const slotMs = Math.floor(now / intervalMs) * intervalMs;
    const runs = (
      await this.client.list<ConfigMap>(kinds.ConfigMap, { namespace, labelSelector: `${TASK_LABEL}=${name}` })
    ).items;
    const last = task.status?.lastScheduleTime ? Date.parse(task.status.lastScheduleTime) : -Infinity;
    let lastScheduleTime = task.status?.lastScheduleTime;
    if (!task.spec.suspend && last < slotMs) {
      const slot = String(slotMs / 1_000);
      const run: ConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          ...(this.bug === 'duplicate-run' ? { generateName: `${name}-` } : { name: `${name}-${slot}` }),
          namespace,
          labels: { [TASK_LABEL]: name },
          ownerReferences: [
            { apiVersion: CRON_TASK.apiVersion, kind: CRON_TASK.kind, name, uid: task.metadata.uid!, controller: true },
          ],
        },
        data: { command: task.spec.command, slot },
      };
      lastScheduleTime = new Date(slotMs).toISOString();
      if (this.bug === 'duplicate-run') {
        if (!runs.some((r) => r.data?.slot === slot)) runs.push(await this.client.create(run));
      } else {
        // At most once per slot: the slot is claimed in status first, under the resourceVersion read
        // (a stale view conflicts and retries from the present), then run under a name the slot
        // decides (a second create is refused). A crash in between skips the slot, as a missed schedule.
        task = (await patchStatus(this.client, task, { lastScheduleTime })).object;
        try {
          runs.push(await this.client.create(run));
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      }
    }
    const keep = task.spec.historyLimit ?? DEFAULT_HISTORY_LIMIT;
    const old = runs.sort((a, b) => Number(b.data?.slot) - Number(a.data?.slot)).slice(keep);
    for (const r of old) {
      try {
        await this.client.delete(kinds.ConfigMap, r.metadata!.name!, { namespace });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    await patchStatus(this.client, task, lastScheduleTime ? { lastScheduleTime } : {});
    if (task.spec.suspend) return;
    const untilNextMs = slotMs + intervalMs - now;
    return requeueAfter(this.bug === 'requeue-in-seconds' ? Math.ceil(untilNextMs / 1_000) : untilNextMs);
  }
}

function task(name: string, spec: CronTask['spec']): CronTask {
  return { ...CRON_TASK, metadata: { name, namespace: 'default' }, spec };
}
const ref = (name: string) => ({ ...CRON_TASK, namespace: 'default', name });

/** A natural scenario: tasks created, rescheduled, suspended, deleted, 3 s apart (slots are 5–30 s). */
export const CRON_SCENARIO: Scenario = [
  { type: 'create', object: task('nightly', { intervalSeconds: 5, command: 'backup' }) },
  { type: 'create', object: task('report', { intervalSeconds: 10, command: 'report', historyLimit: 1 }) },
  { type: 'patch', target: ref('nightly'), patch: { spec: { intervalSeconds: 7 } }, afterMs: 3_000 },
  {
    type: 'create',
    object: task('sweep', { intervalSeconds: 6, command: 'cleanup', historyLimit: 3 }),
    afterMs: 3_000,
  },
  { type: 'patch', target: ref('report'), patch: { spec: { suspend: true } }, afterMs: 3_000 },
  { type: 'delete', target: ref('sweep'), afterMs: 6_000 },
  { type: 'patch', target: ref('nightly'), patch: { spec: { historyLimit: 1 } }, afterMs: 3_000 },
];

/**
 * What a CronTask user asks of the end state: one run per slot, no more runs than the history
 * limit, a live unsuspended task's newest run no older than two intervals (a slot skipped by a
 * crash, plus a second for the reconcile to land), no run of a task that is gone; and over the whole run, no slot run twice.
 */
export function cronInvariants(objects: readonly KubeObject[], run: Pick<RunRecord, 'history' | 'endMs'>): string[] {
  const nowMs = Date.UTC(2026, 0, 1) + (run.endMs ?? 0);
  const tasks = new Map(
    (objects.filter((o) => o.kind === CRON_TASK.kind) as CronTask[]).map((t) => [t.metadata.name, t]),
  );
  const runs = objects.filter((o) => o.kind === 'ConfigMap' && o.metadata?.labels?.[TASK_LABEL]) as ConfigMap[];
  const problems: string[] = [];
  for (const r of runs) {
    const owner = r.metadata!.labels![TASK_LABEL]!;
    if (!tasks.has(owner)) problems.push(`run ${r.metadata!.name} outlived its CronTask ${owner}`);
  }
  // Over the whole run, not only the end: the history limit prunes a duplicate soon after.
  const bySlot = new Map<string, string[]>();
  for (const created of createdRuns(run.history)) {
    const id = `${created.metadata!.labels![TASK_LABEL]} slot ${created.data?.slot}`;
    bySlot.set(id, [...(bySlot.get(id) ?? []), created.metadata!.name!]);
  }
  for (const [id, names] of bySlot)
    if (names.length > 1)
      problems.push(`${id} ran ${names.length} times (${names.sort().join(', ')}): one run per slot`);
  for (const t of tasks.values()) {
    const mine = runs.filter((r) => r.metadata?.labels?.[TASK_LABEL] === t.metadata.name);
    const limit = t.spec.historyLimit ?? DEFAULT_HISTORY_LIMIT;
    if (mine.length > limit)
      problems.push(`CronTask ${t.metadata.name} keeps ${mine.length} runs (historyLimit ${limit})`);
    if (t.spec.suspend) continue;
    const newest = Math.max(...mine.map((r) => Number(r.data?.slot) * 1_000));
    // Two intervals: a crash between claiming a slot and running it skips that slot.
    if (!(nowMs - newest <= 2 * t.spec.intervalSeconds * 1_000 + 1_000))
      problems.push(
        `CronTask ${t.metadata.name} has no run for its last slot (newest: ${mine.length ? new Date(newest).toISOString() : 'none'})`,
      );
  }
  return problems;
}

/** Every run created during the simulation (creates in the store's history: version 1 of a key). */
function createdRuns(history: RunRecord['history']): ConfigMap[] {
  return history.flatMap((e) => {
    if (e.type !== 'PUT' || e.kv.version !== 1) return [];
    const obj = JSON.parse(Buffer.from(e.kv.value).toString('utf8')) as ConfigMap;
    return obj.kind === 'ConfigMap' && obj.metadata?.labels?.[TASK_LABEL] ? [obj] : [];
  });
}

/** The simulation of the CronTask operator (with `bug`, or the correct one). */
export function cronSimulation(bug?: CronBug): SimulationOptions {
  return {
    setup: cronOperator(bug),
    scenario: CRON_SCENARIO,
    primaryKinds: [CRON_TASK],
    ownedKinds: [kinds.ConfigMap],
    cluster: { kinds: [CRON_TASK_KIND] },
    // Runs depend on when faults let the operator work (a missed slot is skipped): the invariants judge them.
    endStateIgnoredKinds: [...DEFAULT_END_STATE_IGNORED_KINDS, 'ConfigMap'],
    // Scheduled work goes on in the quiet window: a run and a status write per slot, and the reconciles they cause.
    maxQuietWrites: Number.POSITIVE_INFINITY,
    maxQuietReconcilesPerKey: 20,
    invariants: cronInvariants,
  };
}
