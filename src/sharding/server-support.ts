/**
 * Does the API server honour `shardSelector` (Kubernetes 1.36+ with the alpha feature gate
 * `ShardedListAndWatch`) for a kind? Servers without the feature — 1.20, or 1.36 with the gate
 * off — accept the parameter and ignore it, answering with every object, so a replica that trusted
 * it would cache (and reconcile) everyone's keys. The list's `shardInfo` would say so, but the
 * 1.36.4 server leaves it out of custom resource lists, so this asks in a way whose answer differs.
 *
 * Without creating anything, in at most two list requests of one item each:
 * 1. List one object unsharded (`limit=1`): the first object by key, and the snapshot's resourceVersion.
 * 2. List again at exactly that snapshot (`resourceVersionMatch=Exact`, `limit=1`) with a shard
 *    selector for the half of the hash space that does NOT hold that object. A server that ignores
 *    the selector must answer with that same first object; one that honours it never returns an
 *    object outside the range.
 * With no object to test with (an empty collection), or when the snapshot is already compacted
 * away (410), the second request instead carries a well-formed selector with start > end: a server
 * that parses selectors rejects it (1.36.4 answers 500 "invalid shard selector: …"), one that
 * ignores them answers the list.
 */
import { apiErrorStatus, isGone } from '../client/api-error.js';
import type { Reader } from '../client/contracts.js';
import type { ResourceType } from '../client/discovery.js';
import type { KubeObject } from '../core/object-key.js';
import {
  HASH_SPACE_END,
  formatShardSelector,
  hashRange,
  objectInRange,
  shardHash,
  type ShardKeyField,
} from '../client/shard-selector.js';
import { omitUndefined } from '../core/omit-undefined.js';

/** How the probe decided; `honoured` is the answer. */
export type ShardSelectorSupport =
  | {
      readonly honoured: true;
      /**
       * `shard-info`: the list echoed the selector; `filtered`: the object outside the range was left
       * out of the same snapshot; `rejected-invalid`: an invalid selector was refused.
       */
      readonly evidence: 'shard-info' | 'filtered' | 'rejected-invalid';
    }
  | {
      readonly honoured: false;
      /** `unfiltered`: an object outside the range came back; `accepted-invalid`: an invalid selector was answered. */
      readonly evidence: 'unfiltered' | 'accepted-invalid';
    };

export interface ShardSupportProbeOptions {
  /** List in this namespace only (for a replica allowed to list one namespace). */
  readonly namespace?: string;
  /** The field the selector hashes. @defaultValue 'uid' */
  readonly field?: ShardKeyField;
  readonly signal?: AbortSignal;
}

/** A syntactically valid selector whose range is empty (start > end): only a server that parses selectors refuses it. */
export const INVALID_PROBE_SELECTOR = "shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')";

/**
 * Asks the server whether it honours `shardSelector` on list (and so on watch: both go through the
 * same predicate) for `type`. Errors other than the probe's own refusal (403, 404, network) are
 * thrown: they say nothing about sharding.
 */
export async function probeShardSelectorSupport(
  client: Pick<Reader, 'listPage'>,
  type: ResourceType,
  options: ShardSupportProbeOptions = {},
): Promise<ShardSelectorSupport> {
  const field = options.field ?? 'uid';
  const scope = omitUndefined({ namespace: options.namespace || undefined, signal: options.signal });
  const first = await client.listPage<KubeObject>(type, { ...scope, limit: 1 });
  const item = first.items[0];
  if (item && first.resourceVersion) {
    const half = HASH_SPACE_END / 2n;
    const outside = shardHash(item, field) < half ? hashRange(half, HASH_SPACE_END) : hashRange(0n, half);
    const shardSelector = formatShardSelector(outside, field);
    try {
      const page = await client.listPage<KubeObject>(type, {
        ...scope,
        limit: 1,
        shardSelector,
        resourceVersion: first.resourceVersion,
        resourceVersionMatch: 'Exact',
      });
      if (page.shardInfo?.selector) return { honoured: true, evidence: 'shard-info' };
      const leaked = page.items.some((o) => !objectInRange(o, outside, field));
      return leaked ? { honoured: false, evidence: 'unfiltered' } : { honoured: true, evidence: 'filtered' };
    } catch (err) {
      if (!isGone(err)) throw err;
      // The snapshot was compacted between the two requests: ask the other way.
    }
  }
  try {
    await client.listPage(type, { ...scope, limit: 1, shardSelector: INVALID_PROBE_SELECTOR });
    return { honoured: false, evidence: 'accepted-invalid' };
  } catch (err) {
    const status = apiErrorStatus(err);
    if (
      (status === 400 || status === 422 || status === 500) &&
      err instanceof Error &&
      /shard selector/i.test(err.message)
    )
      return { honoured: true, evidence: 'rejected-invalid' };
    throw err;
  }
}
