import { noFloatingAsyncInReconcile } from './no-floating-async-in-reconcile.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

const builder = (body: string): string =>
  `controller(manager, KIND).complete(async (request, { signal }) => {\n${body}\n});`;

ruleTester.run('no-floating-async-in-reconcile', asEslintRule(noFloatingAsyncInReconcile), {
  valid: [
    builder(`await Promise.all(pods.map(async (p) => client.delete(POD, p.metadata.name, { signal })));`),
    builder(`const writes = pods.map(async (p) => label(p)); await Promise.allSettled(writes);`),
    builder(`return Promise.all(pods.map(async (p) => label(p)));`),
    builder(`for (const p of pods) await label(p);`),
    builder(`pods.forEach((p) => names.push(p.metadata.name));`), // synchronous callback
    builder(`const names = pods.map((p) => p.metadata.name);`),
    // Outside a reconcile (the repo's own no-misused-promises covers the rest of the code).
    `pods.forEach(async (p) => label(p));`,
  ],
  invalid: [
    {
      code: builder(`pods.forEach(async (p) => { await client.delete(POD, p.metadata.name, { signal }); });`),
      errors: [
        {
          messageId: 'forEachAsync',
          suggestions: [
            {
              messageId: 'awaitAll',
              output: builder(
                `await Promise.all(pods.map(async (p) => { await client.delete(POD, p.metadata.name, { signal }); }));`,
              ),
            },
          ],
        },
      ],
    },
    {
      code: builder(`pods.map(async (p) => label(p));`),
      errors: [
        {
          messageId: 'mapDiscarded',
          suggestions: [
            { messageId: 'awaitAll', output: builder(`await Promise.all(pods.map(async (p) => label(p)));`) },
          ],
        },
      ],
    },
    {
      code: builder(`void pods.map(async (p) => label(p));`),
      errors: [{ messageId: 'mapDiscarded', suggestions: [] }],
    },
    {
      code: builder(`const writes = pods.map(async (p) => label(p));`),
      errors: [{ messageId: 'mapDiscarded', suggestions: [] }],
    },
    {
      // In a class's reconcile, inside a non-async callback: reported, no suggestion (await is not allowed there).
      code: `class R { async reconcile(req, ctx) { groups.forEach((g) => { g.pods.forEach(async (p) => label(p)); }); } }`,
      errors: [{ messageId: 'forEachAsync', suggestions: [] }],
    },
  ],
});
