/**
 * `kubeconfigSecrets`: member clusters from kubeconfig Secrets in one namespace of the host cluster,
 * selected by a label — the way cluster managers hand clusters out. multicluster-runtime's
 * kubeconfig provider selects `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"` (data key
 * `kubeconfig`); Cluster API writes one `<cluster>-kubeconfig` Secret per cluster with the
 * kubeconfig under the key `value` and the label `cluster.x-k8s.io/cluster-name: <cluster>`. Both
 * are a `labelSelector` and a `key` away: e.g. `{ labelSelector: 'cluster.x-k8s.io/cluster-name',
 * key: 'value' }`.
 *
 * - Only the selected Secrets are watched (a namespace-scoped, label-selected informer), so memory
 *   holds the member Secrets and nothing else.
 * - The cluster's name is the Secret's annotation `operator-runtime.io/cluster-name` when set, else
 *   the Secret's name; it must be a DNS label (Secret names may hold dots: annotate those). A
 *   cluster engaged from a Secret keeps it while it names the cluster: another Secret naming it is
 *   refused (a warn log, a Warning Event `ClusterNameTaken` on it, `fleet_provider_refused_total`)
 *   and takes the name once the first is gone; among Secrets none of which is engaged yet, the
 *   first by name wins.
 * - The cluster's labels are the Secret's labels minus the keys the selector tests (those are the
 *   same on every member and say nothing about it).
 * - The revision is the sha256 of the kubeconfig bytes: a resync, or a change to another data key or
 *   to annotations, engages nothing again; new bytes, or other labels, engage again. A Secret is
 *   decoded and hashed once per version (uid and resourceVersion), its bytes checked once per
 *   revision; the initial list is compared in one pass once the informer has synced.
 * - A Secret whose kubeconfig is missing or cannot be used is logged (namespace, name, data key and
 *   what is wrong, never the data), skipped and tried again when the Secret changes; a cluster
 *   engaged from an earlier good version stays engaged on it. A deleted Secret disengages its cluster.
 * - A kubeconfig from a Secret may not run exec plugins or read local files unless
 *   `allowExecAndFiles` (see `CheckKubeconfigOptions.allowExecAndFiles` for why).
 */
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { Registry } from 'prom-client';
import type { Creator, ListWatchClient, Patcher } from '../../client/contracts.js';
import type { KubeClientOptions } from '../../client/kube-client.js';
import type { Kubeconfig } from '../../client/kubeconfig.js';
import { clientListerWatcher } from '../../cache/client-lister-watcher.js';
import { SharedInformer } from '../../cache/informer.js';
import { formatLabelSelector, parseLabelSelector } from '../../cache/label-selector.js';
import type { ListerWatcher } from '../../cache/lister-watcher.js';
import { deletedObject, type Tombstone } from '../../cache/tombstone.js';
import { EventRecorder, RECORDER_PERMISSION } from '../../controller/event-recorder.js';
import type { Clock } from '../../core/clock.js';
import { InvalidOptionError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { keyOf } from '../../core/object-key.js';
import { omitUndefined } from '../../core/omit-undefined.js';
import type { PermissionRequirement } from '../../rbac/permission.js';
import { validateClusterName, type ClusterEvents, type ClusterProvider } from '../cluster-provider.js';
import { countRefusal } from '../fleet-metrics.js';
import {
  checkBase64KubeconfigSize,
  checkKubeconfig,
  kubeconfigMember,
  kubeconfigRevision,
} from './kubeconfig-member.js';

/** @defaultValue the selector of member Secrets: `operator-runtime.io/fleet-member=true`. */
export const DEFAULT_KUBECONFIG_SECRET_SELECTOR = 'operator-runtime.io/fleet-member=true';
/** @defaultValue the data key holding the kubeconfig (multicluster-runtime's too; Cluster API uses `value`). */
export const DEFAULT_KUBECONFIG_SECRET_KEY = 'kubeconfig';
/** Annotation naming the member cluster when the Secret's name should not (or cannot) be its name. */
export const CLUSTER_NAME_ANNOTATION = 'operator-runtime.io/cluster-name';

export interface KubeconfigSecretsOptions {
  /**
   * A client of the host cluster (the manager's API client). When it can `create` and `patch`, a
   * Secret refused because another holds its cluster's name gets a Warning Event saying so.
   */
  readonly client: ListWatchClient & Partial<Creator & Patcher>;
  /** The namespace the member Secrets live in. */
  readonly namespace: string;
  /** Which Secrets are members. @defaultValue {@link DEFAULT_KUBECONFIG_SECRET_SELECTOR} */
  readonly labelSelector?: string;
  /** The data key holding the kubeconfig. @defaultValue {@link DEFAULT_KUBECONFIG_SECRET_KEY} */
  readonly key?: string;
  /**
   * Let a Secret's kubeconfig run exec plugins and read the operator's local files. Only for
   * Secrets that nobody could write who may not also run code in the operator. @defaultValue false
   */
  readonly allowExecAndFiles?: boolean;
  /** Options of every member's `KubeClient` (see `KubeconfigMemberOptions.clientOptions`). */
  readonly clientOptions?: KubeClientOptions;
  /** Where `fleet_provider_refused_total` is counted (the manager's `registry`). @defaultValue none: not counted */
  readonly registry?: Registry;
  /** @defaultValue realClock */
  readonly clock?: Clock;
  /** @defaultValue silentLogger */
  readonly logger?: Logger;
}

const SECRET = { apiVersion: 'v1', kind: 'Secret' } as const;

/** A provider of the member clusters whose kubeconfigs are in the selected Secrets of `options.namespace`. */
export function kubeconfigSecrets(options: KubeconfigSecretsOptions): ClusterProvider {
  if (!options.namespace) throw new InvalidOptionError('namespace', 'must name the namespace of the member Secrets');
  const key = options.key ?? DEFAULT_KUBECONFIG_SECRET_KEY;
  if (!key) throw new InvalidOptionError('key', 'must name a data key');
  const selector = parseLabelSelector(options.labelSelector ?? DEFAULT_KUBECONFIG_SECRET_SELECTOR);
  const labelSelector = formatLabelSelector(selector);
  const selectorKeys = new Set(selector.requirements.map((r) => r.key));
  const description = `kubeconfig-secrets ${options.namespace}/${labelSelector || '<all>'}`;
  return {
    description,
    async start(signal: AbortSignal, events: ClusterEvents): Promise<void> {
      if (signal.aborted) return;
      await new SecretsRun({ ...options, key, labelSelector, selectorKeys }, signal, events).run();
    },
    requiredPermissions(): readonly PermissionRequirement[] {
      return [
        {
          resource: SECRET,
          verbs: ['list', 'watch'],
          namespace: options.namespace,
          reason: `fleet provider ${description}: member kubeconfigs`,
        },
        {
          ...RECORDER_PERMISSION,
          namespace: options.namespace,
          reason: `fleet provider ${description}: Events on member Secrets it refuses`,
        },
      ];
    },
  };
}

/** A usable kubeconfig of a Secret and the cluster it names. */
interface Claim {
  readonly cluster: string;
  readonly revision: string;
  readonly kubeconfig: Kubeconfig;
}

/** What the provider knows of one member Secret, as of the version (uid and resourceVersion) it read. */
interface SecretState {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly labelsKey: string;
  /** The cluster this Secret asks for: its kubeconfig now, else its last good one; none if it never had one. */
  readonly claim: Claim | undefined;
  /** The last usable kubeconfig: kept while a newer version is broken. */
  readonly lastGood: Claim | undefined;
  /** The last bytes checked (by revision) and what they gave, so bytes seen before are not checked again. */
  readonly checked:
    { readonly revision: string; readonly kubeconfig?: Kubeconfig; readonly problem?: string } | undefined;
  /** What is wrong with this version, logged once. */
  readonly problem: string | undefined;
}

interface Engaged {
  /** The Secret (namespace/name) the cluster is engaged from: it keeps the name while it claims it. */
  readonly secret: string;
  readonly revision: string;
  readonly labelsKey: string;
}

type RunOptions = KubeconfigSecretsOptions & {
  readonly key: string;
  readonly labelSelector: string;
  readonly selectorKeys: ReadonlySet<string>;
};

/** One `start()`: informer and state live and die with it. */
class SecretsRun {
  private readonly logger: Logger;
  private readonly informer: SharedInformer<Secret>;
  private readonly recorder: EventRecorder | undefined;
  /** Per Secret (namespace/name), what its last version read gave. */
  private readonly secrets = new Map<string, SecretState>();
  /** Per cluster name, the Secrets claiming it. */
  private readonly claims = new Map<string, Set<string>>();
  private readonly engaged = new Map<string, Engaged>();
  /** Per refused Secret, the cluster and the holder it was refused for (reported once per pair). */
  private readonly refused = new Map<string, string>();
  /** Secrets changed since the last pass. Before the first pass (the initial list) only collected. */
  private readonly changed = new Set<string>();
  private listed = false;
  private passed = false;
  private scheduled = false;
  private syncing: Promise<void> | undefined;

  constructor(
    private readonly options: RunOptions,
    private readonly signal: AbortSignal,
    private readonly events: ClusterEvents,
  ) {
    this.logger = (options.logger ?? silentLogger).child({ provider: 'kubeconfig-secrets' });
    const lw = clientListerWatcher(options.client, {
      ...SECRET,
      namespace: options.namespace,
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    }) as ListerWatcher<Secret>;
    this.informer = new SharedInformer<Secret>(lw, {
      name: 'fleet kubeconfig secrets',
      ...(options.clock ? { clock: options.clock } : {}),
      logger: this.logger,
    });
    const { create, patch } = options.client;
    if (create && patch)
      this.recorder = new EventRecorder({
        client: options.client as Creator & Patcher,
        component: 'fleet-kubeconfig-secrets',
        ...omitUndefined({ clock: options.clock }),
        logger: this.logger,
      });
    // Only the key is noted: a handler that waited for a pass of every Secret made N initial adds
    // cost N passes (N² decodes and hashes). Passes are batched and only look at what changed.
    const note = (secret: Secret | Tombstone<Secret>): void => this.noteChanged(keyOf(deletedObject(secret)));
    this.informer.addEventHandler(
      { add: note, update: (_old, secret) => note(secret), delete: note },
      { name: 'kubeconfig-secrets' },
    );
  }

  async run(): Promise<void> {
    // One pass over the whole initial list, once it is in, engaging in cluster-name order: who
    // gets a contested name (or, with the fleet's maxClusters, a place) does not depend on the
    // order the adds arrived in.
    const synced = this.informer.waitForSync(this.signal).then(
      () => {
        this.listed = true;
        this.schedule();
      },
      // Rejects only when the run stops.
      () => {},
    );
    try {
      await Promise.all([this.informer.start(this.signal), synced]);
    } finally {
      await this.syncing;
    }
  }

  private noteChanged(key: string): void {
    this.changed.add(key);
    if (this.listed) this.schedule();
  }

  /** A pass soon: changes arriving together (a relist) make one pass. Passes never overlap. */
  private schedule(): void {
    if (this.scheduled || this.signal.aborted) return;
    this.scheduled = true;
    this.syncing ??= this.syncWhileChanged();
  }

  private async syncWhileChanged(): Promise<void> {
    try {
      // Let the deliveries already queued land first.
      await Promise.resolve();
      while (this.scheduled && !this.signal.aborted) {
        this.scheduled = false;
        try {
          await this.syncOnce();
        } catch (err) {
          this.logger.error({ error: (err as Error)?.name ?? typeof err }, 'comparing member Secrets failed');
        }
        if (this.changed.size > 0) this.scheduled = true;
      }
    } finally {
      this.syncing = undefined;
    }
  }

  private async syncOnce(): Promise<void> {
    // The first pass takes the whole store: adds not yet handed to the handler count as well.
    if (!this.passed) for (const secret of this.informer.reader.list()) this.changed.add(keyOf(secret));
    this.passed = true;
    const keys = [...this.changed].sort(compare);
    this.changed.clear();
    const affected = new Set<string>();
    for (const key of keys) {
      if (this.signal.aborted) return;
      const secret = this.informer.reader.get(key);
      const previous = this.secrets.get(key);
      if (
        secret &&
        previous &&
        previous.uid === (secret.metadata?.uid ?? '') &&
        previous.resourceVersion === (secret.metadata?.resourceVersion ?? '')
      )
        continue;
      const next = secret ? await this.evaluate(key, secret, previous) : undefined;
      if (this.signal.aborted) return;
      if (previous?.claim) {
        affected.add(previous.claim.cluster);
        this.claims.get(previous.claim.cluster)?.delete(key);
      }
      if (next?.claim) {
        affected.add(next.claim.cluster);
        let claimants = this.claims.get(next.claim.cluster);
        if (!claimants) this.claims.set(next.claim.cluster, (claimants = new Set()));
        claimants.add(key);
      }
      if (next) this.secrets.set(key, next);
      else this.secrets.delete(key);
      if (next?.claim?.cluster !== previous?.claim?.cluster) this.refused.delete(key);
      if (next?.problem && next.problem !== previous?.problem)
        this.logger.warn({ namespace: next.namespace, name: next.name, error: next.problem }, 'member Secret skipped');
    }
    // Leaves first, so a cluster name given up is free when the one taking it is engaged.
    for (const cluster of [...affected].sort(compare)) if (!this.claims.get(cluster)?.size) this.settle(cluster);
    for (const cluster of [...affected].sort(compare)) if (this.claims.get(cluster)?.size) this.settle(cluster);
  }

  /** Engages, re-engages or disengages `cluster` after its claimants changed. */
  private settle(cluster: string): void {
    const claimants = [...(this.claims.get(cluster) ?? [])];
    if (claimants.length === 0) this.claims.delete(cluster);
    const current = this.engaged.get(cluster);
    // The Secret a cluster is engaged from keeps its name while it claims it: a newcomer naming
    // an engaged cluster is refused, whatever its name sorts as (else it could take the cluster over).
    const holder = current && claimants.includes(current.secret) ? current.secret : claimants.sort(compare)[0];
    if (!holder) {
      if (!current) return;
      this.engaged.delete(cluster);
      this.logger.info({ cluster, revision: current.revision }, 'member Secret gone: cluster disengaged');
      void this.events.disengage(cluster);
      return;
    }
    const state = this.secrets.get(holder)!;
    const claim = state.claim!;
    this.refused.delete(holder);
    for (const other of claimants) if (other !== holder) this.refuse(this.secrets.get(other)!, cluster, state);
    if (current?.secret === holder && current.revision === claim.revision && current.labelsKey === state.labelsKey)
      return;
    this.engaged.set(cluster, { secret: holder, revision: claim.revision, labelsKey: state.labelsKey });
    this.logger.info(
      { cluster, namespace: state.namespace, name: state.name, revision: claim.revision },
      !current
        ? 'cluster engaged'
        : current.secret === holder
          ? 'member Secret changed: cluster engaged again'
          : 'cluster engaged from another Secret',
    );
    this.events.engage(
      kubeconfigMember({
        name: cluster,
        labels: state.labels,
        revision: claim.revision,
        kubeconfig: claim.kubeconfig,
        ...(this.options.clientOptions ? { clientOptions: this.options.clientOptions } : {}),
      }),
    );
  }

  /** Reports, once per cluster and holder, that `secret` is not used because `holder` has its cluster's name. */
  private refuse(secret: SecretState, cluster: string, holder: SecretState): void {
    const mark = `${cluster}\u0000${holder.key}`;
    if (this.refused.get(secret.key) === mark) return;
    this.refused.set(secret.key, mark);
    const problem = `cluster "${cluster}" is already given by Secret ${holder.key}; this Secret is not used while that one gives it`;
    this.logger.warn(
      { namespace: secret.namespace, name: secret.name, cluster, error: problem },
      'member Secret refused',
    );
    countRefusal(this.options.registry, 'kubeconfig-secrets', 'name_taken');
    this.recorder?.event(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace: secret.namespace, name: secret.name, uid: secret.uid },
      },
      'Warning',
      'ClusterNameTaken',
      problem,
    );
  }

  /** Reads one version of a Secret: decoded and hashed once per version, checked once per new bytes. */
  private async evaluate(key: string, secret: Secret, previous: SecretState | undefined): Promise<SecretState> {
    const namespace = secret.metadata?.namespace ?? this.options.namespace;
    const name = secret.metadata?.name ?? '';
    const labels = clusterLabels(secret.metadata?.labels, this.options.selectorKeys);
    const base = {
      key,
      namespace,
      name,
      uid: secret.metadata?.uid ?? '',
      resourceVersion: secret.metadata?.resourceVersion ?? '',
      labels,
      labelsKey: JSON.stringify(Object.entries(labels).sort(([a], [b]) => compare(a, b))),
    };
    // Another Secret under the same name (deleted and created again) starts afresh.
    const prior = previous && previous.uid === base.uid ? previous : undefined;
    const lastGood = prior?.lastGood;
    const failed = (problem: string, checked = prior?.checked): SecretState => ({
      ...base,
      claim: lastGood,
      lastGood,
      checked,
      problem,
    });
    const cluster = secret.metadata?.annotations?.[CLUSTER_NAME_ANNOTATION] || name;
    try {
      validateClusterName(cluster);
    } catch (err) {
      return failed(`${(err as Error).message}; set the annotation ${CLUSTER_NAME_ANNOTATION} to one`);
    }
    const data = secret.data?.[this.options.key];
    if (!data) return failed(`data key "${this.options.key}" is missing or empty`);
    // Measured from the base64 length: a huge value is refused before anything of it is decoded.
    try {
      checkBase64KubeconfigSize(cluster, data);
    } catch (err) {
      const keeping = lastGood ? '; the cluster stays on its previous kubeconfig' : '';
      return failed(`data key "${this.options.key}": ${(err as Error).message}${keeping}`);
    }
    const bytes = Buffer.from(data, 'base64');
    const revision = kubeconfigRevision(bytes);
    let checked = prior?.checked;
    if (checked?.revision !== revision) {
      try {
        const kubeconfig = await checkKubeconfig(cluster, bytes, {
          allowExecAndFiles: this.options.allowExecAndFiles ?? false,
        });
        checked = { revision, kubeconfig };
      } catch (err) {
        checked = { revision, problem: (err as Error).message };
      }
    }
    if (!checked.kubeconfig) {
      const keeping = lastGood ? '; the cluster stays on its previous kubeconfig' : '';
      return failed(`data key "${this.options.key}": ${checked.problem ?? 'unusable'}${keeping}`, checked);
    }
    const good = { cluster, revision, kubeconfig: checked.kubeconfig };
    return { ...base, claim: good, lastGood: good, checked, problem: undefined };
  }
}

function clusterLabels(
  labels: Readonly<Record<string, string>> | undefined,
  selectorKeys: ReadonlySet<string>,
): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels ?? {})) if (!selectorKeys.has(k)) out[k] = v;
  return out;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
