/**
 * Records a FakeClient's store history in etcd's shape, so the consistency audit's `analyzeHistory`
 * (written for real clusters) judges a simulated run unchanged.
 *
 * One watch per kind (deduplicated by storage: two versions of one group/kind share a keyspace, as
 * in etcd) turns each change into an etcd event:
 * - key: `registryKey(prefix, namespace, name)` with the prefix `/registry/<group>/<plural>/`
 *   (`/registry/<plural>/` for the core group; cluster-scoped objects are `<prefix><name>`), the
 *   layout the API server uses for custom resources. The plural comes from the client's REST mapper
 *   (the kinds it has registered), so an unregistered kind fails `start()` with NoKindMatchError.
 * - modRevision: the object's resourceVersion (the fake's one store-wide counter is etcd's revision).
 * - version: 1 on create, +1 per PUT; a DELETE ends the chain (its kv has version 0, as etcd's).
 * - createRevision: the revision of the chain's first PUT.
 * - value: the object as JSON bytes (written out when first read); `prev`: the key's previous kv.
 *
 * Objects that already exist at `start()` are recorded as PUTs at their resourceVersion with no
 * `prev`, `createRevision` 0 (unknown) and `version` {@link SNAPSHOT_VERSION}: not 1, so the audit
 * reads them as the first sight of a key whose earlier history it does not have (a chain start),
 * not as a create. Later PUTs of such a key count on from there.
 *
 * The recorder's list and watch requests go through the FakeClient like any other: they appear in
 * `store.requests` and pass its interceptors. Start it before the operator and before a fault layer
 * installs interceptors, and let the fault layer count the operator's calls on its own wrapper.
 * A watch the store ends (`closeWatches`) or fails (`expireWatches`, an interceptor's error) is
 * resumed from the last revision recorded for that kind, so nothing is lost while the fake still
 * has the history; if it no longer has it (410 on resume after `compact()` or a history window
 * smaller than the run), the history is incomplete and `flush()` rejects with
 * HistoryRecorderError — give the FakeClient a `watchHistoryLimit` above the run's writes.
 */
import { isGone } from '../../client/api-error.js';
import type { WatchEvent } from '../../client/watch-decoder.js';
import { AbortedError, OperatorRuntimeError } from '../../core/errors.js';
import { flushMicrotasks } from '../../core/fake-clock.js';
import type { KubeObject } from '../../core/object-key.js';
import { registryKey, type HistoryEvent, type HistoryKv } from '../chaos/consistency-audit.js';
import { withLazyValue } from '../chaos/history-values.js';
import type { FakeClient } from '../fake-client/fake-client.js';

export interface HistoryRecorderOptions {
  readonly store: FakeClient;
  /** Every kind whose history the audit should see (the operator's primary and owned kinds). */
  readonly kinds: readonly { readonly apiVersion: string; readonly kind: string }[];
}

/** etcd `version` given to objects found at `start()`: their real count since creation is unknown. */
export const SNAPSHOT_VERSION = 2;

/** Consecutive watch failures without a recorded event after which the history counts as incomplete. */
const MAX_FAILED_RESUMES = 3;

export class HistoryRecorderError extends OperatorRuntimeError {
  declare readonly code: 'ERR_HISTORY_RECORDER';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_HISTORY_RECORDER', message, options);
  }
}

interface Stream {
  readonly apiVersion: string;
  readonly kind: string;
  readonly prefix: string;
  readonly namespaced: boolean;
  /** Highest revision recorded (or listed) for this kind: a resumed watch starts here. */
  revision: number;
  /** Waiting for the next event on an empty watch (or finished): nothing of this kind is in flight. */
  idle: boolean;
}

export class HistoryRecorder {
  private readonly store: FakeClient;
  private readonly kinds: HistoryRecorderOptions['kinds'];
  private readonly recorded: HistoryEvent[] = [];
  /** Live chain per etcd key: the last PUT's kv. */
  private readonly live = new Map<string, HistoryKv>();
  private readonly streams: Stream[] = [];
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private failure: HistoryRecorderError | undefined;
  private started = false;

  constructor(options: HistoryRecorderOptions) {
    this.store = options.store;
    this.kinds = options.kinds;
  }

  /** Every recorded event, in revision order. */
  get events(): readonly HistoryEvent[] {
    return this.recorded;
  }

  /** Lists each kind, records what exists, then watches from the list's resourceVersion. */
  async start(): Promise<void> {
    if (this.started) throw new HistoryRecorderError('the history recorder was already started');
    this.started = true;
    const seen = new Set<string>();
    for (const type of this.kinds) {
      const mapping = await this.store.mapper.mapping(type);
      const prefix = mapping.group
        ? `/registry/${mapping.group}/${mapping.resource}/`
        : `/registry/${mapping.resource}/`;
      if (seen.has(prefix)) continue;
      seen.add(prefix);
      const list = await this.store.list(type, { signal: this.abort.signal });
      const stream: Stream = {
        apiVersion: type.apiVersion,
        kind: type.kind,
        prefix,
        namespaced: mapping.namespaced,
        revision: Number(list.resourceVersion),
        idle: false,
      };
      this.streams.push(stream);
      for (const obj of list.items) {
        const revision = Number(obj.metadata?.resourceVersion);
        const kv: HistoryKv = withValue(
          { key: this.keyOf(stream, obj), createRevision: 0, modRevision: revision, version: SNAPSHOT_VERSION },
          obj,
        );
        this.live.set(kv.key, kv);
        this.insert({ type: 'PUT', kv });
      }
    }
    for (const stream of this.streams) this.loops.push(this.follow(stream));
  }

  /**
   * Resolves once every change the store has made to the recorded kinds is recorded: the fake feeds
   * each watch synchronously at commit, so after the pending promise callbacks have run and every
   * watch waits on an empty queue, the history is complete up to `store.resourceVersion`. Call it
   * when the driver has settled the run (after its own flushMicrotasks), before reading `events`.
   * Rejects with HistoryRecorderError if the history is incomplete.
   */
  async flush(): Promise<void> {
    for (;;) {
      const before = this.recorded.length;
      await flushMicrotasks();
      if (this.failure) throw this.failure;
      if (this.recorded.length === before && this.streams.every((s) => s.idle)) return;
    }
  }

  /** Stops every watch; recorded events stay readable. */
  stop(): void {
    this.abort.abort(new AbortedError('history recorder stopped'));
  }

  private async follow(stream: Stream): Promise<void> {
    let failures = 0;
    while (!this.abort.signal.aborted) {
      let progressed = false;
      try {
        const watch = this.store.watch<KubeObject>(
          { apiVersion: stream.apiVersion, kind: stream.kind },
          { resourceVersion: String(stream.revision), signal: this.abort.signal },
        );
        const it = watch[Symbol.asyncIterator]();
        for (;;) {
          stream.idle = true;
          const next = await it.next();
          stream.idle = false;
          if (next.done) break;
          this.record(stream, next.value);
          progressed = true;
        }
      } catch (err) {
        stream.idle = false;
        if (this.abort.signal.aborted) break;
        failures = progressed ? 1 : failures + 1;
        if (failures >= MAX_FAILED_RESUMES) {
          this.failure = new HistoryRecorderError(
            `the ${stream.kind} history after revision ${stream.revision} could not be read ` +
              `(${isGone(err) ? 'the fake no longer has it: raise watchHistoryLimit, do not compact()' : String(err)}): the recorded history is incomplete`,
            { cause: err },
          );
          break;
        }
      }
    }
    stream.idle = true;
  }

  private record(stream: Stream, event: WatchEvent<KubeObject>): void {
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED' && event.type !== 'DELETED') return;
    const obj = event.object;
    const revision = Number(obj.metadata?.resourceVersion);
    // A resumed watch starts after `stream.revision`; this only guards against a replayed event.
    if (!(revision > stream.revision)) return;
    stream.revision = revision;
    const key = this.keyOf(stream, obj);
    const prev = this.live.get(key);
    if (event.type === 'DELETED') {
      this.live.delete(key);
      this.insert({
        type: 'DELETE',
        kv: { key, createRevision: 0, modRevision: revision, version: 0, value: new Uint8Array() },
        ...(prev ? { prev } : {}),
      });
      return;
    }
    const kv: HistoryKv = withValue(
      {
        key,
        createRevision: prev ? prev.createRevision : revision,
        modRevision: revision,
        version: prev ? prev.version + 1 : 1,
      },
      obj,
    );
    this.live.set(key, kv);
    this.insert({ type: 'PUT', kv, ...(prev ? { prev } : {}) });
  }

  private keyOf(stream: Stream, obj: KubeObject): string {
    const name = obj.metadata?.name ?? '';
    return stream.namespaced
      ? registryKey(stream.prefix, obj.metadata?.namespace ?? '', name)
      : `${stream.prefix}${name}`;
  }

  /** Keeps `recorded` in revision order: watches of different kinds are read in any interleaving. */
  private insert(event: HistoryEvent): void {
    let i = this.recorded.length;
    while (i > 0 && this.recorded[i - 1]!.kv.modRevision > event.kv.modRevision) i--;
    this.recorded.splice(i, 0, event);
  }
}

/**
 * The kv with the object as its etcd value, written out as JSON only if read: the oracles read the
 * object itself (it is the recorder's own copy, from its watch).
 */
function withValue(kv: Omit<HistoryKv, 'value'>, obj: KubeObject): HistoryKv {
  return withLazyValue(kv, obj as Record<string, unknown>);
}
