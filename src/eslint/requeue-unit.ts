import { AST_NODE_TYPES, type TSESTree } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { calleeName, keyName } from './reconcile-scope.js';

/**
 * Below one second a requeue delay is almost always seconds written where milliseconds are expected
 * (`requeueAfter(30)` meant to wait half a minute; it re-runs the reconcile 33 times a second).
 */
const SMALLEST_LIKELY_MS = 1000;

/** `30` → `30_000`: the suggested delay, spelled as the README spells durations. */
function asMilliseconds(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  return String(ms).replace(/\B(?=(\d{3})+(?!\d))/g, '_');
}

/** A numeric literal that looks like seconds: positive and below one second as milliseconds. */
function secondsLiteral(node: TSESTree.Node | undefined): number | undefined {
  if (node?.type !== AST_NODE_TYPES.Literal || typeof node.value !== 'number') return undefined;
  return node.value > 0 && node.value < SMALLEST_LIKELY_MS ? node.value : undefined;
}

type MessageId = 'looksLikeSeconds' | 'asMilliseconds';

export const requeueUnit = createRule<[], MessageId>({
  name: 'requeue-unit',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Flag requeue delays below one second (`requeueAfter(30)`, `{ requeueAfterMs: 30 }`): durations are milliseconds, and a small literal is usually seconds.',
      recommended: 'warn',
    },
    hasSuggestions: true,
    schema: [],
    messages: {
      looksLikeSeconds:
        'Requeue delays are milliseconds: {{value}} requeues after {{value}} ms, a busy loop against the API server. If seconds were meant, write {{suggested}}.',
      asMilliseconds: 'Read {{value}} as seconds: {{suggested}} ms.',
    },
  },
  defaultOptions: [],
  create(context) {
    function check(literal: TSESTree.Node | undefined): void {
      const value = secondsLiteral(literal);
      if (value === undefined || literal === undefined) return;
      const suggested = asMilliseconds(value);
      const data = { value: String(value), suggested };
      context.report({
        node: literal,
        messageId: 'looksLikeSeconds',
        data,
        suggest: [{ messageId: 'asMilliseconds', data, fix: (fixer) => fixer.replaceText(literal, suggested) }],
      });
    }
    return {
      CallExpression(node) {
        if (calleeName(node) === 'requeueAfter') check(node.arguments[0]);
      },
      Property(node) {
        if (
          node.parent.type === AST_NODE_TYPES.ObjectExpression &&
          keyName(node.key, node.computed) === 'requeueAfterMs'
        )
          check(node.value);
      },
    };
  },
});
