/**
 * A small operator for evaluating the simulation, in a correct version and one single-bug variant
 * per bug class (the classes of issue 28). A Widget (`spec.value`) gets a child ConfigMap
 * `<name>-config` holding the value, owned by the Widget, and a Record in the `records` namespace
 * standing for something outside the cluster (no owner reference: nothing collects it), created
 * while the Widget lives and deleted, behind a finalizer, when it goes. Status carries
 * `observedGeneration`. Leader election on a Lease, with short timings.
 *
 * The variants, each a real bug of the kind Sieve and Acto report:
 * - `stale-spec-write`: "normalizes" the spec by merge-patching it from the cached copy: acts on a
 *   stale read, writing an old spec over the user's newer one.
 * - `unchecked-create`: decides to create the child from its own status marker instead of looking,
 *   and fails on AlreadyExists: a crash between create and status write wedges it for ever.
 * - `early-finalizer`: removes the finalizer before deleting the Record: a crash in between leaks it.
 * - `status-without-version`: writes status computed from the cached object without its
 *   resourceVersion: a stale cache writes an older observedGeneration over a newer one.
 * - `no-owner-reference`: creates the child without an owner reference, so a drift or deletion of
 *   the child never reaches the Widget's reconcile (and nothing collects it).
 * - `requeue-forever`: asks to be requeued after every reconcile, with nothing pending.
 * - `ignores-fencing`: calls a slow external system (2 s) without the reconcile's signal, so a
 *   leader that lost its Lease goes on reconciling after the new leader started (the correct
 *   operator with the same slow call passing the signal is `widgetSimulation(undefined, { slowExternalMs })`).
 */
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { isAlreadyExists, isNotFound } from '../../../client/api-error.js';
import type { Client } from '../../../client/contracts.js';
import { kind } from '../../../client/kind.js';
import { kinds } from '../../../client/kinds.js';
import { sleep } from '../../../core/abort.js';
import type { Clock } from '../../../core/clock.js';
import { requeueAfter, type Result } from '../../../core/result.js';
import type { KubeObject } from '../../../core/object-key.js';
import { patchStatus } from '../../../helpers/status.js';
import { LeaderElector } from '../../../leader-election/leader-elector.js';
import { Manager } from '../../../manager/manager.js';
import type { KindRegistration } from '../../fake-client/kind-registry.js';
import type { Scenario } from '../scenario.js';
import type { OperatorSetup, SimulationOptions } from '../simulate.js';

export interface Widget extends KubeObject {
  metadata: NonNullable<KubeObject['metadata']> & { name: string; namespace: string };
  spec: { value: string; size?: number };
  status?: { observedGeneration?: number; configMap?: string };
}

export const WIDGET = kind<Widget>('example.com/v1', 'Widget');
export const RECORD = kind<KubeObject & { data?: { widget?: string } }>('example.com/v1', 'Record');
export const FINALIZER = 'example.com/record';
export const RECORDS_NAMESPACE = 'records';
const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'widget-operator' };

export const WIDGET_KINDS: readonly KindRegistration[] = [
  {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    plural: 'widgets',
    statusSubresource: true,
    schema: {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { value: { type: 'string' }, size: { type: 'integer' } },
        },
        status: {
          type: 'object',
          properties: { observedGeneration: { type: 'integer' }, configMap: { type: 'string' } },
        },
      },
    },
  },
  {
    apiVersion: 'example.com/v1',
    kind: 'Record',
    plural: 'records',
    schema: {
      type: 'object',
      properties: { data: { type: 'object', properties: { widget: { type: 'string' } } } },
    },
  },
];

export type WidgetBug =
  | 'stale-spec-write'
  | 'unchecked-create'
  | 'early-finalizer'
  | 'status-without-version'
  | 'no-owner-reference'
  | 'requeue-forever'
  | 'ignores-fencing';

export const WIDGET_BUGS: readonly WidgetBug[] = [
  'stale-spec-write',
  'unchecked-create',
  'early-finalizer',
  'status-without-version',
  'no-owner-reference',
  'requeue-forever',
  'ignores-fencing',
];

/** The slow external call of the `ignores-fencing` variant. */
export const SLOW_EXTERNAL_MS = 2_000;
/** The correct operator's external call takes no time. @defaultValue 0 */
export const DEFAULT_SLOW_EXTERNAL_MS = 0;

export interface WidgetOperatorOptions {
  /** Each reconcile first waits this long on the external system (with the reconcile's signal, unless the bug says otherwise). @defaultValue {@link DEFAULT_SLOW_EXTERNAL_MS} ({@link SLOW_EXTERNAL_MS} for ignores-fencing) */
  readonly slowExternalMs?: number;
}

/** The operator's manager set-up, as a user writes it (with one bug, or none). */
export function widgetOperator(bug?: WidgetBug, options: WidgetOperatorOptions = {}): OperatorSetup {
  const slowExternalMs =
    options.slowExternalMs ?? (bug === 'ignores-fencing' ? SLOW_EXTERNAL_MS : DEFAULT_SLOW_EXTERNAL_MS);
  return ({ client, clock, logger, registry, incarnation }) => {
    const elector = new LeaderElector({
      client,
      name: 'widget-operator',
      namespace: 'default',
      identity: `widget-operator-${incarnation}`,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
      clock,
      logger,
      registry,
    });
    const manager = new Manager({
      client,
      clock,
      logger,
      registry,
      leaderElection: elector,
      metricsPort: 0,
      healthPort: 0,
    });
    const reconciler = new WidgetReconciler(manager.client, manager.apiClient, bug, clock, slowExternalMs);
    manager
      .controller('widget')
      .for(WIDGET)
      .owns(kinds.ConfigMap)
      .complete((request, ctx) => reconciler.reconcile(ctx.get(), ctx.signal));
    return manager;
  };
}

class WidgetReconciler {
  constructor(
    private readonly client: Client,
    private readonly direct: Client,
    private readonly bug: WidgetBug | undefined,
    private readonly clock: Clock,
    private readonly slowExternalMs: number,
  ) {}

  async reconcile(read: Promise<Widget | undefined>, signal: AbortSignal): Promise<Result | void> {
    let w = await read;
    if (!w) return;
    // The external system answers slowly. Honouring the signal is fencing: a leader that lost its
    // Lease stops at once. The planted bug waits it out.
    if (this.slowExternalMs > 0)
      await sleep(this.clock, this.slowExternalMs, this.bug === 'ignores-fencing' ? undefined : signal);
    const { name, namespace } = w.metadata;
    if (w.metadata.deletionTimestamp !== undefined) {
      if (!(w.metadata.finalizers ?? []).includes(FINALIZER)) return;
      if (this.bug === 'early-finalizer') {
        await this.removeFinalizer(w);
        await this.deleteRecord(w);
      } else {
        await this.deleteRecord(w);
        await this.removeFinalizer(w);
      }
      return;
    }
    if (!(w.metadata.finalizers ?? []).includes(FINALIZER)) {
      w = await this.client.patch(
        WIDGET,
        name,
        {
          metadata: {
            resourceVersion: w.metadata.resourceVersion,
            finalizers: [...(w.metadata.finalizers ?? []), FINALIZER],
          },
        },
        { type: 'merge', namespace },
      );
    }
    if (this.bug === 'stale-spec-write') {
      // "Normalize" the spec from the cached copy, without a resourceVersion: a no-op on a fresh
      // cache, a revert of the user's change on a stale one.
      w = await this.client.patch(
        WIDGET,
        name,
        { spec: { value: w.spec.value, size: w.spec.size ?? 1 } },
        { type: 'merge', namespace },
      );
    }
    await this.ensureRecord(w);
    await this.ensureChild(w);
    const status = { configMap: `${name}-config` };
    if (this.bug === 'status-without-version') {
      const want = { ...status, observedGeneration: w.metadata.generation };
      if (w.status?.observedGeneration !== want.observedGeneration || w.status?.configMap !== want.configMap)
        await this.client.patchStatus(WIDGET, name, { status: want }, { namespace });
    } else {
      await patchStatus(this.client, w, status);
    }
    if (this.bug === 'requeue-forever') return requeueAfter(1_000);
  }

  private async ensureChild(w: Widget): Promise<void> {
    const { name, namespace } = w.metadata;
    const childName = `${name}-config`;
    const desired: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: childName,
        namespace,
        labels: MANAGED_BY,
        ...(this.bug === 'no-owner-reference'
          ? {}
          : {
              ownerReferences: [
                {
                  apiVersion: WIDGET.apiVersion,
                  kind: WIDGET.kind,
                  name,
                  uid: w.metadata.uid!,
                  controller: true,
                  blockOwnerDeletion: true,
                },
              ],
            }),
      },
      data: { value: w.spec.value },
    };
    if (this.bug === 'unchecked-create' && w.status?.configMap === undefined) {
      // Our own marker says "not created yet": create, and let any error (AlreadyExists too) retry.
      await this.client.create(desired);
      return;
    }
    let current: ConfigMap | undefined;
    try {
      current = await this.client.get<ConfigMap>(kinds.ConfigMap, childName, { namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (!current) {
      await this.client.create(desired); // AlreadyExists (a cache behind): retried with backoff
      return;
    }
    if (current.data?.value !== w.spec.value)
      await this.client.patch(
        kinds.ConfigMap,
        childName,
        { data: { value: w.spec.value } },
        { type: 'merge', namespace },
      );
  }

  private recordName(w: Widget): string {
    return `${w.metadata.namespace}.${w.metadata.name}`;
  }

  /** Read directly (an external system has no cache), created once. */
  private async ensureRecord(w: Widget): Promise<void> {
    try {
      await this.direct.get(RECORD, this.recordName(w), { namespace: RECORDS_NAMESPACE });
      return;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    // Nothing collects a Record: create one only for a Widget that lives now, holding our finalizer
    // (a direct read). The simulation found the first version of this operator acting on a stale
    // cache here: restarted against a lagging view, it created a Record for a Widget already deleted.
    let live: Widget | undefined;
    try {
      live = await this.direct.get(WIDGET, w.metadata.name, { namespace: w.metadata.namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (
      !live ||
      live.metadata.uid !== w.metadata.uid ||
      live.metadata.deletionTimestamp !== undefined ||
      !(live.metadata.finalizers ?? []).includes(FINALIZER)
    )
      return;
    try {
      await this.direct.create({
        apiVersion: RECORD.apiVersion,
        kind: RECORD.kind,
        metadata: { name: this.recordName(w), namespace: RECORDS_NAMESPACE },
        data: { widget: w.metadata.name },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  private async deleteRecord(w: Widget): Promise<void> {
    try {
      await this.direct.delete(RECORD, this.recordName(w), { namespace: RECORDS_NAMESPACE });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private async removeFinalizer(w: Widget): Promise<void> {
    await this.client.patch(
      WIDGET,
      w.metadata.name,
      {
        metadata: {
          resourceVersion: w.metadata.resourceVersion,
          finalizers: (w.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
        },
      },
      { type: 'merge', namespace: w.metadata.namespace },
    );
  }
}

function widget(name: string, value: string): Widget {
  return { ...WIDGET, metadata: { name, namespace: 'default' }, spec: { value } };
}

const ref = (name: string) => ({ ...WIDGET, namespace: 'default', name });
const child = (name: string) => ({ ...kinds.ConfigMap, namespace: 'default', name: `${name}-config` });

/**
 * Creates, spec changes and deletes of Widgets, then a child drifting and one deleted by someone
 * else — each step 1 s of fake time after the one before.
 */
export const WIDGET_SCENARIO: Scenario = [
  { type: 'create', object: widget('w1', 'a') },
  { type: 'create', object: widget('w2', 'b') },
  { type: 'patch', target: ref('w1'), patch: { spec: { value: 'a2' } } },
  { type: 'create', object: widget('w3', 'c') },
  { type: 'patch', target: ref('w2'), patch: { spec: { value: 'b2' } } },
  { type: 'delete', target: ref('w2') },
  { type: 'create', object: widget('w4', 'd') },
  { type: 'patch', target: ref('w1'), patch: { spec: { value: 'a3' } } },
  { type: 'patch', target: ref('w3'), patch: { spec: { value: 'c2' } } },
  { type: 'delete', target: ref('w4') },
  { type: 'patch', target: child('w1'), patch: { data: { value: 'drifted' } } },
  { type: 'delete', target: child('w3') },
];

/** What must hold at the end: each live Widget's child and Record as its spec says, nothing left of deleted ones. */
export function widgetInvariants(objects: readonly KubeObject[]): string[] {
  const widgets = objects.filter((o) => o.kind === 'Widget') as Widget[];
  const live = new Map(widgets.filter((w) => !w.metadata.deletionTimestamp).map((w) => [w.metadata.name, w]));
  const configMaps = objects.filter((o) => o.kind === 'ConfigMap') as ConfigMap[];
  const records = objects.filter((o) => o.kind === 'Record');
  const problems: string[] = [];
  for (const w of live.values()) {
    const cm = configMaps.find((c) => c.metadata?.name === `${w.metadata.name}-config`);
    if (!cm) problems.push(`Widget ${w.metadata.name} has no ConfigMap`);
    else if (cm.data?.value !== w.spec.value)
      problems.push(
        `ConfigMap ${cm.metadata?.name} holds ${JSON.stringify(cm.data?.value)}, Widget ${w.metadata.name} says ${JSON.stringify(w.spec.value)}`,
      );
    if (!records.some((r) => r.metadata?.name === `default.${w.metadata.name}`))
      problems.push(`Widget ${w.metadata.name} has no Record`);
  }
  for (const cm of configMaps)
    if (
      !live.has((cm.metadata?.name ?? '').replace(/-config$/, '')) &&
      cm.metadata?.labels?.['app.kubernetes.io/managed-by']
    )
      problems.push(`ConfigMap ${cm.metadata?.name} outlived its Widget`);
  const widgetNames = new Set(widgets.map((w) => w.metadata.name));
  for (const r of records)
    if (!widgetNames.has((r.metadata?.name ?? '').replace(/^default\./, '')))
      problems.push(`Record ${r.metadata?.name} outlived its Widget (the cleanup behind the finalizer never ran)`);
  return problems;
}

/** The simulation of the widget operator (with `bug`, or the correct one). */
export function widgetSimulation(bug?: WidgetBug, options: WidgetOperatorOptions = {}): SimulationOptions {
  return {
    setup: widgetOperator(bug, options),
    scenario: WIDGET_SCENARIO,
    primaryKinds: [WIDGET],
    ownedKinds: [kinds.ConfigMap, RECORD],
    cluster: { kinds: WIDGET_KINDS },
    invariants: widgetInvariants,
  };
}
