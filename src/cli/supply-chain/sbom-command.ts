/**
 * `operator-runtime sbom`: a CycloneDX SBOM (JSON) of the operator's production dependencies, read
 * from the project's lockfile; with `--image <dir>`, of an image's runtime files instead (the
 * packages installed there and the SHA-256 of each file of the operator's own), as
 * scripts/layout-runtime.sh or the Dockerfile's runtime stage lays them out. Dev dependencies are
 * never listed. docs/supply-chain.md shows how it is signed and verified.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { CliUsageError } from '../cli-error.js';
import { DEFAULT_SBOM_SPEC_VERSION, SBOM_SPEC_VERSIONS, cyclonedxJson, loadCycloneDx } from './cyclonedx-bom.js';
import type { SbomSpecVersion } from './cyclonedx-bom.js';
import { installedTree, lockfileTree } from './npm-sources.js';

/** Where the SBOM goes unless `--out` says otherwise (CycloneDX's recommended `.cdx.json` suffix). */
export const DEFAULT_SBOM_FILE = 'sbom.cdx.json';

export interface SbomCommandOptions {
  readonly cwd: string;
  /** The project (a folder with package.json). @defaultValue cwd */
  readonly project?: string;
  /** An image's runtime files: list what is installed there instead of the lockfile's tree. */
  readonly image?: string;
  /** @defaultValue DEFAULT_SBOM_FILE */
  readonly out?: string;
  /** @defaultValue DEFAULT_SBOM_SPEC_VERSION */
  readonly specVersion?: string;
}

export interface SbomResult {
  /** The written file, relative to cwd. */
  readonly path: string;
  readonly components: number;
}

function specVersionOf(value: string | undefined): SbomSpecVersion {
  const version = value ?? DEFAULT_SBOM_SPEC_VERSION;
  const known = SBOM_SPEC_VERSIONS.find((v) => v === version);
  if (!known) throw new CliUsageError(`--spec-version ${version}: use one of ${SBOM_SPEC_VERSIONS.join(', ')}`);
  return known;
}

export async function runSbom(options: SbomCommandOptions): Promise<SbomResult> {
  const specVersion = specVersionOf(options.specVersion);
  const project = resolve(options.cwd, options.project ?? '.');
  const out = resolve(options.cwd, options.out ?? DEFAULT_SBOM_FILE);
  const cdx = await loadCycloneDx(project);
  let json: string;
  let components: number;
  if (options.image !== undefined) {
    const image = resolve(options.cwd, options.image);
    const { tree, files } = await installedTree(image);
    json = cyclonedxJson(cdx, {
      tree,
      files,
      specVersion,
      source: `installed files: ${relative(options.cwd, image) || '.'}`,
    });
    components = tree.packages.size + files.length;
  } else {
    const { lockfile, tree } = await lockfileTree(project);
    json = cyclonedxJson(cdx, { tree, specVersion, source: `lockfile: ${relative(options.cwd, lockfile)}` });
    components = tree.packages.size;
  }
  // Written beside the target and renamed in: a reader never sees half an SBOM.
  await mkdir(dirname(out), { recursive: true });
  const partial = `${out}.${process.pid}.partial`;
  await writeFile(partial, json);
  await rename(partial, out);
  return { path: relative(options.cwd, out) || out, components };
}
