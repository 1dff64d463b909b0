/**
 * `operator-runtime lint`: the reconciler rules of `operator-runtime/eslint` (its `recommended`
 * config, nothing else of the project's ESLint setup) over the operator's sources, and the
 * custom-kind conventions over the kinds `operator-runtime.config.ts` lists, as `generate` loads
 * them. One line per finding (`file:line:column` or `Kind group/version .schema.path`); exit 1 when
 * any is an error. ESLint and typescript-eslint are the project's own (optional peers), found from
 * the project's folder first.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { kindConventionFindings, type KindConventionFinding } from '../crd/kind-conventions.js';
import { OperatorRuntimeError } from '../core/errors.js';
import { CliUsageError } from './cli-error.js';
import { CONFIG_FILE_NAMES, findConfig, loadConfig } from './load-config.js';

/** Folders linted when none are named: an operator's sources, as the scaffold lays them out. */
export const DEFAULT_LINT_PATHS = ['src'] as const;

/** Tests may sleep, read fixtures synchronously and generate names: the rules are for the operator's code. */
export const DEFAULT_LINT_IGNORES = ['**/*.test.ts', '**/*.test.mts', '**/node_modules/**', '**/dist/**'] as const;

export interface LintCommandOptions {
  readonly cwd: string;
  readonly paths?: readonly string[];
  readonly config?: string;
  /** Skip the custom-kind checks (no config needed). */
  readonly kinds?: boolean;
  /** Print how long each half took. */
  readonly timing?: boolean;
}

/** Where the findings go (the CLI's stdout). */
export interface LintOutput {
  readonly stdout: (text: string) => void;
}

/** Lint ran and found errors: the findings are printed already; exit 1. */
export class LintFindingsError extends OperatorRuntimeError {
  declare readonly code: 'ERR_LINT_FINDINGS';

  constructor(message: string) {
    super('ERR_LINT_FINDINGS', message);
  }
}

export function isLintFailure(error: unknown): error is LintFindingsError {
  return error instanceof LintFindingsError;
}

interface EslintMessage {
  readonly ruleId: string | null;
  readonly severity: number;
  readonly message: string;
  readonly line: number;
  readonly column: number;
}
interface EslintResult {
  readonly filePath: string;
  readonly messages: readonly EslintMessage[];
}
interface EslintApi {
  lintFiles(patterns: string[]): Promise<EslintResult[]>;
}
type EslintClass = new (options: object) => EslintApi;

/** Imports a lint dependency from the project first (its own eslint), else from beside operator-runtime. */
async function importFromProject<T>(projectDir: string, specifier: string): Promise<T> {
  try {
    const path = createRequire(join(projectDir, 'noop.js')).resolve(specifier);
    return (await import(pathToFileURL(path).href)) as T;
  } catch {
    try {
      return (await import(specifier)) as T;
    } catch (error) {
      throw new CliUsageError(
        `operator-runtime lint needs ${specifier} in the project: npm install --save-dev eslint typescript-eslint @typescript-eslint/utils`,
        { cause: error },
      );
    }
  }
}

async function eslintFindings(
  projectDir: string,
  cwd: string,
  paths: readonly string[],
): Promise<{ lines: string[]; errors: number; warnings: number; files: number }> {
  const { ESLint } = await importFromProject<{ ESLint: EslintClass }>(projectDir, 'eslint');
  const tseslint = await importFromProject<{ default: { parser: unknown } }>(projectDir, 'typescript-eslint');
  // Loaded only here: the rest of the CLI must run without the lint peers installed.
  const { default: plugin } = await import('../eslint/index.js');
  const eslint = new ESLint({
    cwd,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ['**/*.ts', '**/*.mts', '**/*.cts'], languageOptions: { parser: tseslint.default.parser } },
      { ignores: [...DEFAULT_LINT_IGNORES] },
      plugin.configs.recommended,
    ],
    errorOnUnmatchedPattern: false,
  });
  const missing = paths.filter((p) => !existsSync(resolve(cwd, p)));
  if (missing.length > 0) throw new CliUsageError(`nothing to lint at ${missing.join(', ')} (in ${cwd})`);
  const results = await eslint.lintFiles([...paths]);
  const lines: string[] = [];
  let errors = 0;
  let warnings = 0;
  for (const result of results)
    for (const m of result.messages) {
      const severity = m.severity === 2 ? 'error' : 'warning';
      if (m.severity === 2) errors++;
      else warnings++;
      lines.push(
        `${relative(cwd, result.filePath)}:${m.line}:${m.column}  ${severity}  ${m.message}  ${m.ruleId ?? 'parse'}`,
      );
    }
  return { lines, errors, warnings, files: results.length };
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

function kindLine(f: KindConventionFinding): string {
  return `${f.kind} ${f.apiVersion} ${f.path || '(version)'}  ${f.severity}  ${f.message}  ${f.check}`;
}

/** Whether `dir` holds a project config, so the kind checks have something to load. */
function hasConfig(dir: string): boolean {
  return CONFIG_FILE_NAMES.some((name) => existsSync(join(dir, name)));
}

/** Runs both halves, prints the findings; throws LintFindingsError when any is an error. */
export async function runLint(options: LintCommandOptions, io: LintOutput): Promise<void> {
  const checkKinds = options.kinds ?? true;
  const configPath =
    checkKinds && (options.config !== undefined || hasConfig(options.cwd))
      ? findConfig(options.cwd, options.config)
      : undefined;
  const projectDir = configPath ? dirname(configPath) : options.cwd;
  const paths = options.paths?.length
    ? options.paths
    : DEFAULT_LINT_PATHS.map((p) => relative(options.cwd, join(projectDir, p)) || '.');

  let started = performance.now();
  const code = await eslintFindings(projectDir, options.cwd, paths);
  const eslintMs = performance.now() - started;

  started = performance.now();
  const kinds: KindConventionFinding[] = [];
  let kindCount = 0;
  if (configPath) {
    const { config } = await loadConfig(configPath);
    kindCount = config.kinds.length;
    for (const kind of config.kinds) kinds.push(...kindConventionFindings(kind, config.lint?.allow));
  }
  const kindsMs = performance.now() - started;

  for (const line of code.lines) io.stdout(`${line}\n`);
  for (const f of kinds) io.stdout(`${kindLine(f)}\n`);
  const errors = code.errors + kinds.filter((f) => f.severity === 'error').length;
  const warnings = code.warnings + kinds.filter((f) => f.severity === 'warning').length;
  if (options.timing)
    io.stdout(
      `timing: ${count(code.files, 'file')} through the reconciler rules in ${eslintMs.toFixed(0)} ms; ${count(kindCount, 'kind')} through the custom-kind checks in ${kindsMs.toFixed(0)} ms\n`,
    );
  if (errors + warnings > 0)
    io.stdout(`${count(errors + warnings, 'problem')} (${count(errors, 'error')}, ${count(warnings, 'warning')})\n`);
  if (errors > 0) throw new LintFindingsError(`lint found ${count(errors, 'error')}`);
}

/** Registers `lint` on the program. */
export function addLintCommand(program: Command, io: LintOutput & { readonly cwd: string }): void {
  program
    .command('lint')
    .description(
      "check the operator's reconcilers (operator-runtime/eslint's recommended rules) and its custom kinds (API conventions); see docs/lint.md",
    )
    .argument('[paths...]', `files or folders to lint (default: ${DEFAULT_LINT_PATHS.join(', ')} beside the config)`)
    .option(
      '-c, --config <file>',
      'the project config whose kinds are checked (default: operator-runtime.config.{ts,mts,js,mjs} in the current folder, if any)',
    )
    .option('--no-kinds', 'skip the custom-kind checks')
    .option('--timing', 'print how long each half took')
    .action(async (paths: string[], options: { config?: string; kinds: boolean; timing?: boolean }) => {
      await runLint({ cwd: io.cwd, paths, ...options }, io);
    });
}
