import { AST_NODE_TYPES, type TSESTree } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { calleeName, hasSpread, propertyNamed } from './reconcile-scope.js';

/** The object literal a raw client status write sends, if the call is one and it is written inline. */
function statusWriteBody(call: TSESTree.CallExpression): TSESTree.ObjectExpression | undefined {
  // Only member calls: a plain `patchStatus(client, obj, status)` is the helper, which adds both checks.
  if (call.callee.type !== AST_NODE_TYPES.MemberExpression) return undefined;
  const name = calleeName(call);
  let body: TSESTree.Node | undefined;
  if (name === 'patchStatus') body = call.arguments[2];
  else if (name === 'updateStatus') body = call.arguments[0];
  else if (name === 'patch') {
    const options = call.arguments[3];
    const subresource =
      options?.type === AST_NODE_TYPES.ObjectExpression ? propertyNamed(options, 'subresource') : undefined;
    if (subresource?.value.type === AST_NODE_TYPES.Literal && subresource.value.value === 'status')
      body = call.arguments[2];
  }
  return body?.type === AST_NODE_TYPES.ObjectExpression ? body : undefined;
}

/** True when the body may carry `metadata.resourceVersion` (set, or possibly from a spread). */
function mayCarryResourceVersion(body: TSESTree.ObjectExpression): boolean {
  if (hasSpread(body)) return true;
  const metadata = propertyNamed(body, 'metadata');
  if (metadata === undefined) return false;
  if (metadata.value.type !== AST_NODE_TYPES.ObjectExpression) return true; // `metadata: db.metadata`
  return hasSpread(metadata.value) || propertyNamed(metadata.value, 'resourceVersion') !== undefined;
}

type MessageId = 'noResourceVersion' | 'noObservedGeneration';

export const statusWriteWithConcurrencyCheck = createRule<[], MessageId>({
  name: 'status-write-with-concurrency-check',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Require raw-client status writes to carry `metadata.resourceVersion` (a concurrency check) and `status.observedGeneration`.',
      recommended: 'error',
    },
    schema: [],
    messages: {
      noResourceVersion:
        "This status write carries no `metadata.resourceVersion`, so it overwrites whatever was written since the read (last writer wins, from a possibly stale cache copy). Use `patchStatus(client, obj, status)` from operator-runtime/helpers, which sends the object's resourceVersion and gets a 409 to retry on (`retryOnConflict`).",
      noObservedGeneration:
        'This status has no `observedGeneration`, so nobody can tell whether it describes the current spec. Set it to the `metadata.generation` the reconcile acted on, or use `patchStatus` from operator-runtime/helpers, which does.',
    },
  },
  defaultOptions: [],
  create(context) {
    return {
      CallExpression(node) {
        const body = statusWriteBody(node);
        if (body === undefined) return;
        if (!mayCarryResourceVersion(body)) context.report({ node: body, messageId: 'noResourceVersion' });
        const status = propertyNamed(body, 'status');
        if (
          status?.value.type === AST_NODE_TYPES.ObjectExpression &&
          !hasSpread(status.value) &&
          propertyNamed(status.value, 'observedGeneration') === undefined
        )
          context.report({ node: status, messageId: 'noObservedGeneration' });
      },
    };
  },
});
