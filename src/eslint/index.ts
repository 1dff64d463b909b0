/**
 * `operator-runtime/eslint`: lint rules for reconcilers, each aimed at one of the anti-patterns
 * docs/lint.md traces back to their source — blocking work in a reconcile, finalizers overwritten,
 * fire-and-forget async, creates a retry repeats, reads that bypass the informer cache, owned
 * objects created without a controller reference, status written without a concurrency check,
 * requeue delays in the wrong unit. A flat-config plugin: add
 * `configs.recommended` (or `configs.strict`) after typescript-eslint's configs. Needs `eslint`,
 * `typescript-eslint` and `@typescript-eslint/utils` (optional peer dependencies: only projects that
 * lint install them; the runtime never loads this entry).
 */
import type { TSESLint } from '@typescript-eslint/utils';
import { noBlockingInReconcile } from './no-blocking-in-reconcile.js';
import { noFinalizerOverwrite } from './no-finalizer-overwrite.js';
import { noFloatingAsyncInReconcile } from './no-floating-async-in-reconcile.js';
import { noGenerateNameInReconcile } from './no-generate-name-in-reconcile.js';
import { noUncachedListInReconcile } from './no-uncached-list-in-reconcile.js';
import { ownedCreateWithControllerReference } from './owned-create-with-controller-reference.js';
import { requeueUnit } from './requeue-unit.js';
import { statusWriteWithConcurrencyCheck } from './status-write-with-concurrency-check.js';

/** The prefix the configs register the plugin under: rules are `operator-runtime/<rule>`. */
export const PLUGIN_NAMESPACE = 'operator-runtime';

const rules = {
  'no-blocking-in-reconcile': noBlockingInReconcile,
  'no-finalizer-overwrite': noFinalizerOverwrite,
  'no-floating-async-in-reconcile': noFloatingAsyncInReconcile,
  'no-generate-name-in-reconcile': noGenerateNameInReconcile,
  'no-uncached-list-in-reconcile': noUncachedListInReconcile,
  'owned-create-with-controller-reference': ownedCreateWithControllerReference,
  'requeue-unit': requeueUnit,
  'status-write-with-concurrency-check': statusWriteWithConcurrencyCheck,
};

/** Rule name (without the namespace) → its rule module. */
export type OperatorRuntimeRules = typeof rules;

/** The plugin object flat configs take; its configs register it under {@link PLUGIN_NAMESPACE}. */
export interface OperatorRuntimePlugin {
  readonly meta: { readonly name: string; readonly version: string };
  readonly rules: OperatorRuntimeRules;
  readonly configs: {
    /** The rules whose docs say `recommended`, as errors; the heuristic ones as warnings. */
    readonly recommended: TSESLint.FlatConfig.Config;
    /** Every rule, as an error. */
    readonly strict: TSESLint.FlatConfig.Config;
  };
}

function severities(strict: boolean): TSESLint.FlatConfig.Rules {
  const out: TSESLint.FlatConfig.Rules = {};
  for (const [name, rule] of Object.entries(rules))
    out[`${PLUGIN_NAMESPACE}/${name}`] = strict ? 'error' : (rule.meta.docs?.recommended ?? 'error');
  return out;
}

const configs: { recommended: TSESLint.FlatConfig.Config; strict: TSESLint.FlatConfig.Config } = {
  recommended: { name: 'operator-runtime/recommended', rules: severities(false) },
  strict: { name: 'operator-runtime/strict', rules: severities(true) },
};

const plugin: OperatorRuntimePlugin = {
  // Kept in step with package.json by src/eslint/plugin.test.ts.
  meta: { name: 'operator-runtime/eslint', version: '0.1.0' },
  rules,
  configs,
};
// A flat config carries the plugins its rules need; the configs name the plugin object itself.
configs.recommended.plugins = { [PLUGIN_NAMESPACE]: plugin };
configs.strict.plugins = { [PLUGIN_NAMESPACE]: plugin };

export default plugin;
