/**
 * `kubeconfigDirectory`: one member cluster per kubeconfig file in a folder, e.g. a Secret mounted
 * into the operator's pod (one key per cluster). Adding a file engages its cluster, removing it
 * disengages it, changing it engages it again with a new revision.
 *
 * Which files: regular files (symlinks followed) named `<cluster>.kubeconfig`, `<cluster>.yaml` or
 * `<cluster>.yml` directly in the folder; the cluster's name is the file name without that
 * extension and must be a DNS label (`validateClusterName`). The file name, not the kubeconfig's
 * `current-context`, names the cluster: contexts are often not DNS labels
 * (`kubernetes-admin@kubernetes`) and two files may well share one, while file names are unique in
 * a folder. Names starting with `.` are skipped, which skips Kubernetes' `..data` and
 * `..<timestamp>` entries; other files are ignored. When two files name one cluster (`a.yaml` and
 * `a.yml`), the one it is engaged from keeps it, else the first by extension (in
 * {@link KUBECONFIG_FILE_EXTENSIONS} order) then name; the other is logged and counted
 * (`fleet_provider_refused_total`), and takes the name once the first is gone.
 *
 * How changes are seen: `fs.watch` on the folder, debounced by `debounceMs`, plus a full rescan every
 * `rescanPeriodMs`, because fs.watch is lossy (events coalesce or drop under load, network file
 * systems and some container runtimes deliver none, and a watch on a folder that is replaced ends).
 * Kubernetes updates a mounted Secret by writing a new `..<timestamp>` folder and renaming a
 * `..data` symlink onto it: the file symlinks (`a.yaml → ..data/a.yaml`) never change, but the
 * rename is an event on the folder, and the rescan reads through the links either way.
 *
 * Relative file paths inside a kubeconfig (`certificate-authority: ca.crt`) resolve against the
 * folder, so sibling keys of a mounted Secret work. Unless `allowExecAndFiles`, a kubeconfig may
 * not run exec plugins nor name a file outside the folder: the folder is often a Secret mounted
 * into the pod, and whoever may write that Secret could otherwise run commands in the operator's
 * pod or send its service-account token (`tokenFile: /var/run/secrets/…`) to a server of their
 * choosing. Files inside the folder are as trusted as the kubeconfig beside them (a Secret volume's
 * writers cannot make links out of it).
 *
 * A file that cannot be used (not YAML, no such context, a missing referenced file) is logged with
 * its name and the kind of problem (never its content), skipped, and tried again when its content
 * changes; a cluster already engaged from an earlier good version stays engaged on that version. A
 * file that disappears disengages its cluster; an unreadable folder (other than a missing one)
 * changes nothing until it can be read again.
 */
import { constants, watch, type FSWatcher } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Registry } from 'prom-client';
import type { KubeClientOptions } from '../../client/kube-client.js';
import { MAX_LOCAL_FILE_BYTES, describeReadError } from '../../client/credentials.js';
import { parseKubeconfig, type Kubeconfig } from '../../client/kubeconfig.js';
import { realClock, type Clock, type TimerHandle } from '../../core/clock.js';
import { InvalidOptionError } from '../../core/errors.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { validateClusterName, type ClusterEvents, type ClusterProvider } from '../cluster-provider.js';
import { countRefusal } from '../fleet-metrics.js';
import { ClusterKubeconfigError, checkKubeconfig, kubeconfigMember, kubeconfigRevision } from './kubeconfig-member.js';

/** @defaultValue 500 ms: a burst of file events (a Secret update touches several entries) becomes one scan. */
export const DEFAULT_KUBECONFIG_DIRECTORY_DEBOUNCE_MS = 500;
/** @defaultValue 30,000 ms: how late a change fs.watch missed is seen at worst. */
export const DEFAULT_KUBECONFIG_DIRECTORY_RESCAN_PERIOD_MS = 30_000;
/** File name endings taken for kubeconfigs, in the order a name given twice is resolved. */
export const KUBECONFIG_FILE_EXTENSIONS: readonly string[] = Object.freeze(['.kubeconfig', '.yaml', '.yml']);

export interface KubeconfigDirectoryOptions {
  /** The folder. It may be missing at first (no clusters until it appears). */
  readonly path: string;
  /** Labels of every cluster of this folder. @defaultValue none */
  readonly labels?: Readonly<Record<string, string>>;
  /** @defaultValue {@link DEFAULT_KUBECONFIG_DIRECTORY_DEBOUNCE_MS} */
  readonly debounceMs?: number;
  /** @defaultValue {@link DEFAULT_KUBECONFIG_DIRECTORY_RESCAN_PERIOD_MS} */
  readonly rescanPeriodMs?: number;
  /**
   * Let a kubeconfig in the folder run exec plugins and read files outside the folder. Only for a
   * folder nobody could write who may not also run code in the operator (not a Secret volume whose
   * Secret others may edit). @defaultValue false
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

/** A provider of one cluster per kubeconfig file in `options.path` (see the module comment for the rules). */
export function kubeconfigDirectory(options: KubeconfigDirectoryOptions): ClusterProvider {
  const debounceMs = options.debounceMs ?? DEFAULT_KUBECONFIG_DIRECTORY_DEBOUNCE_MS;
  const rescanPeriodMs = options.rescanPeriodMs ?? DEFAULT_KUBECONFIG_DIRECTORY_RESCAN_PERIOD_MS;
  if (!(Number.isFinite(debounceMs) && debounceMs >= 0))
    throw new InvalidOptionError('debounceMs', 'must be a non-negative number of milliseconds');
  if (!(Number.isFinite(rescanPeriodMs) && rescanPeriodMs > 0))
    throw new InvalidOptionError('rescanPeriodMs', 'must be a positive number of milliseconds');
  if (!options.path) throw new InvalidOptionError('path', 'must name a folder');
  const dir = path.resolve(options.path);
  return {
    description: `kubeconfig-directory ${dir}`,
    async start(signal: AbortSignal, events: ClusterEvents): Promise<void> {
      if (signal.aborted) return;
      const run = new DirectoryRun(dir, { ...options, debounceMs, rescanPeriodMs }, signal, events);
      await run.run();
    },
  };
}

interface Engaged {
  readonly file: string;
  readonly revision: string;
}

/** One `start()`: its state lives and dies with the run, so the provider can be started again. */
class DirectoryRun {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly engaged = new Map<string, Engaged>();
  /** Per file, the last problem logged (so a rescan does not repeat it); cleared once the file is fine. */
  private readonly reported = new Map<string, string>();
  /** Per cluster, the revision found broken: not tried again until the content changes. */
  private readonly broken = new Map<string, string>();
  private watcher: FSWatcher | undefined;
  private debounce: TimerHandle | undefined;
  private rescan: TimerHandle | undefined;
  private dirty = false;
  private scanning: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly options: KubeconfigDirectoryOptions & {
      readonly debounceMs: number;
      readonly rescanPeriodMs: number;
    },
    private readonly signal: AbortSignal,
    private readonly events: ClusterEvents,
  ) {
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? silentLogger).child({ provider: 'kubeconfig-directory', directory: dir });
  }

  async run(): Promise<void> {
    const stopped = new Promise<void>((resolve) =>
      this.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    try {
      this.ensureWatching();
      await this.requestScan();
      this.armRescan();
      await stopped;
    } finally {
      this.debounce?.cancel();
      this.rescan?.cancel();
      this.watcher?.close();
      this.watcher = undefined;
      await this.scanning;
    }
  }

  private armRescan(): void {
    if (this.signal.aborted) return;
    this.rescan = this.clock.setTimer(this.options.rescanPeriodMs, () => {
      // A watch lost (the folder was missing or replaced) is set up again here.
      this.ensureWatching();
      void this.requestScan();
      this.armRescan();
    });
  }

  private ensureWatching(): void {
    if (this.watcher || this.signal.aborted) return;
    try {
      const w = watch(this.dir, { persistent: false }, () => this.onFileEvent());
      w.on('error', (err) => {
        this.logger.warn(
          { error: describeReadError(err) },
          'watching the kubeconfig folder failed; changes are seen by the periodic rescan until it is watched again',
        );
        w.close();
        if (this.watcher === w) this.watcher = undefined;
      });
      this.watcher = w;
    } catch (err) {
      // Typically ENOENT: the folder is not there yet. The rescan tries again.
      this.logger.debug({ error: describeReadError(err) }, 'cannot watch the kubeconfig folder yet');
    }
  }

  private onFileEvent(): void {
    if (this.debounce || this.signal.aborted) return;
    this.debounce = this.clock.setTimer(this.options.debounceMs, () => {
      this.debounce = undefined;
      void this.requestScan();
    });
  }

  /** Scans now, or once more after the scan under way: scans never overlap. Never rejects. */
  private requestScan(): Promise<void> {
    this.dirty = true;
    this.scanning ??= this.scanWhileDirty();
    return this.scanning;
  }

  private async scanWhileDirty(): Promise<void> {
    try {
      while (this.dirty && !this.signal.aborted) {
        this.dirty = false;
        try {
          await this.scanOnce();
        } catch (err) {
          this.logger.error({ error: (err as Error)?.name ?? typeof err }, 'scanning the kubeconfig folder failed');
        }
        this.logger.debug({ clusters: this.engaged.size }, 'kubeconfig folder scanned');
      }
    } finally {
      this.scanning = undefined;
    }
  }

  private async scanOnce(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.report('.', `cannot read the folder (${describeReadError(err)}); clusters stay as they are`);
        return;
      }
      names = [];
    }
    this.reported.delete('.');
    const files = chooseFiles(
      names,
      (cluster) => this.engaged.get(cluster)?.file,
      (file, problem) => this.report(file, problem),
      (file, cluster, holder) => this.refuse(file, cluster, holder),
    );
    const present = new Set<string>();
    for (const [cluster, file] of files) {
      if (this.signal.aborted) return;
      const result = await this.examine(cluster, file);
      if (result !== 'absent') present.add(cluster);
    }
    for (const cluster of [...this.engaged.keys()]) {
      if (present.has(cluster) || this.signal.aborted) continue;
      this.engaged.delete(cluster);
      this.logger.info({ cluster }, 'kubeconfig file gone: cluster disengaged');
      void this.events.disengage(cluster);
    }
    for (const cluster of [...this.broken.keys()]) if (!present.has(cluster)) this.broken.delete(cluster);
  }

  /** Reads one file and engages its cluster when its content is new and usable. */
  private async examine(cluster: string, file: string): Promise<'absent' | 'present'> {
    const full = path.join(this.dir, file);
    let bytes: Buffer;
    try {
      bytes = await readRegularFile(full);
    } catch (err) {
      // Gone between readdir and open, or a link into a `..data` folder just swapped away.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
      this.report(file, `cannot read the file (${describeReadError(err)})`);
      return 'present';
    }
    const revision = kubeconfigRevision(bytes);
    const current = this.engaged.get(cluster);
    if (current?.revision === revision && current.file === file) {
      this.reported.delete(file);
      this.broken.delete(cluster);
      return 'present';
    }
    if (this.broken.get(cluster) === revision) return 'present';
    let kubeconfig: Kubeconfig;
    try {
      // Refused before anything of it is resolved: no plugin runs and no outside file is read.
      if (!this.options.allowExecAndFiles) refuseExecAndOutsideFiles(cluster, bytes, this.dir);
      kubeconfig = await checkKubeconfig(cluster, bytes, { baseDir: this.dir });
    } catch (err) {
      this.broken.set(cluster, revision);
      const problem = (err as Error).message;
      this.report(file, current ? `${problem}; the cluster stays on its previous kubeconfig` : problem);
      return 'present';
    }
    if (this.signal.aborted) return 'present';
    this.broken.delete(cluster);
    this.reported.delete(file);
    this.engaged.set(cluster, { file, revision });
    this.logger.info(
      { cluster, file, revision },
      current ? 'kubeconfig changed: cluster engaged again' : 'cluster engaged',
    );
    this.events.engage(
      kubeconfigMember({
        name: cluster,
        revision,
        kubeconfig,
        ...(this.options.labels ? { labels: this.options.labels } : {}),
        ...(this.options.clientOptions ? { clientOptions: this.options.clientOptions } : {}),
      }),
    );
    return 'present';
  }

  /** Logs a problem with a file once, until it changes. `problem` never holds file content. */
  private report(file: string, problem: string): boolean {
    if (this.reported.get(file) === problem) return false;
    this.reported.set(file, problem);
    this.logger.warn({ file, error: problem }, 'kubeconfig file skipped');
    return true;
  }

  /** `file` names the cluster `holder` gives: logged and counted once, until that changes. */
  private refuse(file: string, cluster: string, holder: string): void {
    const problem = `cluster "${cluster}" is already given by ${holder}; this file is not used while that one gives it`;
    if (this.report(file, problem)) countRefusal(this.options.registry, 'kubeconfig-directory', 'name_taken');
  }
}

/**
 * Cluster name → file, from a folder listing; names that do not qualify are reported. A cluster
 * engaged from a file still listed keeps that file, so a file added later under the same name
 * (`a.kubeconfig` beside an engaged `a.yaml`) cannot take it over; among files none of which is
 * engaged, the first by extension, then by name, wins. The others are refused.
 */
function chooseFiles(
  names: readonly string[],
  engagedFile: (cluster: string) => string | undefined,
  report: (file: string, problem: string) => void,
  refuse: (file: string, cluster: string, holder: string) => void,
): Map<string, string> {
  const claimants = new Map<string, string[]>();
  const byPriority = (f: string): number => KUBECONFIG_FILE_EXTENSIONS.findIndex((e) => f.endsWith(e));
  const candidates = names
    .filter((f) => !f.startsWith('.') && byPriority(f) >= 0)
    .sort((a, b) => byPriority(a) - byPriority(b) || (a < b ? -1 : a > b ? 1 : 0));
  for (const file of candidates) {
    const cluster = file.slice(0, file.length - KUBECONFIG_FILE_EXTENSIONS[byPriority(file)]!.length);
    try {
      validateClusterName(cluster);
    } catch (err) {
      report(file, (err as Error).message);
      continue;
    }
    let files = claimants.get(cluster);
    if (!files) claimants.set(cluster, (files = []));
    files.push(file);
  }
  const chosen = new Map<string, string>();
  for (const [cluster, files] of claimants) {
    const engaged = engagedFile(cluster);
    const holder = engaged !== undefined && files.includes(engaged) ? engaged : files[0]!;
    chosen.set(cluster, holder);
    for (const file of files) if (file !== holder) refuse(file, cluster, holder);
  }
  return chosen;
}

/**
 * A file's bytes, refusing what is not a regular file or is larger than credentials are (as
 * `readLocalFile`, but bytes, so the revision hashes exactly what is on disk).
 */
async function readRegularFile(file: string): Promise<Buffer> {
  // Non-blocking: a FIFO named `x.yaml` would otherwise hold a libuv thread forever on open.
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'ERR_NOT_REGULAR_FILE' });
    if (stat.size > MAX_LOCAL_FILE_BYTES)
      throw Object.assign(new Error('file too large'), { code: 'ERR_FILE_TOO_LARGE' });
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

const FILE_FIELDS_OF_USER = ['tokenFile', 'client-certificate', 'client-key'] as const;

/**
 * Throws `ClusterKubeconfigError` when the context in use runs an exec plugin or names a file
 * outside `dir` (paths are made absolute against `dir` by the parser, `..` included). A kubeconfig
 * that does not parse passes: `checkKubeconfig` reports that next, with its own words.
 */
function refuseExecAndOutsideFiles(cluster: string, bytes: Buffer, dir: string): void {
  let kc: Kubeconfig;
  try {
    kc = parseKubeconfig(bytes.toString('utf8'), dir);
  } catch {
    return;
  }
  const refuse = (field: string, what: string): never => {
    throw new ClusterKubeconfigError(
      cluster,
      `kubeconfig ${field} ${what}, which is not allowed unless allowExecAndFiles`,
      {
        field,
      },
    );
  };
  const outside = (file: string): boolean => {
    const rel = path.relative(dir, path.resolve(dir, file));
    return rel === '' || rel.startsWith('..') || path.isAbsolute(rel);
  };
  const context = kc.contexts?.find((c) => c.name === kc['current-context'])?.context;
  // An unknown context is checkKubeconfig's to report.
  if (!context) return;
  const clusterIndex = kc.clusters?.findIndex((c) => c.name === context.cluster) ?? -1;
  const entry = clusterIndex >= 0 ? kc.clusters![clusterIndex]!.cluster : undefined;
  // Inline data wins over a file, as when the kubeconfig is resolved: the file is then never read.
  const ca = entry?.['certificate-authority-data'] ? undefined : entry?.['certificate-authority'];
  if (typeof ca === 'string' && ca && outside(ca))
    refuse(`clusters[${clusterIndex}].cluster.certificate-authority`, 'names a file outside the folder');
  const userIndex = context.user ? (kc.users?.findIndex((u) => u.name === context.user) ?? -1) : -1;
  const user = userIndex >= 0 ? kc.users![userIndex]!.user : undefined;
  if (!user) return;
  const at = `users[${userIndex}].user`;
  if (user.exec) refuse(`${at}.exec`, 'runs a command');
  for (const key of FILE_FIELDS_OF_USER) {
    const file = key === 'tokenFile' || !user[`${key}-data`] ? user[key] : undefined;
    if (typeof file === 'string' && file && outside(file)) refuse(`${at}.${key}`, 'names a file outside the folder');
  }
}
