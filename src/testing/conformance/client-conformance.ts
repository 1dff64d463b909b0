/**
 * One conformance suite for every implementation of `Client`: the same node:test tests run against
 * the fake client (in memory) and against KubeClient talking to a real kube-apiserver (TestEnv).
 * A behaviour the fake gets wrong fails here, not in a user's production cluster. Each test works
 * in a namespace of its own, so the suite runs against a shared API server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Client } from '../../client/client.js';
import {
  ApiError,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  type StatusBody,
} from '../../client/api-error.js';
import type { WatchEvent } from '../../client/watch-decoder.js';
import { isNoKindMatch } from '../../client/discovery.js';
import { InvalidOptionError } from '../../core/errors.js';
import { formatShardSelector, objectInRange, splitHashSpace, type HashRange } from '../../client/shard-selector.js';
import { omitUndefined } from '../../core/omit-undefined.js';

/** What a conformance run needs from an implementation. */
export interface ConformanceTarget {
  readonly client: Client;
  /** Releases what `setup` started (called once, after the last test). */
  cleanup(): Promise<void>;
  /**
   * Compacts history at the current resourceVersion (etcd compaction; `FakeClient.compact()`), so
   * list snapshots from before it are gone. Tests that need it are skipped without it.
   */
  compact?(): Promise<void>;
}

/**
 * example.com/v1 Widget: namespaced, with `/status`, `spec.size` 1–10 and `spec.color` an enum. The
 * suite's own fixture (the quickstart's CRD looks the same but is the quickstart's to change).
 */
export const WIDGET_CRD: Record<string, unknown> = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: 'Observed', type: 'integer', jsonPath: '.status.observedGeneration' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: {
                  size: { type: 'integer', minimum: 1, maximum: 10 },
                  color: { type: 'string', enum: ['red', 'green', 'blue'] },
                },
              },
              status: {
                type: 'object',
                properties: { observedGeneration: { type: 'integer' }, message: { type: 'string' } },
              },
            },
          },
        },
      },
    ],
  },
};

/**
 * example.com/v1 Note: a namespaced custom resource shaped like a ConfigMap (`data`: string map),
 * standing in for ConfigMaps on a server without core kinds, so the generic tests run there too.
 */
export const NOTE_CRD: Record<string, unknown> = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'notes.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'notes', singular: 'note', kind: 'Note' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { data: { type: 'object', additionalProperties: { type: 'string' } } },
          },
        },
      },
    ],
  },
};

/** The CRD manifests a target must serve (install them in `setup`). */
export async function conformanceCrds(): Promise<Record<string, unknown>[]> {
  return [WIDGET_CRD, NOTE_CRD];
}

/** How a target differs from a full API server. */
export interface ConformanceOptions {
  /**
   * The target serves core kinds (Namespace, ConfigMap, Deployment). When false (the CRD-only
   * modern server), generic tests use the Note custom resource instead of ConfigMaps, namespaces
   * are just names, and tests of built-in-kind behaviour are skipped with a reason naming `server`.
   * @defaultValue true
   */
  readonly coreKinds?: boolean;
  /** Names the server in skip reasons, e.g. 'Kubernetes 1.36 apiextensions-apiserver'. */
  readonly server?: string;
  /**
   * What a continue token from before an etcd compaction gets: `'expired'` (410, the list starts
   * over; Kubernetes 1.20 and the fake) or `'snapshot'` (the rest of the same snapshot: Kubernetes
   * 1.34+ serves paged lists from watch-cache snapshots, which a compaction does not touch).
   * @defaultValue 'expired'
   */
  readonly continueAfterCompaction?: 'expired' | 'snapshot';
  /**
   * The server honours `fieldValidation` (Kubernetes 1.25+ and the fake); when false (1.20), its
   * test is skipped with a reason naming `server`. @defaultValue true
   */
  readonly fieldValidation?: boolean;
  /**
   * The server honours `shardSelector` (Kubernetes 1.36 started with the `ShardedListAndWatch`
   * feature gate, and the fake). 1.20 and 1.36 without the gate ignore the parameter, so the test
   * is skipped there. @defaultValue false
   */
  readonly shardedListAndWatch?: boolean;
}

const CM = { apiVersion: 'v1', kind: 'ConfigMap' } as const;
const NOTE = { apiVersion: 'example.com/v1', kind: 'Note' } as const;
const WIDGET = { apiVersion: 'example.com/v1', kind: 'Widget' } as const;
const NS = { apiVersion: 'v1', kind: 'Namespace' } as const;

interface Meta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  finalizers?: string[];
  managedFields?: { manager?: string; operation?: string }[];
}

interface ConfigMap {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  data?: Record<string, string>;
}

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: Meta;
  spec?: { size?: number; color?: string; [extra: string]: unknown };
  status?: { observedGeneration?: number; message?: string };
}

/** Bounds every wait on the real server; never hit when things work. */
const WAIT_MS = 15_000;

function apiStatus(status: number, reason?: string): (e: unknown) => boolean {
  return (e: unknown) => e instanceof ApiError && e.status === status && (reason === undefined || e.reason === reason);
}

/**
 * Reads a watch until `done` says the events so far are complete. Only used with writes made
 * before the watch starts (replayed from a resourceVersion), so nothing here waits on timing.
 */
async function readWatch<T>(
  events: AsyncIterable<WatchEvent<T>>,
  done: (seen: WatchEvent<T>[]) => boolean,
): Promise<WatchEvent<T>[]> {
  const seen: WatchEvent<T>[] = [];
  for await (const e of events) {
    seen.push(e);
    if (done(seen)) break;
  }
  return seen;
}

function summary(events: WatchEvent<{ metadata?: Meta }>[]): string[] {
  return events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`);
}

/**
 * Registers the conformance tests under `describe(name)`. `setup` runs once before them (in
 * `before`) and must serve the CRDs of `conformanceCrds()`; its `cleanup` runs once after.
 */
export function describeClientConformance(
  name: string,
  setup: () => Promise<ConformanceTarget>,
  options: ConformanceOptions = {},
): void {
  const coreKinds = options.coreKinds ?? true;
  /** The plain namespaced kind of the generic tests: ConfigMap, or Note where there are no core kinds. */
  const plain = coreKinds ? CM : NOTE;
  /** How the server names the plain kind in a Status's details. */
  const plainDetails: { group?: string; kind: string } = coreKinds
    ? { kind: 'configmaps' }
    : { group: 'example.com', kind: 'notes' };
  /** A test of built-in-kind behaviour: skipped, with the reason, on a server without core kinds. */
  const coreTest = (title: string, fn: () => Promise<void>): void => {
    test(title, coreKinds ? {} : { skip: `${options.server ?? 'this server'} serves no core kinds` }, fn);
  };
  describe(name, () => {
    let target: ConformanceTarget | undefined;
    let client: Client;
    const run = randomBytes(3).toString('hex');
    let namespaces = 0;

    /** A fresh namespace for one test (a name only, where there is no Namespace kind). */
    async function namespace(): Promise<string> {
      const ns = `conf-${run}-${++namespaces}`;
      if (coreKinds) await client.create({ ...NS, metadata: { name: ns } });
      return ns;
    }

    function widget(ns: string, name: string, spec: Widget['spec'] = { size: 1 }, meta: Meta = {}): Widget {
      return { ...WIDGET, metadata: { ...meta, name, namespace: ns }, spec };
    }

    before(async () => {
      target = await setup();
      client = target.client;
    });
    after(async () => {
      await target?.cleanup();
    });

    coreTest(
      'a ConfigMap is created with server-set uid, resourceVersion and creationTimestamp, read, updated, listed and deleted',
      async () => {
        const ns = await namespace();
        const created = await client.create<ConfigMap>({
          ...CM,
          metadata: { name: 'a', namespace: ns, labels: { app: 'x' } },
          data: { k: '1' },
        });
        assert.match(created.metadata?.uid ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        assert.ok(created.metadata?.resourceVersion);
        assert.match(created.metadata?.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        assert.equal(created.metadata?.generation, undefined, 'ConfigMaps have no generation');
        const got = await client.get<ConfigMap>(CM, 'a', { namespace: ns });
        assert.deepEqual(got, created);
        const updated = await client.update<ConfigMap>({ ...got, data: { k: '2' } });
        assert.equal(updated.data?.k, '2');
        assert.notEqual(updated.metadata?.resourceVersion, got.metadata?.resourceVersion);
        assert.equal(updated.metadata?.uid, created.metadata?.uid);
        const listed = await client.list<ConfigMap>(CM, { namespace: ns });
        assert.deepEqual(
          listed.items.map((i) => [i.apiVersion, i.kind, i.metadata?.name, i.data?.k]),
          [['v1', 'ConfigMap', 'a', '2']],
        );
        const status = (await client.delete(CM, 'a', { namespace: ns })) as StatusBody;
        assert.equal(status.kind, 'Status');
        assert.equal(status.status, 'Success');
        assert.deepEqual(status.details, { name: 'a', kind: 'configmaps', uid: created.metadata?.uid });
        await assert.rejects(client.get(CM, 'a', { namespace: ns }), isNotFound);
      },
    );

    test('a custom resource is created with generation 1 and without the status it was sent with, and round-trips', async () => {
      const ns = await namespace();
      const created = await client.create<Widget>({
        ...widget(ns, 'w', { size: 2, color: 'red' }),
        status: { message: 'ignored' },
      });
      assert.equal(created.metadata?.generation, 1);
      assert.equal(created.status, undefined, 'create ignores status when the kind has a status subresource');
      assert.deepEqual(created.spec, { size: 2, color: 'red' });
      assert.deepEqual(await client.get<Widget>(WIDGET, 'w', { namespace: ns }), created);
      const viaStatus = await client.get<Widget>(WIDGET, 'w', { namespace: ns, subresource: 'status' });
      assert.equal(viaStatus.metadata?.uid, created.metadata?.uid);
      const status = (await client.delete(WIDGET, 'w', { namespace: ns })) as StatusBody;
      assert.deepEqual(status.details, {
        name: 'w',
        group: 'example.com',
        kind: 'widgets',
        uid: created.metadata?.uid,
      });
      await assert.rejects(client.get(WIDGET, 'w', { namespace: ns }), isNotFound);
    });

    test('generation rises on a spec change only: not on metadata changes, not on /status writes', async () => {
      const ns = await namespace();
      const w1 = await client.create<Widget>(widget(ns, 'w'));
      const w2 = await client.update<Widget>({ ...w1, spec: { size: 3 } });
      assert.equal(w2.metadata?.generation, 2);
      const w3 = await client.update<Widget>({
        ...w2,
        metadata: { ...w2.metadata, labels: { l: '1' }, generation: 99 },
      });
      assert.equal(w3.metadata?.generation, 2, 'a label change (and a client-set generation) leaves generation alone');
      const s1 = await client.updateStatus<Widget>({ ...w3, status: { observedGeneration: 2, message: 'ok' } });
      assert.equal(s1.metadata?.generation, 2);
      const s2 = await client.patchStatus<Widget>(WIDGET, 'w', { status: { message: 'patched' } }, { namespace: ns });
      assert.equal(s2.metadata?.generation, 2);
      assert.equal(s2.status?.observedGeneration, 2, 'a merge patch of status keeps the other status fields');
      const w4 = await client.patch<Widget>(WIDGET, 'w', { spec: { size: 4 } }, { type: 'merge', namespace: ns });
      assert.equal(w4.metadata?.generation, 3);
    });

    test('a /status write changes only status, and a main-resource write leaves status alone', async () => {
      const ns = await namespace();
      const w = await client.create<Widget>(widget(ns, 'w', { size: 2 }));
      const s = await client.updateStatus<Widget>({
        ...w,
        metadata: { ...w.metadata, labels: { sneaky: 'yes' } },
        spec: { size: 9 },
        status: { message: 'hi' },
      });
      assert.deepEqual(s.spec, { size: 2 }, 'spec in a status write is ignored');
      assert.equal(s.metadata?.labels, undefined, 'metadata in a status write is ignored');
      assert.equal(s.status?.message, 'hi');
      const p = await client.patchStatus<Widget>(
        WIDGET,
        'w',
        { spec: { size: 7 }, status: { message: 'p' } },
        { namespace: ns },
      );
      assert.deepEqual([p.spec?.size, p.status?.message], [2, 'p']);
      const u = await client.update<Widget>({ ...p, spec: { size: 5 }, status: { message: 'from main' } });
      assert.deepEqual([u.spec?.size, u.status?.message], [5, 'p'], 'status in a main-resource update is ignored');
      const m = await client.patch<Widget>(
        WIDGET,
        'w',
        { status: { message: 'merge on main' } },
        { type: 'merge', namespace: ns },
      );
      assert.equal(m.status?.message, 'p');
      assert.equal(
        m.metadata?.resourceVersion,
        u.metadata?.resourceVersion,
        'a patch that changes nothing writes nothing',
      );
    });

    test('an update that changes nothing keeps the resourceVersion', async () => {
      const ns = await namespace();
      const cm = await client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns }, data: { k: 'v' } });
      const same = await client.update<ConfigMap>({ ...cm });
      assert.equal(same.metadata?.resourceVersion, cm.metadata?.resourceVersion);
      const w = await client.create<Widget>(widget(ns, 'w'));
      const sameStatus = await client.updateStatus<Widget>({ ...w });
      assert.equal(sameStatus.metadata?.resourceVersion, w.metadata?.resourceVersion);
    });

    test('a write carrying a stale resourceVersion fails with 409 Conflict (update, status update, merge patch)', async () => {
      const ns = await namespace();
      const cm = await client.create<ConfigMap>({ ...plain, metadata: { name: 'c', namespace: ns }, data: { v: '1' } });
      await client.update<ConfigMap>({ ...cm, data: { v: '2' } });
      await assert.rejects(client.update<ConfigMap>({ ...cm, data: { v: '3' } }), (e: unknown) => {
        assert.ok(e instanceof ApiError && isConflict(e) && e.reason === 'Conflict');
        assert.deepEqual(e.details, { name: 'c', ...plainDetails });
        return true;
      });
      assert.equal(
        (await client.get<ConfigMap>(plain, 'c', { namespace: ns })).data?.v,
        '2',
        'the stale write changed nothing',
      );
      const w = await client.create<Widget>(widget(ns, 'w'));
      await client.update<Widget>({ ...w, spec: { size: 2 } });
      await assert.rejects(client.update<Widget>({ ...w, spec: { size: 3 } }), isConflict);
      await assert.rejects(client.updateStatus<Widget>({ ...w, status: { message: 'stale' } }), isConflict);
      await assert.rejects(
        client.patch(
          WIDGET,
          'w',
          { metadata: { resourceVersion: w.metadata?.resourceVersion }, spec: { size: 5 } },
          { type: 'merge', namespace: ns },
        ),
        isConflict,
        'a resourceVersion inside a patch is a precondition',
      );
    });

    test('two concurrent writers from the same read: exactly one wins, the other gets 409 and changed nothing', async () => {
      const ns = await namespace();
      const read = await client.create<Widget>(widget(ns, 'w', { size: 1 }, { finalizers: ['example.com/a'] }));
      const results = await Promise.allSettled([
        client.update<Widget>({
          ...read,
          metadata: { ...read.metadata, finalizers: ['example.com/a', 'example.com/b'] },
        }),
        client.update<Widget>({
          ...read,
          metadata: { ...read.metadata, finalizers: ['example.com/a', 'example.com/c'] },
        }),
      ]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1);
      assert.equal(lost.length, 1);
      assert.ok(isConflict(lost[0]!.reason));
      const now = await client.get<Widget>(WIDGET, 'w', { namespace: ns });
      assert.deepEqual(now.metadata?.finalizers, (won[0] as PromiseFulfilledResult<Widget>).value.metadata?.finalizers);
    });

    coreTest(
      'an update without resourceVersion: refused by the client unless allowed; then 422 for a custom resource, applied for a ConfigMap',
      async () => {
        const ns = await namespace();
        const w = await client.create<Widget>(widget(ns, 'w'));
        const bare: Widget = { ...WIDGET, metadata: { name: 'w', namespace: ns }, spec: { size: 2 } };
        await assert.rejects(client.update(bare), InvalidOptionError);
        await assert.rejects(client.update(bare, { allowUnconditional: true }), (e: unknown) => {
          assert.ok(e instanceof ApiError && isInvalid(e) && e.status === 422);
          assert.deepEqual(
            e.details?.causes?.map((c) => c.field),
            ['metadata.resourceVersion'],
          );
          return true;
        });
        await assert.rejects(
          client.updateStatus({ ...bare, status: { message: 'x' } }, { allowUnconditional: true }),
          isInvalid,
        );
        assert.equal(
          (await client.get<Widget>(WIDGET, 'w', { namespace: ns })).metadata?.resourceVersion,
          w.metadata?.resourceVersion,
        );
        const cm = await client.create<ConfigMap>({ ...CM, metadata: { name: 'c', namespace: ns }, data: { v: '1' } });
        const overwritten = await client.update<ConfigMap>(
          { ...CM, metadata: { name: 'c', namespace: ns }, data: { v: '2' } },
          { allowUnconditional: true },
        );
        assert.equal(overwritten.data?.v, '2');
        assert.notEqual(overwritten.metadata?.resourceVersion, cm.metadata?.resourceVersion);
        assert.equal(overwritten.metadata?.uid, cm.metadata?.uid);
      },
    );

    test('a missing object is a 404 NotFound naming the resource, for every verb', async () => {
      const ns = await namespace();
      const check = (name: string, resource: string, group?: string) => (e: unknown) => {
        assert.ok(e instanceof ApiError && isNotFound(e) && e.reason === 'NotFound', String(e));
        assert.deepEqual(e.details, { name, ...omitUndefined({ group: group || undefined }), kind: resource });
        return true;
      };
      await assert.rejects(
        client.get(plain, 'nope', { namespace: ns }),
        check('nope', plainDetails.kind, plainDetails.group),
      );
      await assert.rejects(client.get(WIDGET, 'nope', { namespace: ns }), check('nope', 'widgets', 'example.com'));
      await assert.rejects(
        client.update({ ...plain, metadata: { name: 'nope', namespace: ns, resourceVersion: '1' } }),
        check('nope', plainDetails.kind, plainDetails.group),
      );
      await assert.rejects(
        client.patch(WIDGET, 'nope', { spec: { size: 2 } }, { type: 'merge', namespace: ns }),
        check('nope', 'widgets', 'example.com'),
      );
      await assert.rejects(
        client.patch(WIDGET, 'nope', [{ op: 'remove', path: '/spec' }], { type: 'json', namespace: ns }),
        isNotFound,
      );
      await assert.rejects(client.delete(WIDGET, 'nope', { namespace: ns }), check('nope', 'widgets', 'example.com'));
      const cm = await client.create<ConfigMap>({ ...plain, metadata: { name: 'c', namespace: ns } });
      await assert.rejects(client.updateStatus(cm), apiStatus(404, 'NotFound'), `${plain.kind}s have no /status`);
    });

    test('creating an existing name fails with 409 AlreadyExists, which is not a Conflict', async () => {
      const ns = await namespace();
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns } });
      await assert.rejects(
        client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns } }),
        (e: unknown) => {
          assert.ok(e instanceof ApiError && e.status === 409 && isAlreadyExists(e) && !isConflict(e));
          assert.deepEqual(e.details, { name: 'a', ...plainDetails });
          return true;
        },
      );
      await client.create<Widget>(widget(ns, 'w'));
      await assert.rejects(client.create<Widget>(widget(ns, 'w')), isAlreadyExists);
    });

    test('generateName yields distinct names with the prefix and five random characters', async () => {
      const ns = await namespace();
      const a = await client.create<ConfigMap>({ ...plain, metadata: { generateName: 'gen-', namespace: ns } });
      const b = await client.create<Widget>({
        ...WIDGET,
        metadata: { generateName: 'gen-', namespace: ns },
        spec: { size: 1 },
      });
      const c = await client.create<ConfigMap>({ ...plain, metadata: { generateName: 'gen-', namespace: ns } });
      for (const o of [a, b, c]) assert.match(o.metadata?.name ?? '', /^gen-[a-z0-9]{5}$/);
      assert.notEqual(a.metadata?.name, c.metadata?.name);
      const named = await client.create<ConfigMap>({
        ...plain,
        metadata: { name: 'explicit', generateName: 'gen-', namespace: ns },
      });
      assert.equal(named.metadata?.name, 'explicit', 'a name wins over generateName');
    });

    test(
      "fieldValidation: 'Strict' rejects unknown fields with a 400 naming them all, 'Warn' stores the pruned object and reports each field as a warning, 'Ignore' prunes silently",
      (options.fieldValidation ?? true)
        ? {}
        : { skip: `${options.server ?? 'this server'} predates server-side field validation (Kubernetes 1.25)` },
      async () => {
        const ns = await namespace();
        const bogus = { ...widget(ns, 's', { size: 1, bogus: 1 }), extra: true } as Widget;
        await assert.rejects(client.create(bogus, { fieldValidation: 'Strict' }), (e: unknown) => {
          assert.ok(e instanceof ApiError && e.status === 400 && e.reason === 'BadRequest', String(e));
          assert.ok(
            e.message.startsWith(
              '400 BadRequest: Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "extra", unknown field "spec.bogus" (',
            ),
            e.message,
          );
          return true;
        });
        await assert.rejects(
          client.get(WIDGET, 's', { namespace: ns }),
          isNotFound,
          'a Strict rejection stores nothing',
        );
        const warnings: string[] = [];
        const warned = await client.create<Widget>(bogus, {
          fieldValidation: 'Warn',
          onWarnings: (w) => warnings.push(...w),
        });
        assert.deepEqual(warnings, ['unknown field "extra"', 'unknown field "spec.bogus"']);
        assert.deepEqual(warned.spec, { size: 1 });
        const changed = { ...warned, spec: { size: 2, bogus: 2 } } as Widget;
        await assert.rejects(client.update(changed, { fieldValidation: 'Strict' }), (e: unknown) => {
          assert.ok(e instanceof ApiError && e.status === 400, String(e));
          assert.ok(
            e.message.startsWith(
              '400 BadRequest: Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus" (',
            ),
            e.message,
          );
          return true;
        });
        const silent: string[] = [];
        const ignored = await client.update<Widget>(changed, {
          fieldValidation: 'Ignore',
          onWarnings: (w) => silent.push(...w),
        });
        assert.deepEqual(silent, []);
        assert.deepEqual(ignored.spec, { size: 2 });
      },
    );

    test('invalid objects fail with 422 naming the fields; unknown custom resource fields are pruned', async () => {
      const ns = await namespace();
      await assert.rejects(client.create(widget(ns, 'big', { size: 50 })), (e: unknown) => {
        assert.ok(e instanceof ApiError && isInvalid(e));
        assert.deepEqual(
          e.details?.causes?.map((c) => c.field),
          ['spec.size'],
        );
        return true;
      });
      await assert.rejects(client.create(widget(ns, 'pink', { size: 0, color: 'pink' })), (e: unknown) => {
        assert.ok(e instanceof ApiError && isInvalid(e));
        // The server does not promise an order of causes.
        assert.deepEqual(e.details?.causes?.map((c) => c.field).sort(), ['spec.color', 'spec.size']);
        return true;
      });
      await assert.rejects(
        client.create({ ...plain, metadata: { name: 'Not_A_Name', namespace: ns } }),
        (e: unknown) => {
          assert.ok(isInvalid(e));
          assert.deepEqual(
            (e as ApiError).details?.causes?.map((c) => c.field),
            ['metadata.name'],
          );
          return true;
        },
      );
      const pruned = await client.create<Widget>(widget(ns, 'w', { size: 1, bogus: 'dropped' }));
      assert.deepEqual(pruned.spec, { size: 1 });
      await assert.rejects(
        client.patch(WIDGET, 'w', { spec: { size: 11 } }, { type: 'merge', namespace: ns }),
        isInvalid,
      );
    });

    test('metadata is validated: label keys and values, annotation keys, finalizer names, owner references', async () => {
      const ns = await namespace();
      const fields = (e: unknown): string[] => {
        assert.ok(e instanceof ApiError && isInvalid(e), String(e));
        return (e.details?.causes ?? []).map((c) => c.field ?? '');
      };
      const rejects = async (obj: object, field: string): Promise<void> => {
        await assert.rejects(client.create(obj as ConfigMap), (e: unknown) => fields(e).includes(field));
      };
      await rejects(
        { ...plain, metadata: { name: 'a', namespace: ns, labels: { app: 'has space' } } },
        'metadata.labels',
      );
      await rejects(
        { ...plain, metadata: { name: 'a', namespace: ns, labels: { 'bad key': 'v' } } },
        'metadata.labels',
      );
      await rejects(
        { ...plain, metadata: { name: 'a', namespace: ns, annotations: { 'bad key': 'v' } } },
        'metadata.annotations',
      );
      await rejects(
        { ...plain, metadata: { name: 'a', namespace: ns, finalizers: ['bad finalizer/x y'] } },
        'metadata.finalizers',
      );
      // Built-in kinds need domain-qualified finalizer names; custom resources only warn (see the Widget below).
      if (coreKinds)
        await rejects(
          { ...plain, metadata: { name: 'a', namespace: ns, finalizers: ['unqualified'] } },
          'metadata.finalizers[0]',
        );
      const owner = (name: string, uid: string, controller?: boolean) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name,
        uid,
        ...omitUndefined({ controller: controller || undefined }),
      });
      await rejects(
        {
          ...plain,
          metadata: {
            name: 'a',
            namespace: ns,
            ownerReferences: [
              owner('o1', '6e3c8a70-0000-4000-8000-000000000001', true),
              owner('o2', '6e3c8a70-0000-4000-8000-000000000002', true),
            ],
          },
        },
        'metadata.ownerReferences',
      );
      await rejects(
        { ...plain, metadata: { name: 'a', namespace: ns, ownerReferences: [owner('o1', '')] } },
        'metadata.ownerReferences.uid',
      );
      await rejects({ ...plain, metadata: { name: 'a'.repeat(254), namespace: ns } }, 'metadata.name');
      // Custom resources only need qualified finalizer names; the same owner twice is stored once.
      const w = await client.create<Widget>(widget(ns, 'w', { size: 1 }, { finalizers: ['unqualified'] }));
      assert.deepEqual(w.metadata?.finalizers, ['unqualified']);
      const twice = owner('o1', '6e3c8a70-0000-4000-8000-000000000001');
      const deduped = await client.create<ConfigMap & { metadata?: { ownerReferences?: unknown[] } }>({
        ...plain,
        metadata: { name: 'owned', namespace: ns, ownerReferences: [twice, twice] },
      } as unknown as ConfigMap);
      assert.deepEqual(deduped.metadata?.ownerReferences, [twice]);
      const cm = await client.get<ConfigMap>(plain, 'owned', { namespace: ns });
      await assert.rejects(
        client.update<ConfigMap>({ ...cm, metadata: { ...cm.metadata, labels: { app: 'has space' } } }),
        (e: unknown) => fields(e).includes('metadata.labels'),
      );
    });

    test('deleting an object with finalizers only marks it; no finalizer may be added then; removing the last one deletes it', async () => {
      const ns = await namespace();
      const created = await client.create<Widget>(
        widget(ns, 'f', { size: 1 }, { finalizers: ['example.com/a', 'example.com/b'] }),
      );
      const marked = (await client.delete<Widget>(WIDGET, 'f', { namespace: ns })) as Widget;
      assert.equal(marked.kind, 'Widget', 'the answer is the object, not a Status');
      assert.match(marked.metadata?.deletionTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(marked.metadata?.generation, 2, 'marking for deletion bumps generation');
      assert.deepEqual(marked.metadata?.finalizers, ['example.com/a', 'example.com/b']);
      const still = await client.get<Widget>(WIDGET, 'f', { namespace: ns });
      assert.equal(still.metadata?.deletionTimestamp, marked.metadata?.deletionTimestamp);
      const again = (await client.delete<Widget>(WIDGET, 'f', { namespace: ns })) as Widget;
      assert.equal(again.metadata?.resourceVersion, marked.metadata?.resourceVersion, 'a second delete writes nothing');
      await assert.rejects(
        client.update<Widget>({
          ...still,
          metadata: { ...still.metadata, finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] },
        }),
        (e: unknown) => {
          assert.ok(e instanceof ApiError && isInvalid(e));
          assert.ok(e.details?.causes?.every((c) => c.field === 'metadata.finalizers'));
          return true;
        },
      );
      const cleared = await client.update<Widget>({
        ...still,
        metadata: { ...still.metadata, deletionTimestamp: undefined, finalizers: ['example.com/b'] },
      });
      assert.equal(
        cleared.metadata?.deletionTimestamp,
        marked.metadata?.deletionTimestamp,
        'an update cannot clear deletionTimestamp',
      );
      const last = await client.patch<Widget>(
        WIDGET,
        'f',
        [
          { op: 'test', path: '/metadata/finalizers', value: ['example.com/b'] },
          { op: 'remove', path: '/metadata/finalizers' },
        ],
        { type: 'json', namespace: ns },
      );
      assert.equal(last.metadata?.finalizers, undefined);
      await assert.rejects(client.get(WIDGET, 'f', { namespace: ns }), isNotFound);
      const events = await readWatch(
        client.watch<Widget>(WIDGET, {
          namespace: ns,
          resourceVersion: created.metadata?.resourceVersion,
          signal: AbortSignal.timeout(WAIT_MS),
        }),
        (seen) => seen.some((e) => e.type === 'DELETED'),
      );
      assert.deepEqual(
        events.map((e) => [
          e.type,
          e.object.metadata?.finalizers?.join('+') ?? '',
          e.object.metadata?.deletionTimestamp !== undefined,
        ]),
        [
          ['MODIFIED', 'example.com/a+example.com/b', true],
          ['MODIFIED', 'example.com/b', true],
          ['DELETED', 'example.com/b', true],
        ],
      );
      assert.equal(events[1]!.object.metadata?.resourceVersion, cleared.metadata?.resourceVersion);
      assert.notEqual(
        events[2]!.object.metadata?.resourceVersion,
        cleared.metadata?.resourceVersion,
        'DELETED carries the delete’s own resourceVersion',
      );
    });

    coreTest('a ConfigMap with a finalizer is marked for deletion without gaining a generation', async () => {
      const ns = await namespace();
      await client.create<ConfigMap>({ ...CM, metadata: { name: 'f', namespace: ns, finalizers: ['example.com/x'] } });
      const marked = (await client.delete<ConfigMap>(CM, 'f', { namespace: ns })) as ConfigMap;
      assert.ok(marked.metadata?.deletionTimestamp);
      assert.equal(marked.metadata?.generation, undefined);
      const done = await client.update<ConfigMap>({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
      assert.ok(done.metadata?.deletionTimestamp);
      await assert.rejects(client.get(CM, 'f', { namespace: ns }), isNotFound);
    });

    test('delete preconditions: a wrong uid or resourceVersion is a 409 and deletes nothing', async () => {
      const ns = await namespace();
      const first = await client.create<ConfigMap>({
        ...plain,
        metadata: { name: 'c', namespace: ns },
        data: { v: '1' },
      });
      const second = await client.update<ConfigMap>({ ...first, data: { v: '2' } });
      await assert.rejects(
        client.delete(plain, 'c', { namespace: ns, preconditions: { uid: 'not-the-uid' } }),
        (e: unknown) => {
          assert.ok(e instanceof ApiError && isConflict(e));
          assert.deepEqual(e.details, {
            name: 'c',
            ...(coreKinds ? { kind: 'ConfigMap' } : { group: 'example.com', kind: 'Note' }),
          });
          return true;
        },
      );
      await assert.rejects(
        client.delete(plain, 'c', {
          namespace: ns,
          preconditions: { resourceVersion: first.metadata!.resourceVersion! },
        }),
        isConflict,
      );
      assert.ok(await client.get(plain, 'c', { namespace: ns }));
      await client.delete(plain, 'c', {
        namespace: ns,
        preconditions: { uid: second.metadata!.uid!, resourceVersion: second.metadata!.resourceVersion! },
      });
      await assert.rejects(client.get(plain, 'c', { namespace: ns }), isNotFound);
    });

    test('a JSON patch applies all its operations or none: a failing test op is a 422 and changes nothing', async () => {
      const ns = await namespace();
      const w = await client.create<Widget>(widget(ns, 'w', { size: 1 }));
      const ok = await client.patch<Widget>(
        WIDGET,
        'w',
        [
          { op: 'test', path: '/metadata/resourceVersion', value: w.metadata!.resourceVersion },
          { op: 'replace', path: '/spec/size', value: 2 },
          { op: 'add', path: '/spec/color', value: 'blue' },
        ],
        { type: 'json', namespace: ns },
      );
      assert.deepEqual(ok.spec, { size: 2, color: 'blue' });
      await assert.rejects(
        client.patch(
          WIDGET,
          'w',
          [
            { op: 'replace', path: '/spec/size', value: 3 },
            { op: 'test', path: '/metadata/resourceVersion', value: w.metadata!.resourceVersion },
          ],
          { type: 'json', namespace: ns },
        ),
        apiStatus(422, 'Invalid'),
      );
      await assert.rejects(
        client.patch(WIDGET, 'w', [{ op: 'replace', path: '/spec/missing/deeper', value: 1 }], {
          type: 'json',
          namespace: ns,
        }),
        apiStatus(422, 'Invalid'),
      );
      await assert.rejects(
        client.patch(WIDGET, 'w', { op: 'replace' }, { type: 'json', namespace: ns }),
        apiStatus(400, 'BadRequest'),
      );
      const after = await client.get<Widget>(WIDGET, 'w', { namespace: ns });
      assert.equal(after.metadata?.resourceVersion, ok.metadata?.resourceVersion);
      assert.deepEqual(after.spec, { size: 2, color: 'blue' });
    });

    coreTest(
      'a merge patch sets fields, removes those set to null and keeps the rest; strategic merge is refused for custom resources',
      async () => {
        const ns = await namespace();
        await client.create<ConfigMap>({
          ...CM,
          metadata: { name: 'c', namespace: ns, labels: { keep: 'me' } },
          data: { a: '1', c: '3' },
        });
        const p = await client.patch<ConfigMap>(
          CM,
          'c',
          { metadata: { labels: { added: 'yes' } }, data: { a: null, b: '2' } },
          { type: 'merge', namespace: ns },
        );
        assert.deepEqual(p.data, { b: '2', c: '3' });
        assert.deepEqual(p.metadata?.labels, { keep: 'me', added: 'yes' });
        const s = await client.patch<ConfigMap>(CM, 'c', { data: { d: '4' } }, { type: 'strategic', namespace: ns });
        assert.deepEqual(s.data, { b: '2', c: '3', d: '4' });
        await client.create<Widget>(widget(ns, 'w'));
        await assert.rejects(
          client.patch(WIDGET, 'w', { spec: { size: 2 } }, { type: 'strategic', namespace: ns }),
          apiStatus(415),
        );
      },
    );

    coreTest(
      'a strategic merge patch merges a Deployment’s containers by name and deletes one with $patch: delete',
      async () => {
        const ns = await namespace();
        const DEPLOY = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;
        interface Deployment {
          metadata?: Meta & { annotations?: Record<string, string> };
          spec?: { template?: { spec?: { containers?: { name: string; image?: string }[] } } };
        }
        const created = await client.create<Deployment & { apiVersion: string; kind: string }>({
          ...DEPLOY,
          metadata: { name: 'web', namespace: ns },
          spec: {
            selector: { matchLabels: { app: 'web' } },
            template: {
              metadata: { labels: { app: 'web' } },
              spec: {
                containers: [
                  { name: 'app', image: 'app:1' },
                  { name: 'side', image: 'side:1' },
                  { name: 'extra', image: 'extra:1' },
                ],
              },
            },
          },
        } as Deployment & { apiVersion: string; kind: string });
        assert.equal(created.metadata?.generation, 1);
        const patched = await client.patch<Deployment>(
          DEPLOY,
          'web',
          {
            spec: {
              template: {
                spec: {
                  containers: [
                    { name: 'app', image: 'app:2' },
                    { name: 'extra', $patch: 'delete' },
                  ],
                },
              },
            },
          },
          { type: 'strategic', namespace: ns },
        );
        assert.deepEqual(
          patched.spec?.template?.spec?.containers?.map((c) => [c.name, c.image]),
          [
            ['app', 'app:2'],
            ['side', 'side:1'],
          ],
        );
        assert.equal(patched.metadata?.generation, 2);
        const annotated = await client.patch<Deployment>(
          DEPLOY,
          'web',
          { metadata: { annotations: { note: 'x' } } },
          { type: 'merge', namespace: ns },
        );
        assert.equal(annotated.metadata?.generation, 3, 'a Deployment’s annotations count as spec');
      },
    );

    test('label selectors (equality and set-based) and field selectors filter a list; a malformed one is a 400', async () => {
      const ns = await namespace();
      const labels: Record<string, Record<string, string>> = {
        a: { app: 'web', tier: 'fe' },
        b: { app: 'web', tier: 'be' },
        c: { app: 'db' },
        d: {},
      };
      for (const [name, l] of Object.entries(labels))
        await client.create<ConfigMap>({ ...plain, metadata: { name, namespace: ns, labels: l } });
      const names = async (opts: { labelSelector?: string; fieldSelector?: string }) =>
        (await client.list<ConfigMap>(plain, { namespace: ns, ...opts })).items.map((i) => i.metadata?.name);
      assert.deepEqual(await names({ labelSelector: 'app=web' }), ['a', 'b']);
      assert.deepEqual(await names({ labelSelector: 'app==web,tier=be' }), ['b']);
      assert.deepEqual(await names({ labelSelector: 'app!=web' }), ['c', 'd']);
      assert.deepEqual(await names({ labelSelector: 'tier in (fe, be)' }), ['a', 'b']);
      assert.deepEqual(await names({ labelSelector: 'tier notin (fe)' }), ['b', 'c', 'd']);
      assert.deepEqual(await names({ labelSelector: 'tier' }), ['a', 'b']);
      assert.deepEqual(await names({ labelSelector: '!tier' }), ['c', 'd']);
      assert.deepEqual(await names({ fieldSelector: 'metadata.name=c' }), ['c']);
      assert.deepEqual(
        await names({ fieldSelector: `metadata.namespace=${ns},metadata.name!=c`, labelSelector: 'app' }),
        ['a', 'b'],
      );
      await assert.rejects(names({ labelSelector: 'app in (' }), apiStatus(400, 'BadRequest'));
      await assert.rejects(
        client.list(WIDGET, { namespace: ns, fieldSelector: 'spec.size=1' }),
        apiStatus(400, 'BadRequest'),
      );
    });

    test('lists are scoped to their namespace; a list across namespaces sees all, in namespace/name order', async () => {
      const ns1 = await namespace();
      const ns2 = await namespace();
      const tag = `t${randomBytes(3).toString('hex')}`;
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'z', namespace: ns1, labels: { tag } } });
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns2, labels: { tag } } });
      assert.deepEqual(
        (await client.list<ConfigMap>(plain, { namespace: ns2, labelSelector: 'tag' })).items.map(
          (i) => i.metadata?.name,
        ),
        ['a'],
      );
      const all = await client.list<ConfigMap>(plain, { labelSelector: `tag=${tag}` });
      assert.deepEqual(
        all.items.map((i) => `${i.metadata?.namespace}/${i.metadata?.name}`),
        [`${ns1}/z`, `${ns2}/a`],
      );
    });

    test('paging with limit/continue serves one consistent snapshot, once each, in name order', async () => {
      const ns = await namespace();
      for (let i = 0; i < 7; i++)
        await client.create<ConfigMap>({ ...plain, metadata: { name: `p${i}`, namespace: ns } });
      const first = await client.listPage<ConfigMap>(plain, { namespace: ns, limit: 3 });
      assert.deepEqual(
        first.items.map((i) => i.metadata?.name),
        ['p0', 'p1', 'p2'],
      );
      assert.ok(first.continue);
      assert.equal(first.remainingItemCount, 4);
      // Changes after the first page must not show up in later pages of the same list.
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'p9', namespace: ns } });
      await client.delete(plain, 'p5', { namespace: ns });
      const second = await client.listPage<ConfigMap>(plain, { namespace: ns, limit: 3, continue: first.continue });
      assert.deepEqual(
        second.items.map((i) => i.metadata?.name),
        ['p3', 'p4', 'p5'],
      );
      assert.equal(second.resourceVersion, first.resourceVersion);
      const third = await client.listPage<ConfigMap>(plain, { namespace: ns, limit: 3, continue: second.continue });
      assert.deepEqual(
        third.items.map((i) => i.metadata?.name),
        ['p6'],
      );
      assert.equal(third.continue, undefined);
      const all = await client.list<ConfigMap>(plain, { namespace: ns, limit: 2 });
      assert.deepEqual(
        all.items.map((i) => i.metadata?.name),
        ['p0', 'p1', 'p2', 'p3', 'p4', 'p6', 'p9'],
      );
      await assert.rejects(
        client.listPage(plain, { namespace: ns, limit: 2, continue: 'garbage' }),
        apiStatus(400, 'BadRequest'),
      );
    });

    test('a watch from a resourceVersion delivers exactly the later changes, in order, with their resourceVersions', async () => {
      const ns = await namespace();
      const a = await client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns }, data: { v: '1' } });
      const a2 = await client.update<ConfigMap>({ ...a, data: { v: '2' } });
      const b = await client.create<ConfigMap>({ ...plain, metadata: { name: 'b', namespace: ns } });
      await client.delete(plain, 'a', { namespace: ns });
      const end = await client.create<ConfigMap>({ ...plain, metadata: { name: 'end', namespace: ns } });
      const events = await readWatch(
        client.watch<ConfigMap>(plain, {
          namespace: ns,
          resourceVersion: a.metadata?.resourceVersion,
          signal: AbortSignal.timeout(WAIT_MS),
        }),
        (seen) => seen.some((e) => e.object.metadata?.name === 'end'),
      );
      assert.deepEqual(summary(events), ['MODIFIED a', 'ADDED b', 'DELETED a', 'ADDED end']);
      assert.deepEqual(
        events.filter((e) => e.type !== 'DELETED').map((e) => e.object.metadata?.resourceVersion),
        [a2.metadata?.resourceVersion, b.metadata?.resourceVersion, end.metadata?.resourceVersion],
      );
      assert.equal(events[2]!.object.data?.v, '2', 'DELETED carries the last stored state…');
      assert.ok(
        events[2]!.object.metadata?.resourceVersion &&
          events[2]!.object.metadata.resourceVersion !== a2.metadata?.resourceVersion,
        '…with the delete’s resourceVersion',
      );
      assert.equal(events[1]!.object.apiVersion, plain.apiVersion);
      assert.equal(events[1]!.object.kind, plain.kind);
    });

    test('a watch with a label selector sees an object leave (DELETED) and re-enter (ADDED) the selection', async () => {
      const ns = await namespace();
      const o = await client.create<ConfigMap>({
        ...plain,
        metadata: { name: 'o', namespace: ns, labels: { app: 'x' } },
      });
      const out = await client.update<ConfigMap>({ ...o, metadata: { ...o.metadata, labels: { app: 'y' } } });
      const back = await client.update<ConfigMap>({ ...out, metadata: { ...out.metadata, labels: { app: 'x' } } });
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'other', namespace: ns, labels: { app: 'y' } } });
      await client.delete(plain, 'o', { namespace: ns });
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'end', namespace: ns, labels: { app: 'x' } } });
      const events = await readWatch(
        client.watch<ConfigMap>(plain, {
          namespace: ns,
          labelSelector: 'app=x',
          resourceVersion: o.metadata?.resourceVersion,
          signal: AbortSignal.timeout(WAIT_MS),
        }),
        (seen) => seen.some((e) => e.object.metadata?.name === 'end'),
      );
      assert.deepEqual(summary(events), ['DELETED o', 'ADDED o', 'DELETED o', 'ADDED end']);
      assert.deepEqual(
        events[0]!.object.metadata?.labels,
        { app: 'x' },
        'leaving the selection shows the object as it was',
      );
      assert.equal(events[0]!.object.metadata?.resourceVersion, out.metadata?.resourceVersion);
      assert.equal(events[1]!.object.metadata?.resourceVersion, back.metadata?.resourceVersion);
    });

    test('a watch from resourceVersion "0" starts with ADDED for every existing object, then live changes', async () => {
      const ns = await namespace();
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns } });
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'b', namespace: ns } });
      const seen: string[] = [];
      for await (const e of client.watch<ConfigMap>(plain, {
        namespace: ns,
        resourceVersion: '0',
        signal: AbortSignal.timeout(WAIT_MS),
      })) {
        seen.push(`${e.type} ${e.object.metadata?.name}`);
        if (seen.length === 2) await client.create<ConfigMap>({ ...plain, metadata: { name: 'c', namespace: ns } });
        if (seen.length === 3) break;
      }
      // The initial ADDED events come from the watch cache in no promised order; the live one comes after them.
      assert.deepEqual([...seen.slice(0, 2).sort(), seen[2]], ['ADDED a', 'ADDED b', 'ADDED c']);
    });

    test('server-side apply creates, conflicts on a field another manager owns, and takes it with force', async () => {
      const ns = await namespace();
      const created = await client.apply<Widget>(widget(ns, 'ap', { size: 2, color: 'red' }), { fieldManager: 'm1' });
      assert.deepEqual(created.spec, { size: 2, color: 'red' });
      assert.ok(created.metadata?.managedFields?.some((f) => f.manager === 'm1' && f.operation === 'Apply'));
      const again = await client.apply<Widget>(widget(ns, 'ap', { size: 2, color: 'red' }), { fieldManager: 'm1' });
      assert.equal(
        again.metadata?.resourceVersion,
        created.metadata?.resourceVersion,
        're-applying the same configuration writes nothing',
      );
      await assert.rejects(client.apply(widget(ns, 'ap', { size: 3 }), { fieldManager: 'm2' }), (e: unknown) => {
        assert.ok(e instanceof ApiError && isConflict(e));
        assert.deepEqual(
          e.details?.causes?.map((c) => [c.reason, c.field]),
          [['FieldManagerConflict', '.spec.size']],
        );
        return true;
      });
      const shared = await client.apply<Widget>(widget(ns, 'ap', { size: 2 }), { fieldManager: 'm2' });
      assert.deepEqual(
        shared.spec,
        { size: 2, color: 'red' },
        'applying an equal value to an owned field is no conflict',
      );
      assert.ok(
        shared.metadata?.managedFields?.some((f) => f.manager === 'm2' && f.operation === 'Apply'),
        'both managers now own spec.size',
      );
      const dropped = await client.apply<Widget>(widget(ns, 'ap', { size: 2 }), { fieldManager: 'm1' });
      assert.deepEqual(dropped.spec, { size: 2 }, 'a field m1 stopped applying and nobody else owns is removed');
      const forced = await client.apply<Widget>(widget(ns, 'ap', { size: 4 }), { fieldManager: 'm2', force: true });
      assert.equal(forced.spec?.size, 4);
      // An update takes ownership of what it changes, so a later apply of another value conflicts with it.
      await client.update<Widget>({ ...forced, spec: { size: 5 } }, { fieldManager: 'editor' });
      await assert.rejects(client.apply(widget(ns, 'ap', { size: 6 }), { fieldManager: 'm2' }), (e: unknown) => {
        assert.ok(e instanceof ApiError && isConflict(e));
        assert.ok(e.message.includes('"editor"'), e.message);
        return true;
      });
      const status = await client.applyStatus<Widget>(
        { ...WIDGET, metadata: { name: 'ap', namespace: ns }, status: { message: 'applied' } },
        { fieldManager: 'm1', force: true },
      );
      assert.deepEqual([status.status?.message, status.spec?.size], ['applied', 5]);
    });

    test('dry-run writes validate and answer without storing anything', async () => {
      const ns = await namespace();
      const dry = await client.create<ConfigMap>(
        { ...plain, metadata: { name: 'dry', namespace: ns } },
        { dryRun: true },
      );
      assert.equal(dry.metadata?.name, 'dry');
      await assert.rejects(client.get(plain, 'dry', { namespace: ns }), isNotFound);
      await assert.rejects(client.create(widget(ns, 'dry', { size: 0 }), { dryRun: true }), isInvalid);
      const real = await client.create<ConfigMap>({
        ...plain,
        metadata: { name: 'real', namespace: ns },
        data: { k: '1' },
      });
      const dryUpdate = await client.update<ConfigMap>({ ...real, data: { k: '2' } }, { dryRun: true });
      assert.equal(dryUpdate.data?.k, '2');
      const dryPatch = await client.patch<ConfigMap>(
        plain,
        'real',
        { data: { k: '3' } },
        { type: 'merge', namespace: ns, dryRun: true },
      );
      assert.equal(dryPatch.data?.k, '3');
      await client.delete(plain, 'real', { namespace: ns, dryRun: true });
      const stored = await client.get<ConfigMap>(plain, 'real', { namespace: ns });
      assert.deepEqual([stored.data?.k, stored.metadata?.resourceVersion], ['1', real.metadata?.resourceVersion]);
    });

    coreTest('creating in a namespace that does not exist is a 404 naming the namespace', async () => {
      await assert.rejects(
        client.create<ConfigMap>({ ...CM, metadata: { name: 'a', namespace: `missing-${run}` } }),
        (e: unknown) => {
          assert.ok(e instanceof ApiError && isNotFound(e));
          assert.deepEqual(e.details, { name: `missing-${run}`, kind: 'namespaces' });
          return true;
        },
      );
    });

    if ((options.continueAfterCompaction ?? 'expired') === 'snapshot') {
      test(`${options.server ?? 'this server'}: after a compaction a continue token from before it still pages the same snapshot (served from the watch cache)`, async (t) => {
        if (!target?.compact) {
          t.skip('the target cannot compact');
          return;
        }
        const ns = await namespace();
        for (let i = 0; i < 5; i++)
          await client.create<ConfigMap>({ ...plain, metadata: { name: `p${i}`, namespace: ns } });
        const first = await client.listPage<ConfigMap>(plain, { namespace: ns, limit: 2 });
        await client.create<ConfigMap>({ ...plain, metadata: { name: 'p9', namespace: ns } });
        await target.compact();
        const names = first.items.map((i) => i.metadata!.name!);
        let token = first.continue;
        while (token) {
          const page = await client.listPage<ConfigMap>(plain, { namespace: ns, limit: 2, continue: token });
          names.push(...page.items.map((i) => i.metadata!.name!));
          token = page.continue;
        }
        assert.deepEqual(names, ['p0', 'p1', 'p2', 'p3', 'p4'], 'the snapshot of the first page, without the later p9');
      });
    } else {
      test('after a compaction a continue token from before it is 410 Expired, and a paged list starts over cleanly', async (t) => {
        if (!target?.compact) {
          t.skip('the target cannot compact');
          return;
        }
        const ns = await namespace();
        for (let i = 0; i < 5; i++)
          await client.create<ConfigMap>({ ...plain, metadata: { name: `p${i}`, namespace: ns } });
        const pages: { restarted: boolean; names: string[] }[] = [];
        for await (const page of client.listPages<ConfigMap>(plain, { namespace: ns, limit: 2 })) {
          pages.push({ restarted: page.restarted, names: page.items.map((i) => i.metadata!.name!) });
          if (pages.length === 1) {
            await client.create<ConfigMap>({ ...plain, metadata: { name: 'p9', namespace: ns } });
            await target.compact();
            await assert.rejects(
              client.listPage(plain, { namespace: ns, limit: 2, continue: page.continue }),
              (e: unknown) => {
                assert.ok(e instanceof ApiError && e.status === 410 && e.reason === 'Expired', String(e));
                return true;
              },
            );
          }
        }
        assert.equal(pages[1]?.restarted, true);
        assert.deepEqual(
          pages.slice(1).flatMap((p) => p.names),
          ['p0', 'p1', 'p2', 'p3', 'p4', 'p9'],
        );
      });
    }

    test('an exact list at an older resourceVersion shows the objects as they were then', async () => {
      const ns = await namespace();
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns }, data: { v: '1' } });
      const before = await client.listPage<ConfigMap>(plain, { namespace: ns });
      const a = await client.get<ConfigMap>(plain, 'a', { namespace: ns });
      await client.update<ConfigMap>({ ...a, data: { v: '2' } });
      await client.create<ConfigMap>({ ...plain, metadata: { name: 'b', namespace: ns } });
      const exact = await client.listPage<ConfigMap>(plain, {
        namespace: ns,
        resourceVersion: before.resourceVersion,
        resourceVersionMatch: 'Exact',
      });
      assert.deepEqual(
        exact.items.map((i) => [i.metadata?.name, i.data?.v]),
        [['a', '1']],
      );
      assert.equal(exact.resourceVersion, before.resourceVersion);
      const now = await client.listPage<ConfigMap>(plain, { namespace: ns });
      assert.deepEqual(
        now.items.map((i) => [i.metadata?.name, i.data?.v]),
        [
          ['a', '2'],
          ['b', undefined],
        ],
      );
    });

    test('a list at resourceVersion "0" is served whole, ignoring the limit', async () => {
      const ns = await namespace();
      for (let i = 0; i < 3; i++)
        await client.create<ConfigMap>({ ...plain, metadata: { name: `c${i}`, namespace: ns } });
      const last = await client.create<ConfigMap>({ ...plain, metadata: { name: 'c3', namespace: ns } });
      // The watch cache may lag the write a moment; "0" promises any version, so wait for ours.
      const deadline = Date.now() + WAIT_MS;
      let page = await client.listPage<ConfigMap>(plain, { namespace: ns, resourceVersion: '0', limit: 2 });
      while (
        !page.items.some((i) => i.metadata?.resourceVersion === last.metadata?.resourceVersion) &&
        Date.now() < deadline
      ) {
        page = await client.listPage<ConfigMap>(plain, { namespace: ns, resourceVersion: '0', limit: 2 });
      }
      // Served from the watch cache, in no promised order.
      assert.deepEqual(page.items.map((i) => i.metadata?.name).sort(), ['c0', 'c1', 'c2', 'c3']);
      assert.equal(page.continue, undefined);
    });

    test('the server owns uid, creationTimestamp and deletionTimestamp: a mismatched uid is a 409 on update and a 422 in a patch, a new deletionTimestamp a 422', async () => {
      const ns = await namespace();
      const cm = await client.create<ConfigMap>({ ...plain, metadata: { name: 'a', namespace: ns } });
      await assert.rejects(
        client.update<ConfigMap>({ ...cm, metadata: { ...cm.metadata, uid: '00000000-0000-0000-0000-000000000000' } }),
        isConflict,
      );
      await assert.rejects(
        client.patch(
          plain,
          'a',
          { metadata: { uid: '00000000-0000-0000-0000-000000000000' } },
          { type: 'merge', namespace: ns },
        ),
        (e: unknown) => {
          assert.ok(
            e instanceof ApiError && isInvalid(e),
            'in a patch, a uid is an immutable field, not a precondition',
          );
          assert.ok(e.details?.causes?.some((c) => c.field === 'metadata.uid'));
          return true;
        },
      );
      await assert.rejects(
        client.update<ConfigMap>({ ...cm, metadata: { ...cm.metadata, deletionTimestamp: '2020-01-01T00:00:00Z' } }),
        (e: unknown) => {
          assert.ok(e instanceof ApiError && isInvalid(e));
          assert.ok(e.details?.causes?.some((c) => c.field === 'metadata.deletionTimestamp'));
          return true;
        },
      );
      const kept = await client.update<ConfigMap>({
        ...cm,
        metadata: { ...cm.metadata, creationTimestamp: '2020-01-01T00:00:00Z' },
        data: { x: '1' },
      });
      assert.equal(kept.metadata?.creationTimestamp, cm.metadata?.creationTimestamp);
      await assert.rejects(
        client.create<ConfigMap>({ ...plain, metadata: { name: 'b', namespace: ns, resourceVersion: '5' } }),
        apiStatus(500, 'InternalError'),
      );
    });

    coreTest('a deleted namespace is terminating: it stays, and nothing new may be created in it', async () => {
      const ns = await namespace();
      const marked = (await client.delete<{ metadata?: Meta; status?: { phase?: string } }>(NS, ns)) as {
        metadata?: Meta;
        status?: { phase?: string };
      };
      assert.ok(marked.metadata?.deletionTimestamp);
      assert.equal(marked.status?.phase, 'Terminating');
      await assert.rejects(
        client.create<ConfigMap>({ ...CM, metadata: { name: 'late', namespace: ns } }),
        apiStatus(403, 'Forbidden'),
      );
    });

    test(
      'shardSelector: list, paged list and watch (adds and deletes) return exactly the objects whose uid hash (FNV-1a 64) is in the range, ANDed with a label selector; a malformed selector is a 500',
      options.shardedListAndWatch
        ? {}
        : {
            skip: `${options.server ?? 'this server'} ignores shardSelector (needs Kubernetes 1.36 with the ShardedListAndWatch feature gate)`,
          },
      async () => {
        const ns = await namespace();
        const from = (await client.listPage<ConfigMap>(plain, { namespace: ns })).resourceVersion;
        const [lower, upper] = splitHashSpace(2) as [HashRange, HashRange];
        const created: ConfigMap[] = [];
        // At least 12, and the last one in the lower half, so the watch below knows when it has seen everything.
        for (let i = 0; created.length < 12 || !objectInRange(created[created.length - 1]!, lower); i++) {
          created.push(
            await client.create<ConfigMap>({
              ...plain,
              metadata: { name: `s${i}`, namespace: ns, labels: { tier: i % 2 ? 'odd' : 'even' } },
            }),
          );
        }
        const names = (objects: readonly ConfigMap[]): string[] => objects.map((o) => o.metadata!.name!).sort();
        const inLower = names(created.filter((o) => objectInRange(o, lower)));
        const inUpper = names(created.filter((o) => objectInRange(o, upper)));
        assert.ok(inLower.length > 0 && inUpper.length > 0);
        assert.deepEqual(
          names(
            (await client.list<ConfigMap>(plain, { namespace: ns, shardSelector: formatShardSelector(lower) })).items,
          ),
          inLower,
        );
        assert.deepEqual(
          names(
            (
              await client.list<ConfigMap>(plain, {
                namespace: ns,
                shardSelector: formatShardSelector(upper),
                limit: 2,
              })
            ).items,
          ),
          inUpper,
          'every page is filtered',
        );
        assert.deepEqual(
          names(
            (
              await client.list<ConfigMap>(plain, {
                namespace: ns,
                shardSelector: formatShardSelector(upper),
                labelSelector: 'tier=even',
              })
            ).items,
          ),
          names(created.filter((o) => objectInRange(o, upper) && o.metadata?.labels?.tier === 'even')),
        );
        // Deleted in creation order, so the last deletion (of the last object) is in the lower half too.
        for (const o of created) await client.delete(plain, o.metadata!.name!, { namespace: ns });
        const last = created[created.length - 1]!.metadata!.name!;
        const events = await readWatch(
          client.watch<ConfigMap>(plain, {
            namespace: ns,
            resourceVersion: from,
            shardSelector: formatShardSelector(lower),
          }),
          (seen) => seen.some((e) => e.type === 'DELETED' && e.object.metadata?.name === last),
        );
        const lowerInOrder = created.filter((o) => objectInRange(o, lower)).map((o) => o.metadata!.name!);
        assert.deepEqual(
          summary(events),
          [...lowerInOrder.map((n) => `ADDED ${n}`), ...lowerInOrder.map((n) => `DELETED ${n}`)],
          'in order, and nothing from the upper half',
        );
        await assert.rejects(
          client.listPage(plain, {
            namespace: ns,
            shardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
          }),
          (e: unknown) => {
            assert.ok(apiStatus(500, 'InternalError')(e), String(e));
            assert.match(String(e), /invalid shard selector: .*16/);
            return true;
          },
        );
      },
    );

    test('client-side refusals are the same: a namespaced kind needs a namespace, an unknown kind is a NoKindMatch', async () => {
      await assert.rejects(client.get(plain, 'a'), InvalidOptionError);
      await assert.rejects(client.create({ ...plain, metadata: { name: 'a' } }), InvalidOptionError);
      await assert.rejects(client.delete(WIDGET, 'a'), InvalidOptionError);
      await assert.rejects(
        client.get({ apiVersion: 'example.com/v1', kind: 'Gadget' }, 'a', { namespace: 'default' }),
        isNoKindMatch,
      );
      await assert.rejects(client.patch(plain, 'a', {}, { type: 'apply', namespace: 'default' }), InvalidOptionError);
    });
  });
}
