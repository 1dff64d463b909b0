/**
 * Database-like custom objects as the API server sends them (metadata with managedFields, a spec
 * and a status with conditions), generated deterministically from an index, and an in-process
 * "wire" client that serves them as JSON text parsed by the real client's decoder — so strings,
 * numbers and object shapes in the cache are those of a real list response. For memory
 * measurements (memory-footprint.ts).
 */
import type { Client } from '../../client/contracts.js';
import { parseJson } from '../../client/lossless-json.js';
import { whenAborted } from '../../core/abort.js';
import type { KubeObject } from '../../core/object-key.js';

export const DATABASE_LIKE = { apiVersion: 'example.com/v1', kind: 'Database' } as const;

/**
 * `small`: a typical Database (~2.2 KB of JSON with managedFields). `large`: the same with a spec
 * carrying 40 configuration parameters and a longer status (~5.5 KB).
 */
export type DatabaseLikeSize = 'small' | 'large';

const pad = (i: number, width: number): string => String(i).padStart(width, '0');

/** A deterministic, realistic uid (36 characters, unique per index). */
function uid(i: number): string {
  const h = pad(i, 12);
  return `6f1c2a9e-${h.slice(0, 4)}-4b7d-9c3e-${h}`;
}

export type DatabaseLikeObject = KubeObject & { readonly spec: object; readonly status: object };

/** The object the API server would return for index `i` (managedFields included). */
export function databaseLike(i: number, size: DatabaseLikeSize = 'small'): DatabaseLikeObject {
  const name = `db-${pad(i, 6)}`;
  const namespace = `team-${pad(i % 50, 2)}`;
  const parameters: Record<string, string> = {};
  if (size === 'large')
    for (let p = 0; p < 40; p++) parameters[`parameter_${pad(p, 2)}`] = `value-${pad((i * 31 + p) % 9973, 4)}-units`;
  const fieldsSpec: Record<string, unknown> = { 'f:engine': {}, 'f:version': {}, 'f:replicas': {}, 'f:storage': {} };
  if (size === 'large')
    fieldsSpec['f:parameters'] = Object.fromEntries(Object.keys(parameters).map((k) => [`f:${k}`, {}]));
  return {
    apiVersion: DATABASE_LIKE.apiVersion,
    kind: DATABASE_LIKE.kind,
    metadata: {
      name,
      namespace,
      uid: uid(i),
      resourceVersion: String(100_000 + i),
      generation: 3,
      creationTimestamp: '2026-11-20T08:15:30Z',
      labels: {
        'app.kubernetes.io/name': 'database',
        'app.kubernetes.io/instance': name,
        tier: i % 3 ? 'standard' : 'gold',
      },
      annotations: { 'example.com/owner': `owner-${i % 200}@example.com` },
      finalizers: ['example.com/backup-before-delete'],
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'example.com/v1',
          time: '2026-11-20T08:15:30Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app.kubernetes.io/name': {}, 'f:tier': {} } },
            'f:spec': { '.': {}, ...fieldsSpec },
          },
        },
        {
          manager: 'database-operator',
          operation: 'Update',
          apiVersion: 'example.com/v1',
          time: '2026-11-20T08:16:02Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:finalizers': { '.': {}, 'v:"example.com/backup-before-delete"': {} } },
          },
        },
        {
          manager: 'database-operator',
          operation: 'Update',
          apiVersion: 'example.com/v1',
          time: '2026-11-20T08:16:40Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:status': {
              '.': {},
              'f:conditions': {},
              'f:observedGeneration': {},
              'f:phase': {},
              'f:readyReplicas': {},
            },
          },
          subresource: 'status',
        },
      ],
    },
    spec: {
      engine: i % 2 ? 'postgres' : 'mysql',
      version: i % 2 ? '16' : '8.4',
      replicas: 1 + (i % 3),
      storage: { size: `${10 + (i % 90)}Gi`, storageClassName: 'standard-rwo' },
      ...(size === 'large' ? { parameters } : {}),
    },
    status: {
      phase: 'Ready',
      readyReplicas: 1 + (i % 3),
      observedGeneration: 3,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'AllReplicasReady',
          message:
            size === 'large'
              ? `all ${1 + (i % 3)} replicas are ready and serving traffic on port 5432 since the last rollout`
              : 'ok',
          lastTransitionTime: '2026-11-20T08:16:40Z',
          observedGeneration: 3,
        },
        {
          type: 'BackedUp',
          status: 'True',
          reason: 'BackupSucceeded',
          message: `backup ${name}-20261120 completed`,
          lastTransitionTime: '2026-11-20T09:00:00Z',
          observedGeneration: 3,
        },
      ],
    },
  };
}

/** Objects per page when a list asks for no limit (the watcher always does). */
const PAGE_SIZE_WHEN_UNSET = 500;

export interface WireClientOptions {
  readonly objects: number;
  readonly size?: DatabaseLikeSize;
  /** Keep each page's JSON text for the next list (see below). @defaultValue false */
  readonly keepPages?: boolean;
}

/**
 * A client whose lists serve `objects` Database-like objects, each page as JSON text decoded by the
 * real client's `parseJson`, as the transport does with a response body; watches stay open and
 * silent until aborted (an idle cluster). With `keepPages`, a page's text is made once and kept, so
 * a second list costs only the decoding (a measurement that warms up with one list then sees only
 * the cache grow); without, the client holds nothing between lists.
 */
export function wireClient(options: WireClientOptions): Client {
  const { objects, size = 'small', keepPages = false } = options;
  const pages = new Map<string, string>();
  const pageText = (offset: number, end: number): string => {
    const id = `${offset}-${end}`;
    let text = pages.get(id);
    if (text === undefined) {
      const items: KubeObject[] = [];
      for (let i = offset; i < end; i++) items.push(databaseLike(i, size));
      text = JSON.stringify({
        apiVersion: DATABASE_LIKE.apiVersion,
        kind: 'DatabaseList',
        metadata: { resourceVersion: '200000', ...(end < objects ? { continue: String(end) } : {}) },
        items,
      });
      if (keepPages) pages.set(id, text);
    }
    return text;
  };
  const client = {
    listPage: (_type: unknown, opts: { limit?: number; continue?: string }) => {
      const offset = opts.continue ? Number(opts.continue) : 0;
      const end = Math.min(objects, offset + (opts.limit || PAGE_SIZE_WHEN_UNSET));
      const list = parseJson(pageText(offset, end)) as {
        items: KubeObject[];
        metadata: { resourceVersion: string; continue?: string };
      };
      return Promise.resolve({
        items: list.items,
        resourceVersion: list.metadata.resourceVersion,
        ...(list.metadata.continue ? { continue: list.metadata.continue } : {}),
      });
    },
    watch: (_type: unknown, opts: { signal?: AbortSignal }) => ({
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          if (opts.signal) await whenAborted(opts.signal);
          return { done: true as const, value: undefined };
        },
        return: () => Promise.resolve({ done: true as const, value: undefined }),
      }),
    }),
  };
  // Only listPage and watch are ever called by the cache; the rest of Client is not needed here.
  return client as unknown as Client;
}
