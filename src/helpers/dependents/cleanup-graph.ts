/**
 * Finalization of the dependents' graph, in reverse dependency order: a dependent is deleted only
 * once everything that depends on it is gone (a StatefulSet before the ConfigMap it mounts, that
 * before the Secret), independent ones in parallel. `keep` dependents are left in place (and let go
 * of, if they still carry the primary as owner). A deleted object that still exists (finalizers,
 * graceful deletion) holds back what it depends on until a later pass finds it gone.
 */
import { throwIfAborted } from '../../core/abort.js';
import { removeOwnerReference } from '../owner-references.js';
import type { MetaObject } from '../meta-object.js';
import { buildDesired, describeObject, readCurrent, type DependentNode, type RunContext } from './dependent-node.js';

/** Where one dependent stands during cleanup. */
export interface CleanupState {
  readonly name: string;
  /** `gone`: absent; `deleting`: deleted but still there; `waiting`: its dependents are not gone yet; `kept`: left in place by its policy. */
  readonly state: 'gone' | 'deleting' | 'waiting' | 'kept';
}

export async function cleanupGraph(
  nodes: readonly DependentNode[],
  primary: MetaObject,
  run: RunContext,
): Promise<CleanupState[]> {
  // Forward first: `desired` names each object, and may read what its dependencies are now.
  const found = new Map<string, { desired: MetaObject; current: MetaObject | undefined }>();
  const objects = new Map<string, MetaObject>();
  for (const node of nodes) {
    throwIfAborted(run.signal);
    const desired = await buildDesired(node, primary, objects);
    const current = await readCurrent(node, desired, run);
    found.set(node.name, { desired, current });
    if (current) objects.set(node.name, current);
  }
  const outcomes = new Map<string, Promise<CleanupState>>();
  for (const node of [...nodes].reverse()) {
    outcomes.set(
      node.name,
      (async (): Promise<CleanupState> => {
        const after = await Promise.all(node.dependents.map((d) => outcomes.get(d)!));
        if (after.some((s) => s.state !== 'gone' && s.state !== 'kept')) return { name: node.name, state: 'waiting' };
        const { current } = found.get(node.name)!;
        if ((node.spec.onDelete ?? 'delete') === 'keep') {
          if (current) await release(node, current, primary, run);
          return { name: node.name, state: 'kept' };
        }
        if (!current) return { name: node.name, state: 'gone' };
        if (current.metadata?.deletionTimestamp) return { name: node.name, state: 'deleting' };
        throwIfAborted(run.signal);
        const response = await run.client.delete<MetaObject>(node.spec.kind, current.metadata!.name!, {
          namespace: current.metadata?.namespace,
          signal: run.signal,
          // What it owns goes too, after it (a Job's Pods): batch/v1 Jobs would default to Orphan.
          propagationPolicy: 'Background',
        });
        run.logger?.info(
          { dependent: node.name, kind: current.kind, object: current.metadata?.name },
          'dependent deleted',
        );
        return { name: node.name, state: stillThere(response) ? 'deleting' : 'gone' };
      })(),
    );
  }
  // Both promise chains reject only through the client or an abort: the first such error is the pass's.
  return Promise.all(nodes.map((n) => outcomes.get(n.name)!));
}

/**
 * Whether the object a DELETE answered with is still stored: finalizers left (ours, foreground
 * propagation's) or a grace period running (Pods). Without either the server removed it at once.
 */
function stillThere(response: unknown): boolean {
  const meta = (response as MetaObject | undefined)?.metadata;
  if (!meta || (response as { kind?: string }).kind === 'Status') return false;
  return (
    (meta.finalizers?.length ?? 0) > 0 ||
    ((meta as { deletionGracePeriodSeconds?: number }).deletionGracePeriodSeconds ?? 0) > 0
  );
}

/** A kept dependent that still names the primary as owner would go with it: remove that reference. */
async function release(node: DependentNode, current: MetaObject, primary: MetaObject, run: RunContext): Promise<void> {
  const copy = structuredClone(current);
  if (!removeOwnerReference(primary, copy)) return;
  await run.client.patch(
    node.spec.kind,
    current.metadata!.name!,
    {
      metadata: {
        resourceVersion: current.metadata?.resourceVersion,
        ownerReferences: copy.metadata?.ownerReferences ?? null,
      },
    },
    { type: 'merge', namespace: current.metadata?.namespace, signal: run.signal, fieldManager: run.fieldManager },
  );
  run.logger?.info({ dependent: node.name, object: describeObject(current) }, 'kept dependent released from its owner');
}
