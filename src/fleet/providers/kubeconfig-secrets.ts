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
 *   the Secret's name; it must be a DNS label (Secret names may hold dots: annotate those). When
 *   two Secrets name one cluster, the one whose name sorts first is used and the other is logged.
 * - The cluster's labels are the Secret's labels minus the keys the selector tests (those are the
 *   same on every member and say nothing about it).
 * - The revision is the sha256 of the kubeconfig bytes: a resync, or a change to another data key or
 *   to annotations, engages nothing again; new bytes, or other labels, engage again.
 * - A Secret whose kubeconfig is missing or cannot be used is logged (namespace, name, data key and
 *   what is wrong, never the data), skipped and tried again when the Secret changes; a cluster
 *   engaged from an earlier good version stays engaged on it. A deleted Secret disengages its cluster.
 * - A kubeconfig from a Secret may not run exec plugins or read local files unless
 *   `allowExecAndFiles` (see `CheckKubeconfigOptions.allowExecAndFiles` for why).
 */
import type { Secret } from 'kubernetes-types/core/v1.js';
import type { Client } from '../../client/contracts.js';
import type { KubeClientOptions } from '../../client/kube-client.js';
import type { Kubeconfig } from '../../client/kubeconfig.js';
import { clientListerWatcher } from '../../cache/client-lister-watcher.js';
import { SharedInformer } from '../../cache/informer.js';
import { formatLabelSelector, parseLabelSelector } from '../../cache/label-selector.js';
import type { ListerWatcher } from '../../cache/lister-watcher.js';
import type { Clock } from '../../core/clock.js';
import { InvalidOptionError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import type { PermissionRequirement } from '../../rbac/permission.js';
import { validateClusterName, type ClusterEvents, type ClusterProvider } from '../cluster-provider.js';
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
  /** A client of the host cluster (the manager's API client). */
  readonly client: Pick<Client, 'listPage' | 'watch'> & { readonly watchList?: boolean };
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
      ];
    },
  };
}

interface Evaluated {
  readonly revision: string;
  /** Set when the bytes of this revision make a usable kubeconfig. */
  readonly kubeconfig?: Kubeconfig;
  readonly problem?: string;
}

interface Wanted {
  readonly secret: string;
  readonly revision: string;
  readonly kubeconfig: Kubeconfig;
  readonly labels: Readonly<Record<string, string>>;
}

interface Engaged {
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
  /** Per Secret (namespace/name), the last revision looked at and what it gave. */
  private readonly evaluated = new Map<string, Evaluated>();
  /** Per Secret, its last usable kubeconfig and the cluster it named: kept while a newer version is broken. */
  private readonly lastGood = new Map<string, { readonly cluster: string } & Omit<Wanted, 'labels' | 'secret'>>();
  /** Per Secret, the problem logged by the last sync (logged again only when it changes). */
  private reported = new Map<string, string>();
  /** Problems found by the sync under way. */
  private problems = new Map<string, { readonly namespace: string; readonly name: string; readonly problem: string }>();
  private readonly engaged = new Map<string, Engaged>();
  private dirty = false;
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
    // Level-triggered: every change leads to one comparison of all member Secrets with what is engaged.
    const changed = (): Promise<void> => this.requestSync();
    this.informer.addEventHandler({ add: changed, update: changed, delete: changed }, { name: 'kubeconfig-secrets' });
  }

  async run(): Promise<void> {
    try {
      await this.informer.start(this.signal);
    } finally {
      await this.syncing;
    }
  }

  /** Syncs now, or once more after the sync under way. Never rejects. */
  private requestSync(): Promise<void> {
    this.dirty = true;
    this.syncing ??= this.syncWhileDirty();
    return this.syncing;
  }

  private async syncWhileDirty(): Promise<void> {
    try {
      while (this.dirty && !this.signal.aborted) {
        this.dirty = false;
        try {
          await this.syncOnce();
        } catch (err) {
          this.logger.error({ error: (err as Error)?.name ?? typeof err }, 'comparing member Secrets failed');
        }
      }
    } finally {
      this.syncing = undefined;
    }
  }

  private async syncOnce(): Promise<void> {
    const secrets = this.informer.reader.list().sort((a, b) => compare(a.metadata?.name ?? '', b.metadata?.name ?? ''));
    const wanted = new Map<string, Wanted>();
    const seen = new Set<string>();
    this.problems = new Map();
    for (const secret of secrets) {
      const ns = secret.metadata?.namespace ?? this.options.namespace;
      const name = secret.metadata?.name ?? '';
      const secretKey = `${ns}/${name}`;
      seen.add(secretKey);
      const want = await this.evaluate(secret, secretKey);
      if (!want) continue;
      const other = wanted.get(want.cluster);
      if (other) {
        this.report(secret, `cluster "${want.cluster}" is already given by Secret ${other.secret}`);
        continue;
      }
      wanted.set(want.cluster, { ...want, secret: secretKey });
    }
    if (this.signal.aborted) return;
    for (const map of [this.evaluated, this.lastGood]) for (const k of [...map.keys()]) if (!seen.has(k)) map.delete(k);
    const reported = new Map<string, string>();
    for (const [secretKey, { namespace, name, problem }] of this.problems) {
      reported.set(secretKey, problem);
      if (this.reported.get(secretKey) !== problem)
        this.logger.warn({ namespace, name, error: problem }, 'member Secret skipped');
    }
    this.reported = reported;

    for (const [cluster, engaged] of [...this.engaged]) {
      if (wanted.has(cluster)) continue;
      this.engaged.delete(cluster);
      this.logger.info({ cluster, revision: engaged.revision }, 'member Secret gone: cluster disengaged');
      void this.events.disengage(cluster);
    }
    for (const [cluster, want] of wanted) {
      const labelsKey = JSON.stringify(Object.entries(want.labels).sort(([a], [b]) => compare(a, b)));
      const current = this.engaged.get(cluster);
      if (current?.revision === want.revision && current.labelsKey === labelsKey) continue;
      this.engaged.set(cluster, { revision: want.revision, labelsKey });
      const [namespace, name] = splitKey(want.secret);
      this.logger.info(
        { cluster, namespace, name, revision: want.revision },
        current ? 'member Secret changed: cluster engaged again' : 'cluster engaged',
      );
      this.events.engage(
        kubeconfigMember({
          name: cluster,
          labels: want.labels,
          revision: want.revision,
          kubeconfig: want.kubeconfig,
          ...(this.options.clientOptions ? { clientOptions: this.options.clientOptions } : {}),
        }),
      );
    }
  }

  /** What this Secret asks for: its cluster with a usable kubeconfig (maybe an earlier one), or nothing. */
  private async evaluate(
    secret: Secret,
    secretKey: string,
  ): Promise<(Omit<Wanted, 'secret'> & { readonly cluster: string }) | undefined> {
    const labels = clusterLabels(secret.metadata?.labels, this.options.selectorKeys);
    const previous = this.lastGood.get(secretKey);
    const fallback = previous ? { ...previous, labels } : undefined;
    const cluster = secret.metadata?.annotations?.[CLUSTER_NAME_ANNOTATION] || secret.metadata?.name || '';
    try {
      validateClusterName(cluster);
    } catch (err) {
      this.report(secret, `${(err as Error).message}; set the annotation ${CLUSTER_NAME_ANNOTATION} to one`);
      return fallback;
    }
    const data = secret.data?.[this.options.key];
    if (!data) {
      this.report(secret, `data key "${this.options.key}" is missing or empty`);
      return fallback;
    }
    try {
      checkBase64KubeconfigSize(cluster, data);
    } catch (err) {
      this.report(
        secret,
        `data key "${this.options.key}": ${(err as Error).message}${previous ? '; the cluster stays on its previous kubeconfig' : ''}`,
      );
      return fallback;
    }
    const bytes = Buffer.from(data, 'base64');
    const revision = kubeconfigRevision(bytes);
    let result = this.evaluated.get(secretKey);
    if (result?.revision !== revision) {
      try {
        const kubeconfig = await checkKubeconfig(cluster, bytes, {
          allowExecAndFiles: this.options.allowExecAndFiles ?? false,
        });
        result = { revision, kubeconfig };
      } catch (err) {
        result = { revision, problem: (err as Error).message };
      }
      this.evaluated.set(secretKey, result);
    }
    if (!result.kubeconfig) {
      const keeping = previous ? '; the cluster stays on its previous kubeconfig' : '';
      this.report(secret, `data key "${this.options.key}": ${result.problem ?? 'unusable'}${keeping}`);
      return fallback;
    }
    const good = { cluster, revision, kubeconfig: result.kubeconfig };
    this.lastGood.set(secretKey, good);
    return { ...good, labels };
  }

  /** Notes a problem with a Secret, logged at the end of the sync unless the last one logged it. Never holds Secret data. */
  private report(secret: Secret, problem: string): void {
    const namespace = secret.metadata?.namespace ?? this.options.namespace;
    const name = secret.metadata?.name ?? '';
    this.problems.set(`${namespace}/${name}`, { namespace, name, problem });
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

function splitKey(key: string): [string, string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
