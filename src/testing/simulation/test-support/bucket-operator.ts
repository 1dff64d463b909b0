/**
 * An operator whose work is outside the cluster, written the way a user with a cloud API writes
 * one, in a third style (a reconcile function over a small API interface, the finalizer through
 * `handleFinalizer`): a Bucket (`spec.region`, `versioning`, `retentionDays`) is a bucket in an
 * object-storage service, created, kept at the spec, and deleted — behind a finalizer — when the
 * Bucket goes. `status.phase` says whether the service has finished its work. The service is the
 * simulation's external service (external-service.ts: slow, failing, lying), reached through
 * {@link StorageApi}, the interface the operator would implement over HTTP in production.
 *
 * The correct operator names the bucket after the Bucket (`<namespace>.<name>`, as S3 buckets are
 * named by their owner): a create that failed, was answered 503 after it took effect, or raced a
 * stale read answers 409 the second time, and deleting needs nothing but that name.
 *
 * Planted bugs:
 * - `tag-lookup`: lets the service assign the id and finds its bucket by tag, creating one when the
 *   lookup finds none, with no idempotency key: a read from a replica behind (the service lying)
 *   misses a bucket made a moment ago, and a second one is made — the first leaks;
 * - `swallows-delete-error`: the cleanup behind the finalizer ignores the delete's error ("best
 *   effort"): when the service fails the call, the finalizer goes and the bucket leaks.
 */
import { isNotFound } from '../../../client/api-error.js';
import { kind } from '../../../client/kind.js';
import type { Client } from '../../../client/contracts.js';
import type { KubeObject } from '../../../core/object-key.js';
import { requeueAfter, type Result } from '../../../core/result.js';
import type { Clock } from '../../../core/clock.js';
import { handleFinalizer } from '../../../helpers/finalizer-flow.js';
import { patchStatus } from '../../../helpers/status.js';
import { Manager } from '../../../manager/manager.js';
import type { KindRegistration } from '../../fake-client/kind-registry.js';
import { generateScenario } from '../scenario-generator.js';
import type { ExternalRecord, ExternalService, ExternalServiceOptions } from '../external-service.js';
import { ExternalServiceError, isExternalNotFound } from '../external-service.js';
import { normalizeObject } from '../normalize-object.js';
import type { RunRecord } from '../simulation-records.js';
import type { OperatorSetup, SimulationOptions } from '../simulate.js';

export interface BucketSpec {
  region: 'eu' | 'us' | 'ap';
  versioning?: boolean;
  retentionDays?: number;
}

export interface Bucket extends KubeObject {
  metadata: NonNullable<KubeObject['metadata']> & { name: string; namespace: string };
  spec: BucketSpec;
  status?: { observedGeneration?: number; bucketId?: string; phase?: 'Provisioning' | 'Ready' };
}

export const BUCKET = kind<Bucket>('storage.example.com/v1', 'Bucket');
export const BUCKET_FINALIZER = 'storage.example.com/bucket';
/** The name the simulation's external service is declared under. */
export const STORAGE_SERVICE = 'storage';
const OWNER_TAG = 'owner-uid';
const POLL_MS = 500;
/**
 * A ready bucket is looked at again this often (drift detection, as Crossplane polls): one read of
 * an eventually consistent service, or a status write skipped against a stale cached status, must
 * not be the last word. The 1,000-seed run found both without it (seeds #782 and #912).
 */
const RESYNC_MS = 5_000;

export const BUCKET_KIND: KindRegistration = {
  apiVersion: BUCKET.apiVersion,
  kind: BUCKET.kind,
  plural: 'buckets',
  statusSubresource: true,
  schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['region'],
        properties: {
          region: { type: 'string', enum: ['eu', 'us', 'ap'] },
          versioning: { type: 'boolean' },
          retentionDays: { type: 'integer', minimum: 1, maximum: 30 },
        },
      },
      status: {
        type: 'object',
        properties: {
          observedGeneration: { type: 'integer' },
          bucketId: { type: 'string' },
          phase: { type: 'string' },
        },
      },
    },
  },
};

/** The object-storage API as the operator sees it (over HTTP in production). */
export interface StorageApi {
  create(
    spec: BucketSpec,
    options: { id?: string; tags: Record<string, string>; signal: AbortSignal },
  ): Promise<ExternalRecord<BucketSpec>>;
  get(id: string, signal: AbortSignal): Promise<ExternalRecord<BucketSpec> | undefined>;
  findByTag(tag: string, value: string, signal: AbortSignal): Promise<ExternalRecord<BucketSpec>[]>;
  update(id: string, spec: BucketSpec, signal: AbortSignal): Promise<ExternalRecord<BucketSpec>>;
  /** Resolves when the service has accepted the deletion; rejects with its error (404 included). */
  delete(id: string, signal: AbortSignal): Promise<void>;
}

/** {@link StorageApi} over the simulation's external service: the adapter a user writes once. */
export function simulatedStorageApi(service: ExternalService<BucketSpec>): StorageApi {
  return {
    create: (spec, { id, tags, signal }) => service.create(spec, { ...(id ? { id } : {}), tags, signal }),
    get: (id, signal) => service.get(id, { signal }),
    findByTag: (tag, value, signal) => service.list({ [tag]: value }, { signal }),
    update: (id, spec, signal) => service.update(id, spec, { signal }),
    delete: (id, signal) => service.delete(id, { signal }),
  };
}

export type BucketBug = 'tag-lookup' | 'swallows-delete-error';

export function bucketOperator(bug?: BucketBug): OperatorSetup {
  return ({ client, clock, logger, registry, service }) => {
    const manager = new Manager({ client, clock, logger, registry, metricsPort: 0, healthPort: 0 });
    const api = simulatedStorageApi(service<BucketSpec>(STORAGE_SERVICE));
    manager
      .controller('bucket')
      .for(BUCKET)
      .complete(async (_request, ctx) => {
        const bucket = await ctx.get();
        return bucket
          ? reconcileBucket(manager.client, manager.apiClient, clock, api, bucket, ctx.signal, bug)
          : undefined;
      });
    return manager;
  };
}

async function reconcileBucket(
  client: Client,
  direct: Client,
  clock: Clock,
  api: StorageApi,
  read: Bucket,
  signal: AbortSignal,
  bug: BucketBug | undefined,
): Promise<Result | void> {
  const step = await handleFinalizer(client, read, {
    name: BUCKET_FINALIZER,
    signal,
    retry: { clock },
    cleanup: (b) => deleteBucket(api, b, signal, bug),
  });
  if (step.kind === 'stop') return step.result;
  const bucket = step.object;
  const record = await ensureBucket(api, bucket, signal, bug, () => isLive(direct, bucket, signal));
  if (!record) return requeueAfter(POLL_MS);
  const phase = record.state === 'ready' ? 'Ready' : 'Provisioning';
  await patchStatus(client, bucket, { bucketId: record.id, phase }, { signal });
  return requeueAfter(phase === 'Ready' ? RESYNC_MS : POLL_MS);
}

/** The bucket as the spec asks, created or updated; undefined while the service is not ready for it. */
async function ensureBucket(
  api: StorageApi,
  bucket: Bucket,
  signal: AbortSignal,
  bug: BucketBug | undefined,
  live: () => Promise<boolean>,
): Promise<ExternalRecord<BucketSpec> | undefined> {
  const uid = bucket.metadata.uid!;
  const desired = desiredSpec(bucket);
  let record: ExternalRecord<BucketSpec> | undefined;
  if (bug === 'tag-lookup') {
    [record] = await api.findByTag(OWNER_TAG, uid, signal);
    record ??= await api.create(desired, { tags: { [OWNER_TAG]: uid }, signal });
  } else {
    const id = bucketId(bucket);
    record = await api.get(id, signal);
    if (!record) {
      // Nothing collects a bucket: make one only for a Bucket that lives now, with our finalizer.
      if (!(await live())) return undefined;
      try {
        record = await api.create(desired, { id, tags: { [OWNER_TAG]: uid }, signal });
      } catch (err) {
        // Made by an earlier attempt whose answer was lost, or not yet visible to the read above:
        // look again on the next poll.
        if (err instanceof ExternalServiceError && err.status === 409) return undefined;
        throw err;
      }
    }
    // The namesake of a deleted Bucket still going: wait for it.
    if (record.tags[OWNER_TAG] !== uid) return undefined;
  }
  if (record.state === 'deleting') return undefined;
  if (JSON.stringify(record.spec) !== JSON.stringify(desired)) record = await api.update(record.id, desired, signal);
  return record;
}

/** The cleanup behind the finalizer: done when the service has no bucket of this Bucket left. */
async function deleteBucket(
  api: StorageApi,
  bucket: Bucket,
  signal: AbortSignal,
  bug: BucketBug | undefined,
): Promise<Result | void> {
  const uid = bucket.metadata.uid!;
  const ids =
    bug === 'tag-lookup' ? (await api.findByTag(OWNER_TAG, uid, signal)).map((r) => r.id) : [bucketId(bucket)];
  let pending = false;
  for (const id of ids) {
    const record = bug === 'tag-lookup' ? undefined : await api.get(id, signal);
    if (record && record.tags[OWNER_TAG] !== uid) continue; // a namesake's, not ours
    if (record?.state === 'deleting') {
      pending = true;
      continue;
    }
    try {
      await api.delete(id, signal);
      pending = true;
    } catch (err) {
      if (isExternalNotFound(err)) continue;
      if (bug === 'swallows-delete-error') continue; // "best effort": the bucket leaks
      throw err;
    }
  }
  return pending ? requeueAfter(POLL_MS) : undefined;
}

/**
 * Read past the cache: the simulation found the first version of this operator, restarted
 * against a lagging cache, creating the bucket of a Bucket already deleted (seed #15 of the
 * generated scenarios; it was deleted by luck before the run ended).
 */
async function isLive(direct: Client, bucket: Bucket, signal: AbortSignal): Promise<boolean> {
  try {
    const now = await direct.get(BUCKET, bucket.metadata.name, { namespace: bucket.metadata.namespace, signal });
    return (
      now.metadata.uid === bucket.metadata.uid &&
      !now.metadata.deletionTimestamp &&
      (now.metadata.finalizers ?? []).includes(BUCKET_FINALIZER)
    );
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

function bucketId(bucket: Bucket): string {
  return `${bucket.metadata.namespace}.${bucket.metadata.name}`;
}

function desiredSpec(bucket: Bucket): BucketSpec {
  const { region, versioning, retentionDays } = bucket.spec;
  return {
    region,
    ...(versioning !== undefined ? { versioning } : {}),
    ...(retentionDays !== undefined ? { retentionDays } : {}),
  };
}

/**
 * What a Bucket user asks of the service: at the end, every live Bucket has exactly one bucket, at
 * its spec and ready, and no bucket is left whose Bucket is gone; over the run, no Bucket got two.
 */
export function bucketInvariants(objects: readonly KubeObject[], run: Pick<RunRecord, 'services'>): string[] {
  const storage = run.services?.[STORAGE_SERVICE];
  if (!storage) return ['the storage service was not declared'];
  const live = (objects.filter((o) => o.kind === BUCKET.kind) as Bucket[]).filter((b) => !b.metadata.deletionTimestamp);
  const byUid = new Map(live.map((b) => [b.metadata.uid!, b]));
  const records = storage.records.filter((r) => r.state !== 'deleting');
  const problems: string[] = [];
  for (const r of records)
    if (!byUid.has(r.tags[OWNER_TAG]!))
      problems.push(`bucket ${r.id} outlived its Bucket (uid ${r.tags[OWNER_TAG]}): leaked in the storage service`);
  for (const b of live) {
    const mine = records.filter((r) => r.tags[OWNER_TAG] === b.metadata.uid);
    const name = `${b.metadata.namespace}/${b.metadata.name}`;
    if (mine.length !== 1)
      problems.push(`Bucket ${name} has ${mine.length} buckets in the storage service (one wanted)`);
    for (const r of mine)
      if (JSON.stringify(r.spec) !== JSON.stringify(desiredSpec(b)) || r.state !== 'ready')
        problems.push(
          `bucket ${r.id} of Bucket ${name} is ${r.state} at ${JSON.stringify(r.spec)}, the spec says ${JSON.stringify(desiredSpec(b))}`,
        );
  }
  const created = new Map<string, string[]>();
  for (const r of storage.created) created.set(r.tags[OWNER_TAG]!, [...(created.get(r.tags[OWNER_TAG]!) ?? []), r.id]);
  for (const [uid, ids] of created)
    if (ids.length > 1)
      problems.push(`one Bucket (uid ${uid}) got ${ids.length} buckets (${ids.join(', ')}): one per Bucket`);
  return problems;
}

/** The storage service as the Bucket simulation declares it (the library's defaults: slow, failing, lying). */
export const STORAGE_SERVICE_OPTIONS: ExternalServiceOptions = {};

/** Generated scenarios (no hand-written one): creates, spec changes, deletes and re-creates of three Buckets. */
export const bucketScenario = (seed: number) => generateScenario({ kind: BUCKET_KIND, seed, stepGapMs: 1_500 });

/** The simulation of the Bucket operator (with `bug`, or the correct one), over generated scenarios. */
export function bucketSimulation(bug?: BucketBug): SimulationOptions {
  return {
    setup: bucketOperator(bug),
    scenario: bucketScenario,
    primaryKinds: [BUCKET],
    cluster: { kinds: [BUCKET_KIND] },
    services: { [STORAGE_SERVICE]: STORAGE_SERVICE_OPTIONS },
    // Server-assigned ids and timings differ between runs: the invariants judge the service's state.
    normalize: (obj) => {
      const { status, ...rest } = obj as Bucket;
      return normalizeObject({
        ...rest,
        ...(status ? { status: { ...status, bucketId: undefined } } : {}),
      } as KubeObject);
    },
    invariants: bucketInvariants,
  };
}
