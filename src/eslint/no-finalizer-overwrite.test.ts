import { noFinalizerOverwrite } from './no-finalizer-overwrite.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

ruleTester.run('no-finalizer-overwrite', asEslintRule(noFinalizerOverwrite), {
  valid: [
    `await handleFinalizer(client, db, { name: 'example.com/backup', signal, cleanup });`,
    `await removeFinalizer(client, db, 'example.com/backup', { signal });`,
    // A filtered copy removes one entry: the source document's own correct version, left to review.
    `db.metadata.finalizers = db.metadata.finalizers.filter((f) => f !== NAME);`,
    // Adding to the current list keeps the others.
    `obj.metadata.finalizers = [...(obj.metadata.finalizers ?? []), NAME];`,
    // A new object's manifest may list its finalizers; that is not a patch.
    `await client.create({ metadata: { name, finalizers: ['example.com/backup'] } }, { signal });`,
    `await client.patch(KIND, name, { metadata: { labels: { a: 'b' } } }, { signal });`,
    `await client.patch(KIND, name, [{ op: 'remove', path: '/metadata/finalizers/0' }]);`,
    `spec.finalizers = [];`, // a Namespace's spec.finalizers, not metadata
    // Server-side apply merges the list as a set: it claims only the entries it sends.
    `await client.apply({ apiVersion, kind, metadata: { name, finalizers: [NAME] } }, { fieldManager, signal });`,
  ],
  invalid: [
    { code: `db.metadata.finalizers = [];`, errors: [{ messageId: 'assignment' }] },
    { code: `db.metadata!.finalizers = ['example.com/backup'];`, errors: [{ messageId: 'assignment' }] },
    { code: `copy.metadata['finalizers'] = undefined;`, errors: [{ messageId: 'assignment' }] },
    {
      code: `await client.patch(DATABASE, name, { metadata: { finalizers: [] } }, { namespace, signal });`,
      errors: [{ messageId: 'patch' }],
    },
    {
      code: `await client.mergePatch(db, { metadata: { resourceVersion: rv, finalizers: ['a'] } });`,
      errors: [{ messageId: 'patch' }],
    },
    {
      code: `await client.patch(KIND, name, [{ op: 'replace', path: '/metadata/finalizers', value: [] }]);`,
      errors: [{ messageId: 'jsonPatch' }],
    },
  ],
});
