/**
 * `operator-runtime testenv install|list|use|cleanup`: envtest binaries for TestEnv, as
 * setup-envtest gets them for Go projects (`use 1.30.x`, `-p path`). The work is in
 * `operator-runtime/testing`'s envtest functions; this file is only their command line.
 */
import type { Command } from 'commander';
import { omitUndefined } from '../core/omit-undefined.js';
import { BinariesNotFoundError } from '../testing/control-plane/binaries.js';
import { cleanupEnvtest, installEnvtest, listEnvtest, useEnvtest } from '../testing/control-plane/envtest/envtest.js';
import { EnvtestError } from '../testing/control-plane/envtest/envtest-error.js';
import { USE_EXISTING_CLUSTER_ENV, existingClusterOption } from '../testing/control-plane/existing-cluster.js';
import type { ProgressStream } from '../testing/control-plane/envtest/progress-bar.js';

export interface TestenvIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** The progress bar's stream (a bar only when it is a TTY). @defaultValue stderr, no bar */
  readonly progress?: ProgressStream;
  /** @defaultValue process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** The failures of these commands that are the user's to fix: one message, exit 1, no stack. */
export function isTestenvFailure(error: unknown): error is EnvtestError | BinariesNotFoundError {
  return error instanceof EnvtestError || error instanceof BinariesNotFoundError;
}

const INDEX_HELP =
  "the envtest release index (default: OPERATOR_RUNTIME_ENVTEST_INDEX, else controller-tools' envtest-releases.yaml); https, or http on loopback";
const VERSION_HELP = 'a version or selector, as setup-envtest: 1.30.0, 1.30.x, ~1.30.2, <1.31 (default: the newest)';

export function addTestenvCommand(program: Command, io: TestenvIo): void {
  const progress = io.progress ?? { isTTY: false, write: io.stderr };
  // An empty --index or version argument counts as not given.
  const common = (options: { index?: string }) => ({
    progress,
    ...omitUndefined({ env: io.env, indexUrl: options.index || undefined }),
  });
  const testenv = program
    .command('testenv')
    .description(
      "control-plane binaries for TestEnv: envtest's etcd and kube-apiserver, downloaded and verified into the cache",
    )
    .usage('<install|list|use|cleanup> [version] [options]');

  testenv
    .command('install')
    .description("download a version into the cache (verified against the index's sha512) and print its folder")
    .argument('[version]', VERSION_HELP)
    .option('--index <url>', INDEX_HELP)
    .action(async (version: string | undefined, options: { index?: string }) => {
      const installed = await installEnvtest({
        ...common(options),
        ...omitUndefined({ version: version || undefined }),
      });
      io.stdout(`${installed.dir}\n`);
    });

  testenv
    .command('list')
    .description('list the versions installed on this machine and those the index offers')
    .argument('[version]', VERSION_HELP)
    .option('--index <url>', INDEX_HELP)
    .option('-i, --installed', 'only what is installed (no index)')
    .action(async (version: string | undefined, options: { index?: string; installed?: boolean }) => {
      const listing = await listEnvtest({
        ...common(options),
        ...omitUndefined({ version: version || undefined }),
        installedOnly: !!options.installed,
      });
      const installedVersions = new Set(listing.installed.map((i) => i.version));
      for (const item of listing.installed)
        io.stdout(
          `(installed)  v${item.version}  ${item.platform.os}/${item.platform.arch}  ${item.dir}${item.store === 'setup-envtest' ? "  (setup-envtest's store)" : ''}\n`,
        );
      for (const archive of listing.available) {
        if (!installedVersions.has(archive.version))
          io.stdout(`(available)  v${archive.version}  ${archive.platform.os}/${archive.platform.arch}\n`);
      }
      if (listing.indexError) io.stderr(`warning: ${listing.indexError.message}\n`);
    });

  testenv
    .command('use')
    .description(
      'find binaries as TestEnv does, else download them (else, offline on Debian as root, build them from source); print where',
    )
    .argument('[version]', VERSION_HELP)
    .option('--index <url>', INDEX_HELP)
    .option('-i, --installed-only', 'never download')
    .option('-p, --print-path', 'print only the folder (for KUBEBUILDER_ASSETS=$(…))')
    .option('--no-source-build', "never fall back to building from Debian's source")
    .action(
      async (
        version: string | undefined,
        options: { index?: string; installedOnly?: boolean; printPath?: boolean; sourceBuild: boolean },
      ) => {
        // The scaffold's pretest: tests against the user's own cluster need no binaries, so none are fetched.
        if (!options.printPath && existingClusterOption(undefined, io.env ?? process.env)) {
          io.stdout(
            `${USE_EXISTING_CLUSTER_ENV} is set: TestEnv uses your cluster, no control-plane binaries needed\n`,
          );
          return;
        }
        const used = await useEnvtest({
          ...common(options),
          ...omitUndefined({ version: version || undefined }),
          installedOnly: !!options.installedOnly,
          sourceBuild: options.sourceBuild,
        });
        if (options.printPath) {
          io.stdout(`${used.dir}\n`);
          return;
        }
        io.stdout(`control plane${used.version ? ` v${used.version}` : ''} from ${used.source}: ${used.dir}\n`);
        io.stdout(
          `TestEnv finds it by itself; to pin it (or for other tools): export OPERATOR_RUNTIME_ASSETS=${used.dir}\n`,
        );
      },
    );

  testenv
    .command('cleanup')
    .description("remove versions from operator-runtime's cache (never from setup-envtest's store)")
    .argument('[version]', `${VERSION_HELP.replace('the newest', 'all')}`)
    .action(async (version: string | undefined) => {
      const removed = await cleanupEnvtest(omitUndefined({ env: io.env, version: version || undefined }));
      for (const dir of removed) io.stdout(`removed ${dir}\n`);
      if (removed.length === 0) io.stdout('nothing to remove\n');
    });
}
