/**
 * One member cluster of a `TestFleet`: its control plane (a `TestEnv`), the fault proxy in front of
 * it and the link a test cuts. Clients from `client()` and `kubeconfig` go link → proxy → API
 * server; `directClient()` goes straight to the API server.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { stringify as toYaml } from 'yaml';
import { KubeClient, type KubeClientOptions } from '../../client/kube-client.js';
import type { Kubeconfig } from '../../client/kubeconfig.js';
import type { FaultProxy } from '../chaos/fault-proxy.js';
import type { KubeconfigObject, TestEnv } from '../control-plane/test-env.js';
import { DEFAULT_CUT_OFF_MODE, type CutOffMode, type MemberLink } from './member-link.js';
import { memberSecretManifest, type MemberSecretManifest, type MemberSecretOptions } from './member-secret.js';
import { TestFleetError } from './test-fleet-error.js';

/** Resident memory of a member's processes, read from /proc (Linux). */
export interface MemberMemory {
  /** Sum of VmRSS over the member's processes. */
  readonly rssBytes: number;
  readonly processes: readonly { readonly pid: number; readonly name: string; readonly rssBytes: number }[];
}

export class TestFleetMember {
  /** The kubeconfig clients of this member use: admin token, server through the link and proxy. */
  readonly kubeconfig: KubeconfigObject;
  private readonly clients = new Set<KubeClient>();
  private stopped = false;

  /** @internal Built by `TestFleet.start`. */
  constructor(
    /** The member's cluster name (a DNS label). */
    readonly name: string,
    /** The member's control plane. Its `request()` and `kubeconfig` bypass the proxy. */
    readonly env: TestEnv,
    /** HTTP-level faults for this member only (429s, 500s, delays, watch cuts). */
    readonly proxy: FaultProxy,
    private readonly link: MemberLink,
    /** How long this member took to start (control plane, CRDs, proxy and link), in ms. */
    readonly startMs: number,
  ) {
    this.kubeconfig = memberKubeconfig(name, proxy.kubeconfig, `https://127.0.0.1:${link.port}`);
  }

  /** The cut now in force, or undefined while the member is reachable. */
  get cut(): CutOffMode | undefined {
    return this.link.cut;
  }

  /** `kubeconfig` as YAML (credentials included: never log it). */
  kubeconfigYaml(): string {
    return toYaml(this.kubeconfig);
  }

  /** Writes `kubeconfig` to `path` (mode 0600), e.g. into a folder for the kubeconfigDirectory provider. */
  async writeKubeconfig(path: string): Promise<void> {
    await writeFile(path, this.kubeconfigYaml(), { mode: 0o600 });
  }

  /** A client through the link and proxy, so `cutOff()` and proxy faults reach it. Closed by `fleet.stop()`. */
  async client(options: KubeClientOptions = {}): Promise<KubeClient> {
    return this.track(
      await KubeClient.fromKubeconfig({ ...options, kubeconfig: this.kubeconfig as unknown as Kubeconfig }),
    );
  }

  /** A client straight to the API server, for the test's own reads and writes while the member is cut off. */
  async directClient(options: KubeClientOptions = {}): Promise<KubeClient> {
    return this.track(
      await KubeClient.fromKubeconfig({ ...options, kubeconfig: this.env.kubeconfig as unknown as Kubeconfig }),
    );
  }

  /** Cuts the member off from every client through the link (see `CutOffMode`); the proxy's rules stay. */
  cutOff(options: { readonly mode?: CutOffMode } = {}): void {
    this.link.cutOff(options.mode ?? DEFAULT_CUT_OFF_MODE);
  }

  /** Reconnects the member and removes every fault-proxy rule. */
  heal(): void {
    this.proxy.clear();
    this.link.heal();
  }

  /** A v1 Secret carrying `kubeconfig`, for the kubeconfigSecrets provider in the host cluster. */
  secretManifest(options: MemberSecretOptions): MemberSecretManifest {
    return memberSecretManifest(this.name, this.kubeconfig, options);
  }

  /**
   * The etcd key prefix of a custom resource on this member, for the consistency audit:
   * `/registry/<group>/<plural>/` on kube-apiserver, `/registry/apiextensions.kubernetes.io/<group>/<plural>/`
   * on the modern server (apiextensions-apiserver's own default `--etcd-prefix`).
   */
  etcdPrefix(resource: { readonly group: string; readonly plural: string }): string {
    const root = this.env.serverKind === 'modern' ? '/registry/apiextensions.kubernetes.io' : '/registry';
    return `${root}/${resource.group}/${resource.plural}/`;
  }

  /** Resident memory of this member's processes now (etcd and API servers), from /proc/<pid>/status. */
  async memory(): Promise<MemberMemory> {
    const processes = await Promise.all(this.env.pids().map(processMemory));
    const live = processes.filter((p): p is NonNullable<typeof p> => p !== undefined);
    return { rssBytes: live.reduce((sum, p) => sum + p.rssBytes, 0), processes: live };
  }

  /** @internal Closes this member's clients, link and proxy, then stops its control plane. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.allSettled([...this.clients].map((c) => c.close()));
    await this.link.close();
    await this.proxy.close();
    await this.env.stop();
  }

  private track(client: KubeClient): KubeClient {
    if (this.stopped) {
      void client.close().catch(() => {});
      throw new TestFleetError(`member ${this.name} is stopped`);
    }
    this.clients.add(client);
    return client;
  }
}

/** The proxy's kubeconfig pointed at the link, with the member's name on its cluster, user and context. */
function memberKubeconfig(name: string, through: KubeconfigObject, server: string): KubeconfigObject {
  const cluster = { ...through.clusters[0]!.cluster, server };
  const user = `${name}-admin`;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: user, user: { ...through.users[0]!.user } }],
    contexts: [{ name, context: { cluster: name, user, namespace: 'default' } }],
    'current-context': name,
  };
}

async function processMemory(
  pid: number,
): Promise<{ readonly pid: number; readonly name: string; readonly rssBytes: number } | undefined> {
  let status: string;
  try {
    status = await readFile(`/proc/${pid}/status`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (process.platform !== 'linux')
        throw new TestFleetError('member memory is read from /proc, which only Linux has', { cause: err });
      return undefined; // exited meanwhile
    }
    throw err;
  }
  const name = /^Name:\s+(.+)$/m.exec(status)?.[1] ?? 'unknown';
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1] ?? 0);
  return { pid, name, rssBytes: kb * 1024 };
}
