import { AST_NODE_TYPES, type TSESTree } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { calleeName, keyName, propertyNamed } from './reconcile-scope.js';

/** `<anything>.metadata.finalizers`, dotted or with a string key. */
function isFinalizersMember(node: TSESTree.Node): boolean {
  if (node.type !== AST_NODE_TYPES.MemberExpression) return false;
  if (keyName(node.property, node.computed) !== 'finalizers') return false;
  const object = node.object.type === AST_NODE_TYPES.TSNonNullExpression ? node.object.expression : node.object;
  return object.type === AST_NODE_TYPES.MemberExpression && keyName(object.property, object.computed) === 'metadata';
}

/**
 * The calls whose object argument is a patch: `patch`, `patchStatus`, `mergePatch`… Server-side apply
 * is left out: there `metadata.finalizers` is a set, and an apply claims only the entries it lists.
 */
const PATCH_CALL = /patch/i;

export const noFinalizerOverwrite = createRule<[], 'assignment' | 'patch' | 'jsonPatch'>({
  name: 'no-finalizer-overwrite',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Disallow replacing `metadata.finalizers` wholesale, by assignment or in a patch; use the finalizer helpers, which add or remove one entry.',
      recommended: 'error',
    },
    schema: [],
    messages: {
      assignment:
        'Assigning `metadata.finalizers` a new list drops the finalizers other controllers registered, and the object may never be deleted (or is deleted before their cleanup). Use `addFinalizer`/`removeFinalizer` or `handleFinalizer` from operator-runtime/helpers.',
      patch:
        'A patch that sets `metadata.finalizers` replaces the whole list (merge patches replace arrays), dropping the finalizers other controllers registered. Use `addFinalizer`/`removeFinalizer` or `handleFinalizer` from operator-runtime/helpers.',
      jsonPatch:
        'A JSON patch that replaces `/metadata/finalizers` drops the finalizers other controllers registered. Use `addFinalizer`/`removeFinalizer` or `handleFinalizer` from operator-runtime/helpers.',
    },
  },
  defaultOptions: [],
  create(context) {
    const source = context.sourceCode;
    /** An array literal spreading the current list (`[...obj.metadata.finalizers, 'x']`) keeps it. */
    function spreadsCurrent(value: TSESTree.Node): boolean {
      return (
        value.type === AST_NODE_TYPES.ArrayExpression &&
        value.elements.some((e) => e?.type === AST_NODE_TYPES.SpreadElement && /\bfinalizers\b/.test(source.getText(e)))
      );
    }

    /** The `metadata: { finalizers }` inside an object literal given to a patch call, if any. */
    function finalizersInPatch(object: TSESTree.ObjectExpression): TSESTree.Property | undefined {
      const metadata = propertyNamed(object, 'metadata');
      if (metadata?.value.type !== AST_NODE_TYPES.ObjectExpression) return undefined;
      return propertyNamed(metadata.value, 'finalizers');
    }

    return {
      AssignmentExpression(node) {
        if (node.operator !== '=' || !isFinalizersMember(node.left)) return;
        // A filtered or otherwise derived copy (`obj.metadata.finalizers = list.filter(…)`) is how
        // removal by hand looks; the lint points at list literals and clearing, the overwrites.
        const value = node.right;
        const clears =
          (value.type === AST_NODE_TYPES.Identifier && value.name === 'undefined') ||
          (value.type === AST_NODE_TYPES.Literal && value.value === null);
        if (clears || (value.type === AST_NODE_TYPES.ArrayExpression && !spreadsCurrent(value)))
          context.report({ node, messageId: 'assignment' });
      },
      CallExpression(node) {
        const name = calleeName(node);
        if (name === undefined || !PATCH_CALL.test(name)) return;
        for (const arg of node.arguments) {
          if (arg.type === AST_NODE_TYPES.ObjectExpression) {
            const finalizers = finalizersInPatch(arg);
            if (finalizers !== undefined) context.report({ node: finalizers, messageId: 'patch' });
          }
          if (arg.type === AST_NODE_TYPES.ArrayExpression) {
            for (const op of arg.elements) {
              if (op?.type !== AST_NODE_TYPES.ObjectExpression) continue;
              const path = propertyNamed(op, 'path')?.value;
              if (path?.type === AST_NODE_TYPES.Literal && path.value === '/metadata/finalizers')
                context.report({ node: op, messageId: 'jsonPatch' });
            }
          }
        }
      },
    };
  },
});
