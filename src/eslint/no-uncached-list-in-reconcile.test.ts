import { noUncachedListInReconcile } from './no-uncached-list-in-reconcile.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

const builder = (body: string): string =>
  `manager.controller('x').for(KIND).complete(async (request, { get, signal }) => {\n${body}\n});`;

ruleTester.run('no-uncached-list-in-reconcile', asEslintRule(noUncachedListInReconcile), {
  valid: [
    builder(`const { items } = await manager.client.list(kinds.Pod, { namespace, labelSelector, signal });`),
    // A single read that must see the server (read-your-own-write) is allowed: only lists and watches are flagged.
    builder(`const fresh = await member.apiClient.get(DATABASE, name, { namespace, signal });`),
    // Outside a reconcile: start-up code may list and make clients.
    `const client = await KubeClient.fromDefault({ logger }); const all = await manager.apiClient.list(kinds.Namespace);`,
    builder(`for await (const e of events.watch()) log.info(e);`), // not a client
  ],
  invalid: [
    {
      code: builder(`const { items } = await manager.apiClient.list(kinds.Pod, { namespace, signal });`),
      errors: [{ messageId: 'rawList', data: { method: 'list' } }],
    },
    {
      code: `class R { async reconcile(req, ctx) { for await (const page of this.apiClient.listPages(kinds.Pod)) use(page); } }`,
      errors: [{ messageId: 'rawList', data: { method: 'listPages' } }],
    },
    {
      code: builder(`for await (const e of manager.client.watch(kinds.Pod, { signal })) handle(e);`),
      errors: [{ messageId: 'watch' }],
    },
    { code: builder(`const c = await KubeClient.fromDefault({ logger });`), errors: [{ messageId: 'newClient' }] },
    { code: builder(`const c = new KubeClient(options);`), errors: [{ messageId: 'newClient' }] },
  ],
});
