import { AST_NODE_TYPES, type TSESLint, type TSESTree } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { calleeName, reconcileScopeOf } from './reconcile-scope.js';

function isAsyncFunction(node: TSESTree.Node | undefined): boolean {
  return (
    (node?.type === AST_NODE_TYPES.ArrowFunctionExpression || node?.type === AST_NODE_TYPES.FunctionExpression) &&
    node.async
  );
}

/** `xs.forEach(async …)` / `xs.map(async …)`: a member call whose first argument is an async function. */
function asyncIteration(node: TSESTree.CallExpression): 'forEach' | 'map' | undefined {
  if (node.callee.type !== AST_NODE_TYPES.MemberExpression || !isAsyncFunction(node.arguments[0])) return undefined;
  const name = calleeName(node);
  return name === 'forEach' || name === 'map' ? name : undefined;
}

type MessageId = 'forEachAsync' | 'mapDiscarded' | 'awaitAll';

export const noFloatingAsyncInReconcile = createRule<[], MessageId>({
  name: 'no-floating-async-in-reconcile',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Disallow `forEach(async …)` and `map(async …)` whose promises nobody awaits in a reconcile: the reconcile returns before the work ends and its errors are lost.',
      recommended: 'error',
    },
    hasSuggestions: true,
    schema: [],
    messages: {
      forEachAsync:
        '`forEach` does not wait for an async callback: the reconcile returns (and the key may be reconciled again) while these writes still run, and their errors are never retried. Use `await Promise.all(xs.map(async …))` or a `for…of` loop with `await`.',
      mapDiscarded:
        'The promises of this `map(async …)` are never awaited: the reconcile returns before they settle and their errors are lost. Wrap it in `await Promise.all(…)`.',
      awaitAll: 'Await every callback: `await Promise.all(….map(async …))`.',
    },
  },
  defaultOptions: [],
  create(context) {
    const source = context.sourceCode;

    /** In an async function, an expression statement `xs.forEach(async …)` becomes `await Promise.all(xs.map(async …))`. */
    function awaitAll(node: TSESTree.CallExpression, rename: boolean): TSESLint.ReportSuggestionArray<MessageId> {
      const scope = reconcileScopeOf(node);
      let fn: TSESTree.Node | null | undefined = node.parent;
      while (
        fn &&
        fn.type !== AST_NODE_TYPES.ArrowFunctionExpression &&
        fn.type !== AST_NODE_TYPES.FunctionExpression &&
        fn.type !== AST_NODE_TYPES.FunctionDeclaration
      )
        fn = fn.parent;
      if (scope === undefined || !fn || !fn.async || node.parent.type !== AST_NODE_TYPES.ExpressionStatement) return [];
      const callee = node.callee as TSESTree.MemberExpression;
      return [
        {
          messageId: 'awaitAll',
          fix: (fixer) => [
            ...(rename ? [fixer.replaceText(callee.property, 'map')] : []),
            fixer.insertTextBefore(node, 'await Promise.all('),
            fixer.insertTextAfter(node, ')'),
          ],
        },
      ];
    }

    /** The map's promises reach someone: awaited, returned, passed on, or kept in a variable that is read. */
    function consumed(node: TSESTree.CallExpression): boolean {
      let at: TSESTree.Node = node;
      // (xs.map(…)) as Promise<void>[] and the like
      while (
        at.parent?.type === AST_NODE_TYPES.TSAsExpression ||
        at.parent?.type === AST_NODE_TYPES.TSNonNullExpression ||
        at.parent?.type === AST_NODE_TYPES.TSSatisfiesExpression
      )
        at = at.parent;
      const parent = at.parent;
      if (parent === undefined) return false;
      if (parent.type === AST_NODE_TYPES.ExpressionStatement) return false;
      if (parent.type === AST_NODE_TYPES.UnaryExpression && parent.operator === 'void') return false;
      if (parent.type === AST_NODE_TYPES.VariableDeclarator && parent.init === at) {
        const variables = source.getDeclaredVariables(parent);
        return variables.some((v) => v.references.some((r) => r.isRead()));
      }
      return true;
    }

    return {
      CallExpression(node) {
        const kind = asyncIteration(node);
        if (kind === undefined || reconcileScopeOf(node) === undefined) return;
        if (kind === 'forEach') context.report({ node, messageId: 'forEachAsync', suggest: awaitAll(node, true) });
        else if (!consumed(node)) context.report({ node, messageId: 'mapDiscarded', suggest: awaitAll(node, false) });
      },
    };
  },
});
