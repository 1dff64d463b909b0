import { ESLintUtils } from '@typescript-eslint/utils';

/**
 * Every rule's docs URL is its section of docs/lint.md, so an editor's "show documentation" lands on
 * the anti-pattern, why it hurts and the fix. The package has no home page to link to, so the URL is
 * the copy it ships (package.json `files`): src/eslint/ and dist/eslint/ both sit two folders below it.
 */
export const LINT_DOCS_URL = new URL('../../docs/lint.md', import.meta.url).href;

/** The rules' documentation fields beyond what `RuleCreator` requires. */
export interface RuleDocs {
  readonly description: string;
  /**
   * Its severity in `configs.recommended`: `warn` for a rule that judges by a heuristic and can be
   * wrong about a line (every rule is an error in `configs.strict`).
   */
  readonly recommended: 'error' | 'warn';
}

export const createRule = ESLintUtils.RuleCreator<RuleDocs>((name) => `${LINT_DOCS_URL}#${name}`);
