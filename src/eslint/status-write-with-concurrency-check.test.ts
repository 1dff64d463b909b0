import { statusWriteWithConcurrencyCheck } from './status-write-with-concurrency-check.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

ruleTester.run('status-write-with-concurrency-check', asEslintRule(statusWriteWithConcurrencyCheck), {
  valid: [
    // The helper sends the resourceVersion and observedGeneration itself.
    `await patchStatus(manager.client, db, { phase: 'Ready', conditions }, { signal });`,
    `await client.patchStatus(DATABASE, name, { metadata: { resourceVersion: db.metadata.resourceVersion }, status: { observedGeneration: db.metadata.generation, phase: 'Ready' } }, { type: 'merge', signal });`,
    // The copy keeps its resourceVersion.
    `await client.updateStatus({ ...db, status: { observedGeneration: db.metadata.generation, phase: 'Ready' } }, { signal });`,
    `await client.updateStatus(db, { signal });`, // not written inline: cannot tell
    `await client.patchStatus(DATABASE, name, patch, { type: 'merge' });`,
    `await client.patch(DATABASE, name, { spec: { replicas: 3 } }, { type: 'merge', signal });`, // not status
  ],
  invalid: [
    {
      // A PUT replaces the status: without observedGeneration it is dropped.
      code: `await client.updateStatus({ ...db, status: { phase: 'Ready' } }, { signal });`,
      errors: [{ messageId: 'noObservedGeneration' }],
    },
    {
      code: `await client.patchStatus(DATABASE, name, { status: { observedGeneration: gen, phase: 'Ready' } }, { type: 'merge', signal });`,
      errors: [{ messageId: 'noResourceVersion' }],
    },
    {
      code: `await ctx.cluster.apiClient.patchStatus(DATABASE, name, { status: { phase: 'Ready' } }, { type: 'merge' });`,
      errors: [{ messageId: 'noResourceVersion' }, { messageId: 'noObservedGeneration' }],
    },
    {
      code: `await client.updateStatus({ apiVersion, kind, metadata: { name, namespace }, status: { observedGeneration: 2 } });`,
      errors: [{ messageId: 'noResourceVersion' }],
    },
    {
      code: `await client.patch(DATABASE, name, { metadata: { resourceVersion: rv }, status: { phase: 'Ready' } }, { type: 'merge', subresource: 'status' });`,
      errors: [{ messageId: 'noObservedGeneration' }],
    },
  ],
});
