import { noBlockingInReconcile } from './no-blocking-in-reconcile.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

const builder = (body: string, params = 'request, { get, signal }'): string =>
  `controller(manager, KIND).complete(async (${params}) => {\n${body}\n});`;

ruleTester.run('no-blocking-in-reconcile', asEslintRule(noBlockingInReconcile), {
  valid: [
    // Asynchronous, cancellable forms.
    builder(`const res = await fetch(url, { signal }); return res.ok;`),
    builder(`await fetch(url, { signal: AbortSignal.timeout(5_000) });`),
    builder(`await fetch(url, init);`), // options from a variable: the rule cannot tell, says nothing
    builder(`await fetch(url, { ...init, method: 'POST' });`),
    `import { request } from 'undici';\n${builder(`await request(url, { signal });`)}`,
    `import { setTimeout as sleep } from 'node:timers/promises';\n${builder(`await sleep(100, undefined, { signal });`)}`,
    builder(`const text = await readFile(path, { encoding: 'utf8', signal });`),
    // Outside a reconcile (start-up code may read files synchronously).
    `const config = readFileSync('config.json', 'utf8'); await fetch(url);`,
    `class Loader { load() { return execSync('git rev-parse HEAD'); } }`,
    // A method merely named like the builder's, with a non-function argument.
    `promise.complete(readFileSync);`,
    // A user's own method called request, not undici's.
    builder(`await this.backups.request(url);`),
  ],
  invalid: [
    {
      code: builder(`const out = execSync('pg_dump db');`),
      errors: [{ messageId: 'syncCall', data: { name: 'execSync' } }],
    },
    {
      code: `class DbReconciler { async reconcile(request, ctx) { const ca = fs.readFileSync('/etc/ca.pem'); } }`,
      errors: [{ messageId: 'syncCall', data: { name: 'readFileSync' } }],
    },
    {
      code: `const reconciler = { reconcile: async (r, c) => { spawnSync('helm', ['upgrade']); } };`,
      errors: [{ messageId: 'syncCall' }],
    },
    {
      code: builder(`await new Promise((resolve) => setTimeout(resolve, 5_000));`),
      errors: [{ messageId: 'promiseSleep' }],
    },
    {
      code: `import { setTimeout as sleep } from 'node:timers/promises';\n${builder(`await sleep(5_000);`)}`,
      errors: [{ messageId: 'sleepWithoutSignal' }],
    },
    // Nested callbacks are in the reconcile too.
    {
      code: builder(`for (const x of xs) await retry(() => fetch(x.url));`),
      errors: [
        {
          messageId: 'requestWithoutSignal',
          data: { name: 'fetch' },
          suggestions: [
            {
              messageId: 'addSignal',
              data: { signal: 'signal' },
              output: builder(`for (const x of xs) await retry(() => fetch(x.url, { signal }));`),
            },
          ],
        },
      ],
    },
    {
      code: builder(`await fetch(url, { method: 'POST', body });`, 'request, ctx'),
      errors: [
        {
          messageId: 'requestWithoutSignal',
          suggestions: [
            {
              messageId: 'addSignal',
              data: { signal: 'ctx.signal' },
              output: builder(`await fetch(url, { method: 'POST', body, signal: ctx.signal });`, 'request, ctx'),
            },
          ],
        },
      ],
    },
    {
      code: `import { request as http } from 'undici';\n${builder(`await http(url, {});`, 'request, { signal: abort }')}`,
      errors: [
        {
          messageId: 'requestWithoutSignal',
          data: { name: 'http' },
          suggestions: [
            {
              messageId: 'addSignal',
              data: { signal: 'abort' },
              output: `import { request as http } from 'undici';\n${builder(`await http(url, { signal: abort });`, 'request, { signal: abort }')}`,
            },
          ],
        },
      ],
    },
    // No signal in reach (a reconcile taking only the request): reported, nothing to suggest.
    { code: builder(`await fetch(url);`, 'request'), errors: [{ messageId: 'requestWithoutSignal', suggestions: [] }] },
  ],
});
