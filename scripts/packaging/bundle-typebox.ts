/**
 * Replaces the compiled src/crd/typebox.ts of a build with one file holding just the TypeBox values
 * it re-exports and what they reach (esbuild, unminified). scripts/build.sh runs it after tsc:
 *
 *   node --import tsx scripts/packaging/bundle-typebox.ts OUT_DIR
 *
 * Why: TypeBox ships as ~370 ES modules and Node pays for each (module record, source, scope);
 * importing the reference operator cost 35.8 MiB RSS over a bare Node with them and 24.1 MiB with
 * the bundle (Node 20, docs/footprint.md). The bundle has no source map: its sources would be
 * node_modules/typebox's, which the tarball does not ship, and every shipped map must name shipped
 * sources (scripts/source-maps.int.test.ts). TypeBox's MIT licence goes at its top.
 */
import { build } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the seam lands in a build, relative to the output folder. */
export const TYPEBOX_SEAM = 'crd/typebox.js';

/** TypeBox's folder as this script resolves it (its exports map has no entry for its manifest). */
const typeboxRoot = (): string => resolve(dirname(createRequire(import.meta.url).resolve('typebox')), '..');

async function typeboxLicence(): Promise<string> {
  const root = typeboxRoot();
  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  const licence = (await readFile(join(root, 'license'), 'utf8')).trim().replaceAll('*/', '* /');
  return `/*!\n * TypeBox ${version}, bundled by operator-runtime's build (scripts/packaging/bundle-typebox.ts).\n *\n${licence
    .split('\n')
    .map((line) => ` * ${line}`.trimEnd())
    .join('\n')}\n */`;
}

/**
 * Bundles `entry` (the seam, compiled or as source) into `outfile`, which may be the entry itself.
 * Fails if the output still imports anything: the point is that no TypeBox module loads beside it.
 */
export async function bundleTypebox(entry: string, outfile: string): Promise<void> {
  const result = await build({
    entryPoints: [entry],
    outfile,
    allowOverwrite: true,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: await typeboxLicence() },
    // The TypeBox this script resolves, wherever the build folder is.
    nodePaths: [resolve(typeboxRoot(), '..')],
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.values(result.metafile.outputs);
  const imports = outputs.flatMap((o) => o.imports.map((i) => i.path));
  if (outputs.length !== 1 || imports.length > 0)
    throw new Error(
      `bundle-typebox: expected one self-contained file, got ${outputs.length} importing ${imports.join(', ')}`,
    );
}

async function main(outDir: string): Promise<void> {
  const seam = join(outDir, TYPEBOX_SEAM);
  await bundleTypebox(seam, seam);
  // tsc's map described the two-line re-export, not the bundle.
  await rm(`${seam}.map`, { force: true });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2];
  if (!outDir) {
    process.stderr.write('usage: bundle-typebox.ts OUT_DIR\n');
    process.exitCode = 2;
  } else await main(outDir);
}
