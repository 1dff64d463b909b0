import { AST_NODE_TYPES } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { keyName, propertyNamed, reconcileScopeOf } from './reconcile-scope.js';

export const noGenerateNameInReconcile = createRule<[], 'generateName'>({
  name: 'no-generate-name-in-reconcile',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Disallow `metadata.generateName` for objects a reconcile creates: a repeated reconcile (a retry, a stale cache) creates a second object instead of finding the first.',
      recommended: 'error',
    },
    schema: [],
    messages: {
      generateName:
        'A reconcile runs again after a failure or before the cache shows its create, and each run with `generateName` makes one more object. Derive a fixed `name` from the owner (e.g. `${owner.metadata.name}-backup`) and use `createOrPatch`.',
    },
  },
  defaultOptions: [],
  create(context) {
    return {
      ObjectExpression(node) {
        const metadata = propertyNamed(node, 'metadata');
        if (metadata?.value.type !== AST_NODE_TYPES.ObjectExpression) return;
        const generateName = propertyNamed(metadata.value, 'generateName');
        if (generateName === undefined || reconcileScopeOf(node) === undefined) return;
        context.report({ node: generateName, messageId: 'generateName' });
      },
      AssignmentExpression(node) {
        const left = node.left;
        if (left.type !== AST_NODE_TYPES.MemberExpression || keyName(left.property, left.computed) !== 'generateName')
          return;
        if (reconcileScopeOf(node) !== undefined) context.report({ node, messageId: 'generateName' });
      },
    };
  },
});
