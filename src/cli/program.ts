/**
 * The `operator-runtime` command line: `generate crds|rbac|manifests|bundle`, `validate bundle <dir>`, `init <dir>`,
 * `testenv install|list|use|cleanup`, `sbom`, `sign`, `verify`, `--help` on
 * every command and `--version`. Bad input prints one line naming what is wrong and exits 2.
 */
import { Command, CommanderError, Option } from 'commander';
import { addBundleCommands } from './bundle-command.js';
import { CliCheckFailedError, CliUsageError, USAGE_EXIT_CODE } from './cli-error.js';
import { GENERATE_TARGETS, KUBERNETES_VERSION_HELP, runGenerate, type GenerateTarget } from './generate-command.js';
import { runInit } from './init-command.js';
import { addLintCommand, isLintFailure } from './lint-command.js';
import { runtimePackage } from './runtime-package.js';
import { addSupplyChainCommands, isSupplyChainFailure } from './supply-chain/supply-chain-commands.js';
import { addTestenvCommand, isTestenvFailure } from './testenv-command.js';
import type { ProgressStream } from '../testing/control-plane/envtest/progress-bar.js';

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  readonly cwd: string;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Where `testenv` draws its download progress bar (only when it is a TTY). */
  readonly progress?: ProgressStream;
  /** The environment `testenv` reads. @defaultValue process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** The version of the installed operator-runtime. */
export function cliVersion(): string {
  return runtimePackage().version;
}

const GENERATE_HELP: Record<GenerateTarget, string> = {
  crds: 'write crd.yaml: one CustomResourceDefinition per kind in the config',
  rbac: "write rbac.yaml: the roles the manager's controllers declare, bound to the operator's ServiceAccount",
  manifests:
    'write the whole Kustomize base: CRDs, RBAC, Namespace, ServiceAccount, Deployment, metrics Service, NetworkPolicy, webhooks (when registered), kustomization.yaml',
};

function buildProgram(io: CliIo): Command {
  const program = new Command()
    .name('operator-runtime')
    .description('Generate the manifests of an operator built on operator-runtime, or scaffold a new one.')
    .version(cliVersion(), '-v, --version')
    .exitOverride()
    .configureOutput({
      writeOut: io.stdout,
      writeErr: io.stderr,
      // One line per error: commander puts its "(Did you mean …?)" on a line of its own.
      outputError: (text, write) => write(text.replace(/\n(?=\(Did you mean)/, ' ')),
    })
    .showSuggestionAfterError(true);

  const generate = program
    .command('generate')
    .description('write manifests from operator-runtime.config.ts')
    .usage('<crds|rbac|manifests|bundle> [options]');
  for (const target of GENERATE_TARGETS) {
    generate
      .command(target)
      .description(GENERATE_HELP[target])
      .option(
        '-c, --config <file>',
        'the project config (default: operator-runtime.config.{ts,mts,js,mjs} in the current folder)',
      )
      .option('-o, --out <dir>', "output folder (default: the config's outDir, else config/ beside the config)")
      .option('--kubernetes-version <version>', KUBERNETES_VERSION_HELP)
      .action(async (options: { config?: string; out?: string; kubernetesVersion?: string }) => {
        const written = await runGenerate(target, { cwd: io.cwd, ...options, warn: io.stderr });
        for (const path of written) io.stdout(`wrote ${path}\n`);
      });
  }
  addBundleCommands(program, generate, io);

  program
    .command('init')
    .description('scaffold a new operator project in <dir> (which must not exist, or be empty)')
    .argument('<dir>', 'the folder to create')
    .addOption(new Option('--group <group>', 'API group of the custom kind').default('example.com'))
    .addOption(new Option('--kind <kind>', 'the custom kind, PascalCase').default('Widget'))
    .addOption(
      new Option(
        '--name <name>',
        'the operator name, a DNS label: package, namespace <name>-system, ServiceAccount, Deployment (default: from the folder name)',
      ),
    )
    .action(async (dir: string, options: { group: string; kind: string; name?: string }) => {
      const result = await runInit({ cwd: io.cwd, dir, ...options });
      io.stdout(
        `created ${result.dir} (${result.files.length} files)\nnext: cd ${result.dir} && npm install && npm test\n`,
      );
    });
  addTestenvCommand(program, io);
  addSupplyChainCommands(program, io);
  addLintCommand(program, io);
  return program;
}

const VERSION_FLAGS = new Set(['-v', '--version']);

/**
 * Whether `argv` names a command that does not exist (`operator-runtime deploy`, `generate crd`).
 * Commander answers a global `--version` before it looks at the command, so an unknown command
 * with `--version` would print the version and exit 0.
 */
function namesUnknownCommand(program: Command, argv: readonly string[]): boolean {
  let command = program;
  for (const arg of argv) {
    if (arg.startsWith('-')) continue;
    // Arguments of a leaf command (init's <dir>, option values) are not commands.
    if (command.commands.length === 0 || arg === 'help') return false;
    const sub = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) return true;
    command = sub;
  }
  return false;
}

/** Runs the CLI on `argv` (without node and script); resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return USAGE_EXIT_CODE;
    }
    // An unknown command fails even with --version: parsed without the flag, commander names it.
    const args =
      argv.some((a) => VERSION_FLAGS.has(a)) && namesUnknownCommand(program, argv)
        ? argv.filter((a) => !VERSION_FLAGS.has(a))
        : argv;
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through exitOverride too, with exit code 0.
      return error.exitCode === 0 ? 0 : USAGE_EXIT_CODE;
    }
    if (isTestenvFailure(error) || isSupplyChainFailure(error) || isLintFailure(error)) {
      io.stderr(`error: ${error.message}\n`);
      return 1;
    }
    if (error instanceof CliCheckFailedError) {
      for (const problem of error.problems) io.stderr(`error: ${problem}\n`);
      io.stderr(`error: ${error.message}\n`);
      return 1;
    }
    if (error instanceof CliUsageError) {
      io.stderr(`error: ${error.message}\n`);
      return USAGE_EXIT_CODE;
    }
    io.stderr(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}
