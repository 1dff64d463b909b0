import type { Client } from '../../client/client.js';
import { isNotFound } from '../../client/api-error.js';
import { requeueAfter, type Result } from '../../controller/result.js';
import type { KubeObject } from '../../core/object-key.js';
import { silentLogger, type Logger } from '../../core/logger.js';
import { Manager } from '../../manager/manager.js';

/** @defaultValue 500 ms between a pod's creation and it reporting Ready */
export const DEFAULT_POD_READY_DELAY_MS = 500;
export const SIMULATED_NODE_NAME = 'operator-runtime-sim-node';

export interface PodSimulatorOptions {
  readonly client: Client;
  /** POSTs a pod's `binding` subresource (the client has no create-subresource call). */
  readonly bind: (namespace: string, pod: string, node: string) => Promise<void>;
  /** How long after creation a pod becomes Running and Ready. @defaultValue {@link DEFAULT_POD_READY_DELAY_MS} */
  readonly readyDelayMs?: number;
  readonly logger?: Logger;
}

interface Pod extends KubeObject {
  metadata: { name: string; namespace: string; creationTimestamp?: string; deletionTimestamp?: string; uid?: string };
  spec?: { nodeName?: string; containers?: { name: string; image?: string }[] };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

const POD = { apiVersion: 'v1', kind: 'Pod' };
const NODE = { apiVersion: 'v1', kind: 'Node' };

/**
 * Plays the scheduler and the kubelet for tests, as kwok does, so workloads behave on a control
 * plane without nodes: one Ready fake Node; pending pods are bound to it and, after
 * `readyDelayMs`, marked Running and Ready; pods being deleted are removed at once (what a kubelet
 * does once containers stopped). With kube-controller-manager, StatefulSets then report ready
 * replicas and recreate deleted pods. Written as an operator-runtime controller.
 */
export class PodSimulator {
  private readonly manager: Manager;
  private readonly readyDelayMs: number;

  constructor(private readonly options: PodSimulatorOptions) {
    this.readyDelayMs = options.readyDelayMs ?? DEFAULT_POD_READY_DELAY_MS;
    this.manager = new Manager({
      client: options.client,
      metricsPort: 0,
      healthPort: 0,
      logger: options.logger ?? silentLogger,
      gracefulShutdownMs: 2_000,
    });
    this.manager
      .controller('pod-simulator')
      .for(POD, { predicates: [] })
      .withOptions({ maxConcurrentReconciles: 4 })
      .complete((req, { signal }) => this.reconcilePod(req.namespace!, req.name, signal));
  }

  /** Registers the fake Node, then runs until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    await this.ensureNode(signal);
    await this.manager.start(signal);
  }

  private async reconcilePod(namespace: string, name: string, signal: AbortSignal): Promise<Result | void> {
    const pod = await this.manager.cache.get<Pod>(POD, { namespace, name }, { signal }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (!pod) return;
    const client = this.options.client;
    if (pod.metadata.deletionTimestamp) {
      await client
        .delete(POD, name, {
          namespace,
          gracePeriodSeconds: 0,
          preconditions: pod.metadata.uid ? { uid: pod.metadata.uid } : {},
          signal,
        })
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      return;
    }
    if (!pod.spec?.nodeName) {
      await this.options.bind(namespace, name, SIMULATED_NODE_NAME);
      // The binding's own event brings the pod back here.
      return;
    }
    if (pod.spec.nodeName !== SIMULATED_NODE_NAME) return;
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready && pod.status?.phase === 'Running') return;
    const created = pod.metadata.creationTimestamp ? Date.parse(pod.metadata.creationTimestamp) : Date.now();
    const wait = created + this.readyDelayMs - Date.now();
    if (wait > 0) return requeueAfter(wait);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: now, lastProbeTime: null });
    await client.patchStatus(
      POD,
      name,
      {
        status: {
          phase: 'Running',
          hostIP: '10.255.0.1',
          podIP: podIp(pod.metadata.uid ?? name),
          startTime: now,
          conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(condition),
          containerStatuses: (pod.spec.containers ?? []).map((c) => ({
            name: c.name,
            image: c.image ?? '',
            imageID: '',
            ready: true,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: now } },
          })),
        },
      },
      { namespace, type: 'merge', signal },
    );
  }

  private async ensureNode(signal: AbortSignal): Promise<void> {
    const client = this.options.client;
    try {
      await client.create(
        {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: SIMULATED_NODE_NAME,
            labels: { 'kubernetes.io/hostname': SIMULATED_NODE_NAME, type: 'simulated' },
          },
        },
        { signal },
      );
    } catch (err) {
      if ((err as { reason?: string }).reason !== 'AlreadyExists') throw err;
    }
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const capacity = { cpu: '64', memory: '256Gi', pods: '1000' };
    await client.patchStatus(
      NODE,
      SIMULATED_NODE_NAME,
      {
        status: {
          capacity,
          allocatable: capacity,
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'simulated by operator-runtime',
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
          addresses: [{ type: 'InternalIP', address: '10.255.0.1' }],
          nodeInfo: {
            kubeletVersion: 'v1.20.2-sim',
            architecture: 'amd64',
            operatingSystem: 'linux',
            containerRuntimeVersion: 'sim://1',
            kernelVersion: '',
            osImage: 'simulated',
            kubeProxyVersion: '',
            machineID: '',
            systemUUID: '',
            bootID: '',
          },
        },
      },
      { type: 'merge', signal },
    );
  }
}

/** A stable fake pod IP in 10.244.0.0/16 derived from the uid. */
function podIp(seed: string): string {
  let h = 0;
  for (const ch of seed) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return `10.244.${(h >>> 8) & 0xff}.${(h & 0xfe) + 1}`;
}
