import { AST_NODE_TYPES, type TSESLint, type TSESTree } from '@typescript-eslint/utils';
import { createRule } from './create-rule.js';
import { calleeName, hasSpread, propertyNamed, reconcileScopeOf } from './reconcile-scope.js';

/**
 * Synchronous calls that stop the whole process, not just this reconcile: every worker of every
 * controller, the watches and the health probes wait on them.
 */
const SYNC_CALLS = new Set([
  'execSync',
  'execFileSync',
  'spawnSync',
  'readFileSync',
  'writeFileSync',
  'appendFileSync',
  'readdirSync',
  'statSync',
  'lstatSync',
  'copyFileSync',
  'mkdirSync',
  'rmSync',
  'unlinkSync',
  'renameSync',
]);

/** Modules whose `setTimeout` is a promise sleep. */
const TIMER_MODULES = new Set(['timers/promises', 'node:timers/promises']);
/** undici's calls that take a `signal` in their options (the second argument). */
const UNDICI_CALLS = new Set(['request', 'fetch', 'stream']);

type MessageId = 'syncCall' | 'promiseSleep' | 'sleepWithoutSignal' | 'requestWithoutSignal' | 'addSignal';

export const noBlockingInReconcile = createRule<[], MessageId>({
  name: 'no-blocking-in-reconcile',
  meta: {
    type: 'problem',
    docs: {
      description:
        'Disallow work in a reconcile that blocks the process or cannot be cancelled: synchronous child processes and file calls, timer sleeps, HTTP calls without an abort signal.',
      recommended: 'error',
    },
    hasSuggestions: true,
    schema: [],
    messages: {
      syncCall:
        "`{{name}}` blocks the whole process, every controller with it. Use the asynchronous form (fs/promises, a promisified execFile) and pass the reconcile's signal.",
      promiseSleep:
        'A `setTimeout` sleep holds a worker and cannot be cancelled on shutdown. Return `requeueAfter(ms)` instead.',
      sleepWithoutSignal:
        "This sleep ignores the reconcile's signal, so shutdown waits for it. Prefer returning `requeueAfter(ms)`; at least pass `{ signal }`.",
      requestWithoutSignal:
        "`{{name}}` without a `signal` can hang a worker for as long as the server takes. Pass the reconcile's signal (or `AbortSignal.timeout(ms)`).",
      addSignal: "Pass `{{signal}}` as the request's signal.",
    },
  },
  defaultOptions: [],
  create(context) {
    const timerSleeps = new Set<string>();
    const undiciCalls = new Set<string>();

    /** The fix that adds `signal` to the options argument, when the reconcile's signal has a name here. */
    function addSignal(
      call: TSESTree.CallExpression,
      signal: string | undefined,
    ): TSESLint.ReportSuggestionArray<MessageId> {
      if (signal === undefined) return [];
      const property = signal === 'signal' ? 'signal' : `signal: ${signal}`;
      const options = call.arguments[1];
      const first = call.arguments[0];
      return [
        {
          messageId: 'addSignal',
          data: { signal },
          fix(fixer) {
            if (options === undefined)
              return first === undefined ? null : fixer.insertTextAfter(first, `, { ${property} }`);
            if (options.type !== AST_NODE_TYPES.ObjectExpression) return null;
            if (options.properties.length === 0) return fixer.replaceText(options, `{ ${property} }`);
            return fixer.insertTextAfter(options.properties.at(-1)!, `, ${property}`);
          },
        },
      ];
    }

    /** The options argument at `index` may carry a signal: absent or a literal without one says no. */
    function lacksSignal(call: TSESTree.CallExpression, index: number): boolean {
      const options = call.arguments[index];
      if (options === undefined) return true;
      if (options.type !== AST_NODE_TYPES.ObjectExpression) return false; // a variable: cannot tell
      return propertyNamed(options, 'signal') === undefined && !hasSpread(options);
    }

    return {
      ImportDeclaration(node) {
        const from = node.source.value;
        for (const spec of node.specifiers) {
          if (spec.type !== AST_NODE_TYPES.ImportSpecifier || spec.imported.type !== AST_NODE_TYPES.Identifier)
            continue;
          if (TIMER_MODULES.has(from) && spec.imported.name === 'setTimeout') timerSleeps.add(spec.local.name);
          if (from === 'undici' && UNDICI_CALLS.has(spec.imported.name)) undiciCalls.add(spec.local.name);
        }
      },
      NewExpression(node) {
        // new Promise((resolve) => setTimeout(resolve, ms)): the hand-made sleep.
        if (node.callee.type !== AST_NODE_TYPES.Identifier || node.callee.name !== 'Promise') return;
        const executor = node.arguments[0];
        if (
          executor?.type !== AST_NODE_TYPES.ArrowFunctionExpression &&
          executor?.type !== AST_NODE_TYPES.FunctionExpression
        )
          return;
        const text = context.sourceCode.getText(executor.body);
        if (!/\bsetTimeout\s*\(/.test(text) || reconcileScopeOf(node) === undefined) return;
        context.report({ node, messageId: 'promiseSleep' });
      },
      CallExpression(node) {
        const name = calleeName(node);
        if (name === undefined) return;
        const isPlainCall = node.callee.type === AST_NODE_TYPES.Identifier;
        const check =
          SYNC_CALLS.has(name) || (isPlainCall && (timerSleeps.has(name) || undiciCalls.has(name) || name === 'fetch'));
        if (!check) return;
        const scope = reconcileScopeOf(node);
        if (scope === undefined) return;
        if (SYNC_CALLS.has(name)) {
          context.report({ node, messageId: 'syncCall', data: { name } });
        } else if (timerSleeps.has(name)) {
          // setTimeout(ms, value, { signal })
          if (lacksSignal(node, 2)) context.report({ node, messageId: 'sleepWithoutSignal' });
        } else if (lacksSignal(node, 1)) {
          context.report({
            node,
            messageId: 'requestWithoutSignal',
            data: { name },
            suggest: addSignal(node, scope.signalText),
          });
        }
      },
    };
  },
});
