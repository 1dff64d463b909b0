/**
 * Fuzz (issue 18): list answers of any shape. Whatever JSON a server sends for a list page (items
 * that are not objects, metadata of the wrong type, no list at all), `listPage` either returns a
 * page (an items array, a string resourceVersion, a string continue token if any) or throws one of
 * the library's errors, never a TypeError; and `listAll` over random pages and expired continue
 * tokens keeps exactly the items of the pages after the last restart.
 * Seeded (`FUZZ_SEED=<n>` replays a run) and bounded in time (`FUZZ_TIME_MS`, per property).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkProperty, fuzzTimeMs } from '../core/testing/fuzz.js';
import { OperatorRuntimeError } from '../core/errors.js';
import { ApiError } from './api-error.js';
import { StaticTokenCredential } from './credentials.js';
import { FakeApiServer, sendJson } from './testing/fake-api-server.js';
import { KubeClient, type ListPage, type ListPageOptions } from './kube-client.js';
import { listAll, listPages } from './paged-list.js';
import { makeTlsConfig } from './tls-config.js';

const TIME_MS = fuzzTimeMs(2000);
const RUN_TIMEOUT_MS = 5000;

const check = (name: string, property: fc.IRawProperty<unknown[]>): Promise<void> =>
  checkProperty(name, property, { timeMs: TIME_MS, runTimeoutMs: RUN_TIMEOUT_MS, file: import.meta.filename });

let server: FakeApiServer;
before(async () => {
  server = await FakeApiServer.start();
});
after(async () => {
  await server.close();
});

const DISCOVERY = {
  kind: 'APIResourceList',
  groupVersion: 'v1',
  resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['list'] }],
};
const item = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      metadata: fc.record({ name: fc.string({ maxLength: 5 }), namespace: fc.string({ maxLength: 3 }) }),
      data: fc.dictionary(fc.string(), fc.string(), { maxKeys: 2, noNullPrototype: true }),
    }),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
  {
    weight: 1,
    arbitrary: fc.record(
      { apiVersion: fc.anything(), kind: fc.anything(), metadata: fc.anything() },
      { requiredKeys: [] },
    ),
  },
);
const listBody = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record(
      {
        kind: fc.constant('ConfigMapList'),
        metadata: fc.oneof(
          fc.record(
            {
              resourceVersion: fc.oneof(fc.string(), fc.anything()),
              continue: fc.oneof(fc.string(), fc.anything()),
              remainingItemCount: fc.anything(),
            },
            { requiredKeys: [] },
          ),
          fc.anything(),
        ),
        items: fc.oneof(fc.array(item, { maxLength: 8 }), fc.anything()),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);

test('listPage on any JSON answer returns a well-typed page or throws a library error', async () => {
  const client = new KubeClient(
    {
      server: server.url,
      tls: makeTlsConfig({ rejectUnauthorized: true }),
      credential: new StaticTokenCredential('t'),
      namespace: 'd',
    },
    { backoff: { maxAttempts: 1 } },
  );
  try {
    await check(
      'list answers',
      fc.asyncProperty(listBody, fc.boolean(), async (body, metadataOnly) => {
        server.handle((req, res) => sendJson(res, 200, req.url === '/api/v1' ? DISCOVERY : body));
        let page: ListPage<unknown>;
        try {
          page = await client.listPage({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: 'd', metadataOnly });
        } catch (err) {
          assert.ok(err instanceof OperatorRuntimeError, `threw ${String(err)}`);
          return;
        }
        assert.ok(Array.isArray(page.items));
        assert.equal(typeof page.resourceVersion, 'string');
        assert.ok(page.continue === undefined || (typeof page.continue === 'string' && page.continue !== ''));
        assert.ok(page.remainingItemCount === undefined || typeof page.remainingItemCount === 'number');
        if (metadataOnly) {
          for (const i of page.items)
            if (typeof i === 'object' && i !== null && !Array.isArray(i))
              assert.deepEqual(Object.keys(i).sort(), ['apiVersion', 'kind', 'metadata']);
        }
      }),
    );
  } finally {
    await client.close();
  }
});

test('listAll over random pages and expired continue tokens keeps exactly the items after the last restart', async () => {
  const pageArb = fc.record({ items: fc.array(fc.integer(), { maxLength: 4 }), expire: fc.boolean() });
  await check(
    'paged lists',
    fc.asyncProperty(
      fc.array(pageArb, { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 0, max: 3 }),
      async (script, maxRestarts) => {
        // Page i's continue token is "i"; a page marked `expire` answers 410 the first time it is asked for by token.
        const expired = new Set<number>();
        let restarts = 0;
        const fetchPage = <T>(_type: unknown, opts: ListPageOptions): Promise<ListPage<T>> => {
          const i = opts.continue === undefined ? 0 : Number(opts.continue);
          if (opts.continue !== undefined && script[i]!.expire && !expired.has(i)) {
            expired.add(i);
            restarts++;
            return Promise.reject(new ApiError({ status: 410, reason: 'Expired' }));
          }
          const page: ListPage<T> = { items: script[i]!.items as T[], resourceVersion: `rv${restarts}` };
          if (i + 1 < script.length) page.continue = String(i + 1);
          return Promise.resolve(page);
        };
        let result: { items: number[]; resourceVersion: string };
        try {
          result = await listAll(
            listPages<number>(fetchPage, { apiVersion: 'v1', kind: 'ConfigMap' }, { maxRestarts }),
          );
        } catch (err) {
          assert.ok(err instanceof ApiError && err.status === 410, String(err));
          assert.ok(restarts > maxRestarts, 'gives up only after maxRestarts restarts');
          return;
        }
        assert.deepEqual(
          result.items,
          script.flatMap((p) => p.items),
        );
        assert.equal(result.resourceVersion, `rv${restarts}`, 'the resourceVersion of the last (re)started list');
      },
    ),
  );
});
