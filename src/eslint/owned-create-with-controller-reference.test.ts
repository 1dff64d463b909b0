import { ownedCreateWithControllerReference } from './owned-create-with-controller-reference.js';
import { asEslintRule, ruleTester } from './testing/rule-tester.js';

/** A controller owning ConfigMaps whose reconcile is `body`. */
const owning = (body: string, owns = 'kinds.ConfigMap'): string =>
  `manager.controller('x').for(WEBSITE).owns(${owns}).complete(async (request, { get, signal }) => {\n${body}\n});`;

const CM = `{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } }`;

ruleTester.run('owned-create-with-controller-reference', asEslintRule(ownedCreateWithControllerReference), {
  valid: [
    owning(`await manager.client.create(setControllerReference(site, ${CM}), { signal });`),
    owning(`const cm = setControllerReference(site, ${CM}); await manager.client.create(cm, { signal });`),
    owning(`const cm = ${CM}; setControllerReference(site, cm); await manager.client.create(cm, { signal });`),
    owning(
      `await manager.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ownerReferences: [ref] } });`,
    ),
    owning(`await createOrPatch(manager.client, ${CM}, (cm) => { cm.data = d; setControllerReference(site, cm); });`),
    owning(`await applyOwned(manager.client, setControllerReference(site, ${CM}), { fieldManager: 'x', signal });`),
    // The typed forms: the kind first, an apply configuration (no kind of its own) after it.
    owning(
      `await manager.client.apply(kinds.ConfigMap, setControllerReference(site, { metadata: { name } }), { fieldManager: 'x' });`,
    ),
    owning(
      `await applyOwned(manager.client, kinds.ConfigMap, { metadata: { name, ownerReferences: [ref] } }, { fieldManager: 'x' });`,
    ),
    owning(`await manager.client.apply(kinds.Secret, { metadata: { name } }, { fieldManager: 'x' });`),
    // A kind the controller does not own: maybe on purpose (a shared object).
    owning(`await manager.client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name } });`),
    // What the file does not show is given the benefit of the doubt.
    owning(`await manager.client.create(desired(site), { signal });`),
    owning(`await manager.client.create({ ...template, kind: 'ConfigMap' });`),
    owning(`await manager.client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta });`),
    // A create outside any reconciler the builder names.
    `async function seed(client) { await client.create(${CM.replace('name, namespace', "name: 'seed'")}); }`,
    // The owned kind through an imported constant: not resolvable here.
    owning(`await manager.client.create({ kind: 'ConfigMap', metadata: { name } });`, 'CONFIG_MAP'),
  ],
  invalid: [
    {
      code: owning(`await manager.client.create(${CM}, { signal });`),
      errors: [{ messageId: 'noControllerReference', data: { kind: 'ConfigMap' } }],
    },
    {
      code: owning(`const cm = ${CM};\nawait manager.client.create(cm, { signal });`),
      errors: [{ messageId: 'noControllerReference', line: 3 }],
    },
    {
      code: owning(`await createOrPatch(manager.client, ${CM}, (cm) => { cm.data = d; }, { signal });`),
      errors: [{ messageId: 'noControllerReference' }],
    },
    {
      code: owning(`await applyOwned(manager.client, ${CM} as ConfigMap, { fieldManager: 'x' });`),
      errors: [{ messageId: 'noControllerReference' }],
    },
    {
      // The kind through a constant of this file, and the create through server-side apply.
      code: `const CONFIG_MAP = kinds.ConfigMap;\n${owning(`await manager.client.apply({ apiVersion: 'v1', kind: CONFIG_MAP.kind, metadata: { name } }, { fieldManager: 'x' });`, 'CONFIG_MAP')}`,
      errors: [{ messageId: 'noControllerReference' }],
    },
    {
      // Typed apply: the kind is the first argument, the configuration has none.
      code: owning(
        `await manager.client.apply(kinds.ConfigMap, { metadata: { name }, data: d }, { fieldManager: 'x' });`,
      ),
      errors: [{ messageId: 'noControllerReference', data: { kind: 'ConfigMap' } }],
    },
    {
      code: `const CM_KIND = kinds.ConfigMap;\n${owning(`const config = { metadata: { name, namespace } };\nawait applyOwned(manager.client, CM_KIND, config, { fieldManager: 'x', signal });`, 'CM_KIND')}`,
      errors: [{ messageId: 'noControllerReference', data: { kind: 'ConfigMap' }, line: 4 }],
    },
    {
      // A custom kind defined here; the create in a helper method of the reconciler class.
      code: `const GADGET = defineCustomKind({ group: 'example.com', names: { kind: 'Gadget', plural: 'gadgets' } });
class R {
  async reconcile(req, ctx) { await this.ensure(ctx); }
  async ensure(ctx) { await this.client.create({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' } }); }
}
manager.controller('x').for(WEBSITE).owns(GADGET).complete(new R());`,
      errors: [{ messageId: 'noControllerReference', data: { kind: 'Gadget' }, line: 4 }],
    },
  ],
});
