/**
 * The Database reconciler: level-triggered, idempotent, its owned objects declared as dependents
 * (what each is built from, what it needs first, when it is ready), status from what it observes,
 * and a backup-before-delete finalizer that never blocks a worker. One instance serves the host
 * cluster and every fleet member: it reads and writes through the client of the request's cluster
 * (`ctx.cluster.client`) and records Events there.
 */
import { randomBytes } from 'node:crypto';
import {
  TerminalError,
  createOrPatch,
  getCondition,
  handleFinalizer,
  isAlreadyExists,
  isConditionTrue,
  requeueAfter,
  retryOnConflict,
  setCondition,
  writeStatus,
  type Client,
  type Clock,
  type ClusterView,
  type ConditionInput,
  type EventRecorder,
  type Logger,
  type ObjectReconcileContext,
  type ObjectReconciler,
  type ReconcileRequest,
  type Result,
} from 'operator-runtime';
import {
  dependentsOf,
  setKstatusConditions,
  type Dependents,
  type DependentsOutcome,
  type DependentWriteArgs,
  type MetaObject,
  type KstatusProgress,
} from 'operator-runtime/helpers';
import type { ControllerDeclaration } from 'operator-runtime/manager';
import type { BackupService } from './backup-client.js';
import { describeBackupFailure, resolveBackupEndpoint, type BackupEndpointPolicy } from './backup-endpoints.js';
import {
  DATABASE,
  FIELD_MANAGER,
  FINALIZER,
  PORTS,
  SUPPORTED_VERSIONS,
  type Database,
  type DatabaseStatus,
} from './database.js';
import { overlay } from './overlay.js';
import {
  CONFIG_MAP,
  SECRET,
  SERVICE,
  STATEFUL_SET,
  desiredConfigMap,
  desiredSecret,
  desiredService,
  desiredStatefulSet,
  names,
} from './resources.js';

export const CONTROLLER_NAME = 'database';
/** How often a running backup is polled (the worker is free in between). @defaultValue 1000 */
export const DEFAULT_BACKUP_POLL_MS = 1000;

export interface DatabaseReconcilerOptions {
  /**
   * Where Events about a Database in `cluster` go: the manager's `EventRecorder` for the host
   * cluster, a member's (`manager.memberEventRecorder(…).in(cluster)`) for a fleet member.
   */
  recorderFor(cluster: ClusterView): Pick<EventRecorder, 'event'>;
  readonly backups: BackupService;
  /** Used when a Database does not name its own backup endpoint. */
  readonly defaultBackupEndpoint: string;
  /** Endpoints a Database may name instead (by origin); any other is refused without a request. @defaultValue none */
  readonly allowedBackupEndpoints?: readonly string[];
  readonly backupPollMs?: number;
  /**
   * The manager's clock, for the waits between conflict retries and the conditions' times: on a
   * fake clock (tests, the simulation) a real-time wait would stall the reconcile while fake time runs on.
   * @defaultValue the real clock
   */
  readonly clock?: Clock;
}

/** One reconcile: the Database, and the cluster it lives in (its client reads from that cluster's cache). */
interface Ctx {
  readonly db: Database;
  readonly client: Client;
  readonly recorder: Pick<EventRecorder, 'event'>;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/**
 * What a Database owns, in the order it needs them: the credentials Secret, ConfigMap and Service
 * (independent of each other), then the StatefulSet that reads the Secret, mounts the ConfigMap and
 * is named by the Service, ready when its replicas are. Each one's state is a condition on the
 * Database (`SecretReady`, `ConfigMapReady`, `ServiceReady`, `StatefulSetReady`). Deletion is
 * the garbage collector's, after the finalizer's backup: the owner references are the controller's.
 */
function databaseDependents(clock: Clock | undefined) {
  return dependentsOf(DATABASE, {
    fieldManager: FIELD_MANAGER,
    // The controller owns StatefulSets: their status changes queue the Database, no polling.
    notReadyRequeueAfterMs: false,
  })
    .add({
      name: 'secret',
      kind: SECRET,
      desired: (db) => desiredSecret(db),
      // Created once with a generated password, never regenerated while it exists, never logged.
      write: async ({ client, desired, current, fieldManager, signal }) => {
        if (current) return { operation: 'unchanged', object: current };
        const password = randomBytes(18).toString('base64url');
        const secret = { ...desired, stringData: { ...desired.stringData, password } };
        try {
          return { operation: 'created', object: await client.create(secret, { signal, fieldManager }) };
        } catch (err) {
          if (!isAlreadyExists(err)) throw err; // our cache was behind: it exists, as it should
          return { operation: 'unchanged', object: desired };
        }
      },
    })
    .add({ name: 'configMap', kind: CONFIG_MAP, desired: (db) => desiredConfigMap(db), write: patchOwned(clock) })
    .add({ name: 'service', kind: SERVICE, desired: (db) => desiredService(db), write: patchOwned(clock) })
    .add({
      name: 'statefulSet',
      kind: STATEFUL_SET,
      dependsOn: ['secret', 'configMap', 'service'],
      desired: (db) => desiredStatefulSet(db),
      // selector, serviceName and volumeClaimTemplates are immutable: after creation only these are ours.
      write: patchOwned(clock, (sts) => ({
        metadata: { labels: sts.metadata?.labels, ownerReferences: sts.metadata?.ownerReferences },
        spec: { replicas: sts.spec?.replicas, template: sts.spec?.template },
      })),
      readyWhen: (sts, db) => {
        const ready = sts.status?.readyReplicas ?? 0;
        return {
          ready: ready === db.spec.replicas && (sts.status?.observedGeneration ?? 0) >= (sts.metadata?.generation ?? 1),
          message: `${ready}/${db.spec.replicas} replicas ready`,
        };
      },
    })
    .build();
}

/**
 * A dependent written with createOrPatch: created as desired, then only `managed(desired)` (all of
 * it by default) is overlaid onto what the server has — server defaults and others' fields stay, a
 * field of ours someone edited is patched back, nothing is sent when nothing drifted. Not a
 * server-side apply: an apply cannot take back a list entry another manager added (a hand-edited
 * Service port would stay beside ours, and the server refuses two ports of one name).
 */
function patchOwned<T extends MetaObject>(clock: Clock | undefined, managed: (desired: T) => object = (d) => d) {
  return ({ client, desired, fieldManager, signal }: DependentWriteArgs<T>) => {
    const fields = stripUndefined(managed(desired));
    const mutate = (obj: T) => void (obj.metadata?.resourceVersion && overlay(obj, fields));
    return retryOnConflict(() => createOrPatch(client, desired, mutate, { signal, fieldManager }), { signal, clock });
  };
}

type DatabaseDependents = ReturnType<typeof databaseDependents>;
type Outcome = DatabaseDependents extends Dependents<Database, infer D> ? DependentsOutcome<Database, D> : never;

/** Reconciles a Database key; its context's `get()` is typed by the controller's `.for(DATABASE)`. */
export class DatabaseReconciler implements ObjectReconciler<Database> {
  private readonly dependents: DatabaseDependents;
  private readonly endpoints: BackupEndpointPolicy;

  constructor(private readonly options: DatabaseReconcilerOptions) {
    this.endpoints = {
      defaultEndpoint: options.defaultBackupEndpoint,
      allowedEndpoints: options.allowedBackupEndpoints ?? [],
    };
    this.dependents = databaseDependents(options.clock);
  }

  async reconcile(_request: ReconcileRequest, ctx: ObjectReconcileContext<Database>): Promise<Result | void> {
    const { signal, log } = ctx;
    // Reads from the cluster's cache, writes to its API server: a no-op reconcile costs no request.
    const { client } = ctx.cluster;
    const recorder = this.options.recorderFor(ctx.cluster);
    // The Database as the cache holds it now (level-triggered: not the event that queued the key).
    const current = await ctx.get();
    if (!current) return; // deleted; owned objects go with it (garbage collector)
    const step = await handleFinalizer(client, current, {
      name: FINALIZER,
      signal,
      cleanup: (obj) => this.backupBeforeDelete({ db: obj, client, recorder, signal, log }),
      ...(this.options.clock ? { retry: { clock: this.options.clock } } : {}),
    });
    if (step.kind === 'stop') return step.result;
    const db = step.object;

    const supported = SUPPORTED_VERSIONS[db.spec.engine];
    if (!supported.includes(db.spec.version)) {
      // The schema cannot know which versions we run: report it, do not retry until the spec changes.
      // Stalled (kstatus): retrying cannot help, only a spec change can; Flux and Argo CD say Failed/Degraded.
      await this.writeStatus({ db, client, recorder, signal, log }, { phase: 'Degraded' }, [], {
        state: 'Stalled',
        reason: 'UnsupportedVersion',
        message: `${db.spec.engine} ${db.spec.version} is not supported (supported: ${supported.join(', ')})`,
      });
      recorder.event(db, 'Warning', 'UnsupportedVersion', `${db.spec.engine} ${db.spec.version} is not supported`);
      throw new TerminalError(`unsupported version ${db.spec.engine} ${db.spec.version}`);
    }

    const report = await this.dependents.reconcile(client, db, {
      signal,
      logger: log,
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      onWrite: (write) => {
        if (write.name !== 'secret') return;
        // A Secret created for a Database that was provisioned before lost its password.
        if (isConditionTrue(db.status?.conditions, 'Provisioned'))
          recorder.event(
            db,
            'Warning',
            'SecretRecreated',
            `Secret ${names.secret(db)} was missing and has been recreated with a new password`,
          );
        else recorder.event(db, 'Normal', 'SecretCreated', `Secret ${names.secret(db)} created`);
      },
      status: (outcome) => statusFields(db, outcome),
      conditions: (outcome) => this.conditions(db, outcome),
    });
    return report.result;
  }

  /** `Provisioned` once every owned object exists, and `BackupEndpointAllowed` (see below). */
  private conditions(db: Database, outcome: Outcome): ConditionInput[] {
    const conditions: ConditionInput[] = [];
    if (outcome.states.every((s) => s.state === 'ready' || s.state === 'notReady'))
      conditions.push({
        type: 'Provisioned',
        status: 'True',
        reason: 'ResourcesCreated',
        message: 'Secret, ConfigMap, Service and StatefulSet exist',
      });
    // Said while the Database lives, not first at deletion, so its owner can fix the spec in time.
    const backupEndpoint = this.backupEndpointCondition(db);
    if (backupEndpoint) conditions.push(backupEndpoint);
    return conditions;
  }

  /** The finalizer's cleanup: backup first, polled with requeueAfter so no worker waits on it. */
  private async backupBeforeDelete(ctx: Ctx): Promise<Result | void> {
    const { signal, log, recorder } = ctx;
    let { db } = ctx;
    if (db.spec.backup?.enabled === false) return;
    if (db.status?.phase !== 'Deleting') db = await this.writeStatus(ctx, { phase: 'Deleting' }, []);
    const resolved = resolveBackupEndpoint(db, this.endpoints);
    if (!resolved.allowed) {
      // No request is made. The finalizer stays until the spec names an allowed endpoint (or
      // none, or disables backup): not retried, since only a spec change can help.
      await this.writeStatus(
        ctx,
        {},
        [{ type: 'BackedUp', status: 'False', reason: 'EndpointNotAllowed', message: resolved.message }],
        { state: 'Stalled', reason: 'EndpointNotAllowed', message: resolved.message },
      );
      recorder.event(db, 'Warning', 'EndpointNotAllowed', resolved.message);
      throw new TerminalError('spec.backup.endpoint is not allowed');
    }
    let backup;
    try {
      backup = await this.options.backups.backup(resolved.endpoint, db, signal);
    } catch (err) {
      // Status and Events are tenant-readable: codes only, never what the service said.
      const message = describeBackupFailure(err);
      await this.writeStatus(ctx, {}, [{ type: 'BackedUp', status: 'False', reason: 'BackupFailed', message }]).catch(
        () => undefined,
      );
      recorder.event(db, 'Warning', 'BackupFailed', `backup before delete failed: ${message}`);
      throw err; // keeps the finalizer; the workqueue backs off
    }
    if (backup.state !== 'completed') {
      log.info({ backup: backup.id }, 'backup running');
      if (getCondition(db.status?.conditions, 'BackedUp')?.reason !== 'BackupRunning') {
        await this.writeStatus(ctx, {}, [
          { type: 'BackedUp', status: 'False', reason: 'BackupRunning', message: `backup ${backup.id} running` },
        ]);
      }
      return requeueAfter(this.options.backupPollMs ?? DEFAULT_BACKUP_POLL_MS);
    }
    await this.writeStatus(ctx, {}, [
      { type: 'BackedUp', status: 'True', reason: 'BackupCompleted', message: `backup ${backup.id} completed` },
    ]);
    recorder.event(db, 'Normal', 'BackedUp', `backup ${backup.id} completed; removing finalizer`);
    log.info({ backup: backup.id }, 'backup completed');
  }

  /** `BackupEndpointAllowed` once a Database names a backup endpoint (False when refused); nothing otherwise. */
  private backupEndpointCondition(db: Database): ConditionInput | undefined {
    const resolved = resolveBackupEndpoint(db, this.endpoints);
    if (!resolved.allowed)
      return {
        type: 'BackupEndpointAllowed',
        status: 'False',
        reason: 'EndpointNotAllowed',
        message: resolved.message,
      };
    if (db.spec.backup?.endpoint || getCondition(db.status?.conditions, 'BackupEndpointAllowed')) {
      return {
        type: 'BackupEndpointAllowed',
        status: 'True',
        reason: db.spec.backup?.endpoint ? 'EndpointAllowed' : 'DefaultEndpoint',
        message: db.spec.backup?.endpoint
          ? 'spec.backup.endpoint is allowed'
          : "the operator's backup endpoint is used",
      };
    }
    return undefined;
  }

  /**
   * Merges fields and conditions into the status, and with `progress` the kstatus conditions
   * (Ready, Reconciling, Stalled); every condition and status.observedGeneration carry the
   * generation this reconcile read. `writeStatus` re-reads and recomputes on conflict, sends
   * nothing when unchanged, and refuses to write over a status that observed a newer generation
   * (that generation's reconcile owns it). Returns the Database as last read or written.
   */
  private async writeStatus(
    ctx: Ctx,
    fields: Partial<DatabaseStatus>,
    conditions: ConditionInput[],
    progress?: KstatusProgress,
  ): Promise<Database> {
    const { db, signal } = ctx;
    const observedGeneration = db.metadata.generation;
    const written = await writeStatus(
      ctx.client,
      db,
      (latest) => {
        let next = latest.status?.conditions ?? [];
        for (const c of conditions) next = setCondition(next, { ...c, observedGeneration });
        if (progress && observedGeneration !== undefined)
          next = setKstatusConditions(next, progress, { observedGeneration });
        return { ...latest.status, ...fields, conditions: next };
      },
      { signal, ...(this.options.clock ? { clock: this.options.clock } : {}) },
    );
    if (written.outcome === 'superseded')
      ctx.log.info(
        { generation: written.generation, observedGeneration: written.observedGeneration },
        'status not written: the Database changed since this reconcile read it, and a newer status is there',
      );
    return written.object;
  }
}

/** Phase and replicas from the StatefulSet as this reconcile left it (kept as they were when it was not reached). */
function statusFields(db: Database, outcome: Outcome): Partial<DatabaseStatus> {
  const endpoint = `${names.service(db)}.${db.metadata.namespace}.svc:${PORTS[db.spec.engine]}`;
  const sts = outcome.object('statefulSet');
  if (!sts) return { endpoint };
  const ready = outcome.states.find((s) => s.name === 'statefulSet')?.state === 'ready';
  return { phase: ready ? 'Ready' : 'Provisioning', readyReplicas: sts.status?.readyReplicas ?? 0, endpoint };
}

/**
 * What the Database controller owns and writes, declared once for the host's controller and the
 * fleet's (one builder for both). With the kinds it watches, config/rbac.yaml is generated from
 * these writes (docs/rbac.md), and rbac-minimal.int.test.ts shows each resulting rule is needed.
 */
export function declareDatabaseController<B extends ControllerDeclaration>(builder: B): B {
  return builder
    .owns(SECRET)
    .owns(CONFIG_MAP)
    .owns(SERVICE)
    .owns(STATEFUL_SET)
    .writes(DATABASE, ['patch']) // the finalizer: handleFinalizer merge-patches metadata.finalizers
    .writes(DATABASE, ['patch'], { subresource: 'status' }) // writeStatus
    .writes(SECRET, ['create']) // created once, never patched: its password is never regenerated
    .writes(CONFIG_MAP, ['create', 'patch']) // createOrPatch
    .writes(SERVICE, ['create', 'patch'])
    .writes(STATEFUL_SET, ['create', 'patch']);
}

/** The desired object as JSON would carry it (no undefined fields), to overlay onto what the server has. */
function stripUndefined(value: object): object {
  return JSON.parse(JSON.stringify(value));
}

export { CONFIG_MAP, SECRET, SERVICE, STATEFUL_SET };
