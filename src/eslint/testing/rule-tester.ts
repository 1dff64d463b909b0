/**
 * ESLint's RuleTester on node:test, parsing TypeScript with typescript-eslint's parser (no type
 * information: the rules read the syntax alone). One tester for every rule's test.
 */
import { RuleTester, type Rule } from 'eslint';
import { describe, it } from 'node:test';
import tseslint from 'typescript-eslint';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

export const ruleTester = new RuleTester({
  languageOptions: { parser: tseslint.parser, ecmaVersion: 'latest', sourceType: 'module' },
});

/** A typescript-eslint rule module as ESLint's own types name it (the same object at run time). */
export function asEslintRule(rule: object): Rule.RuleModule {
  return rule as Rule.RuleModule;
}
