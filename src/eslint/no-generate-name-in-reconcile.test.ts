import { noGenerateNameInReconcile } from './no-generate-name-in-reconcile.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

const builder = (body: string): string =>
  `controller(manager, KIND).complete(async (request, { get, signal }) => {\n${body}\n});`;

ruleTester.run('no-generate-name-in-reconcile', asEslintRule(noGenerateNameInReconcile), {
  valid: [
    builder(`await client.create({ metadata: { name: \`\${db.metadata.name}-backup\`, namespace } }, { signal });`),
    // A one-off tool or a test may generate names; only reconciles repeat.
    `await client.create({ metadata: { generateName: 'scratch-' } });`,
    `function job() { return { metadata: { generateName: 'run-' } }; }`,
  ],
  invalid: [
    {
      code: builder(
        `await client.create({ apiVersion: 'batch/v1', kind: 'Job', metadata: { generateName: 'backup-', namespace } }, { signal });`,
      ),
      errors: [{ messageId: 'generateName' }],
    },
    {
      code: `class R { async reconcile(req, ctx) { const job = { metadata: { generateName: \`\${req.name}-\` } }; await this.client.create(job); } }`,
      errors: [{ messageId: 'generateName' }],
    },
    { code: builder(`pod.metadata.generateName = 'x-';`), errors: [{ messageId: 'generateName' }] },
  ],
});
