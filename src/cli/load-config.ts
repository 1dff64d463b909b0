/**
 * Finds and loads a project's `operator-runtime.config.ts` (or .mts/.js/.mjs). Node 20 cannot import
 * TypeScript, so a TypeScript config is loaded through `tsx`, resolved from the USER's project (an
 * optional peer dependency: the runtime itself needs no TypeScript loader); its ESM hooks are
 * registered in this process, so the config and the CLI share one copy of every module.
 * JavaScript configs are imported as they are.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { OperatorProjectConfig } from '../codegen/config.js';
import { validateProjectConfig } from '../codegen/generate.js';
import { CliUsageError } from './cli-error.js';

export const CONFIG_FILE_NAMES = [
  'operator-runtime.config.ts',
  'operator-runtime.config.mts',
  'operator-runtime.config.js',
  'operator-runtime.config.mjs',
] as const;

const isTypeScript = (path: string) => /\.(c|m)?ts$/.test(path);

export interface LoadedConfig {
  readonly path: string;
  readonly config: OperatorProjectConfig;
}

/** `--config` if given (must exist), else the first config file in `cwd`. */
export function findConfig(cwd: string, explicit?: string): string {
  if (explicit !== undefined) {
    const path = resolve(cwd, explicit);
    if (!existsSync(path)) throw new CliUsageError(`config file not found: ${path}`);
    return path;
  }
  const found = CONFIG_FILE_NAMES.map((name) => join(cwd, name)).find((path) => existsSync(path));
  if (!found) throw new CliUsageError(`no ${CONFIG_FILE_NAMES[0]} in ${cwd} (pass --config <file>)`);
  return found;
}

let tsxRegistered = false;

/** Registers tsx's ESM hooks from the project that holds `configPath` (once per process). */
async function registerTsx(configPath: string): Promise<void> {
  if (tsxRegistered) return;
  const from = createRequire(join(dirname(configPath), 'noop.js'));
  let packageJson: string;
  try {
    packageJson = from.resolve('tsx/package.json');
  } catch (error) {
    throw new CliUsageError(
      `loading ${configPath} needs tsx: npm install --save-dev tsx (or write the config as .mjs)`,
      { cause: error },
    );
  }
  const manifest = JSON.parse(await readFile(packageJson, 'utf8')) as {
    exports?: Record<string, { import?: { default?: string } }>;
  };
  const entry = manifest.exports?.['./esm/api']?.import?.default;
  if (!entry) throw new CliUsageError(`the tsx at ${dirname(packageJson)} has no ESM API (tsx ≥ 4 is needed)`);
  const api = (await import(pathToFileURL(join(dirname(packageJson), entry)).href)) as { register?: () => unknown };
  if (typeof api.register !== 'function')
    throw new CliUsageError(`the tsx at ${dirname(packageJson)} has no register() (tsx ≥ 4 is needed)`);
  api.register();
  tsxRegistered = true;
}

/** Loads and checks the config's default export. */
export async function loadConfig(path: string): Promise<LoadedConfig> {
  if (isTypeScript(path) && !alreadyLoadsTypeScript()) await registerTsx(path);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new CliUsageError(`cannot load config ${path}: ${message}`, { cause: error });
  }
  const config = module.default;
  if (typeof config !== 'object' || config === null) {
    throw new CliUsageError(`config ${path} has no default export (export default defineConfig({ … }))`);
  }
  const typed = config as OperatorProjectConfig;
  try {
    validateProjectConfig(typed);
  } catch (error) {
    throw new CliUsageError(`config ${path}: ${(error as Error).message}`, { cause: error });
  }
  return { path, config: typed };
}

/** True when this process already runs under tsx (`node --import tsx`, the tsx command): its hooks load the config. */
function alreadyLoadsTypeScript(): boolean {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].join(' ');
  return /(^|[\s=])tsx(\/esm)?(\s|$)/.test(flags) || /--(import|loader)[= ]\S*tsx/.test(flags);
}
