import { AST_NODE_TYPES, type TSESTree } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { calleeName, keyName, reconcileScopeOf } from './reconcile-scope.js';

/** Reads of whole collections: through the raw client each is a request per reconcile. */
const LIST_CALLS = new Set(['list', 'listPage', 'listPages']);

/** The last name of the expression a method is called on: `apiClient` of `this.manager.apiClient.list(…)`. */
function receiverName(call: TSESTree.CallExpression): string | undefined {
  if (call.callee.type !== AST_NODE_TYPES.MemberExpression) return undefined;
  const object = call.callee.object;
  if (object.type === AST_NODE_TYPES.Identifier) return object.name;
  if (object.type === AST_NODE_TYPES.MemberExpression) return keyName(object.property, object.computed);
  return undefined;
}

type MessageId = 'rawList' | 'watch' | 'newClient';

export const noUncachedListInReconcile = createRule<[], MessageId>({
  name: 'no-uncached-list-in-reconcile',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Disallow reads in a reconcile that bypass the informer cache: lists through the raw `apiClient`, watches, and clients made per reconcile.',
      recommended: 'error',
    },
    schema: [],
    messages: {
      rawList:
        "`apiClient.{{method}}` lists from the API server on every reconcile, which grows with the number of objects times the reconcile rate. List through the manager's cache-backed `client` (a kind it watches with for/owns/watches is served from the informer cache, with label selectors and field indexes).",
      watch:
        'A watch opened in a reconcile is one more stream to the API server per reconcile, and its events bypass the workqueue. Declare the kind with `.owns(…)` or `.watches(…)` on the controller instead.',
      newClient:
        "A client made in a reconcile reads from the API server and not the cache, and opens a connection pool per run. Use the manager's `client` (or the reconcile context's).",
    },
  },
  defaultOptions: [],
  create(context) {
    return {
      CallExpression(node) {
        const method = calleeName(node);
        if (method === undefined) return;
        const receiver = receiverName(node);
        if (LIST_CALLS.has(method) && receiver === 'apiClient') {
          if (reconcileScopeOf(node) !== undefined) context.report({ node, messageId: 'rawList', data: { method } });
        } else if (method === 'watch' && receiver !== undefined && /client$/i.test(receiver)) {
          if (reconcileScopeOf(node) !== undefined) context.report({ node, messageId: 'watch' });
        } else if (method === 'fromDefault' && receiver === 'KubeClient') {
          if (reconcileScopeOf(node) !== undefined) context.report({ node, messageId: 'newClient' });
        }
      },
      NewExpression(node) {
        if (
          node.callee.type === AST_NODE_TYPES.Identifier &&
          node.callee.name === 'KubeClient' &&
          reconcileScopeOf(node)
        )
          context.report({ node, messageId: 'newClient' });
      },
    };
  },
});
