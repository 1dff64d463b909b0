/**
 * A CycloneDX BOM (JSON) built with the OWASP CycloneDX JavaScript library: the project as
 * `metadata.component`, one `library` component per production package (purl, version, licence,
 * the lockfile's integrity as a hash, install paths as `cdx:npm:package:path` properties, as
 * cyclonedx-npm writes them), the dependency graph, and for an image's runtime files one `file`
 * component per file of the operator's own with its SHA-256. The library is an optional peer,
 * resolved from the user's project first (as tsx is for configs), then from operator-runtime's own.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as CycloneDX from '@cyclonedx/cyclonedx-library';
import { CliUsageError } from '../cli-error.js';
import { runtimePackage } from '../runtime-package.js';
import type { LayoutFile } from './npm-sources.js';
import type { NpmTree, NpmTreePackage } from './npm-tree.js';

export const SBOM_SPEC_VERSIONS = ['1.5', '1.6'] as const;
export type SbomSpecVersion = (typeof SBOM_SPEC_VERSIONS)[number];
/** CycloneDX 1.6: the newest version both cosign's `--type cyclonedx` and common scanners read. */
export const DEFAULT_SBOM_SPEC_VERSION: SbomSpecVersion = '1.6';

const LIBRARY = '@cyclonedx/cyclonedx-library';
type Library = typeof CycloneDX;

/** Loads the CycloneDX library from `projectDir`'s dependencies, else from operator-runtime's. */
export async function loadCycloneDx(projectDir: string): Promise<Library> {
  const candidates = [createRequire(join(projectDir, 'noop.js')), createRequire(import.meta.url)];
  for (const from of candidates) {
    let entry: string;
    try {
      entry = from.resolve(LIBRARY);
    } catch {
      continue;
    }
    const loaded = (await import(pathToFileURL(entry).href)) as Library & { default?: Library };
    // CommonJS: Node's ESM wrapper may put the exports on `default` only.
    return loaded.Models ? loaded : loaded.default!;
  }
  throw new CliUsageError(
    `operator-runtime sbom needs ${LIBRARY}: npm install --save-dev ${LIBRARY} (in ${projectDir})`,
  );
}

/** `pkg:npm/%40scope/name@version` (purl-spec's npm type: the scope is the namespace, `@` encoded). */
export function npmPurl(name: string, version: string): string {
  const [scope, base] = name.startsWith('@') ? name.split('/', 2) : [undefined, name];
  const enc = (s: string) => encodeURIComponent(s);
  return `pkg:npm/${scope ? `${enc(scope)}/` : ''}${enc(base!)}@${enc(version)}`;
}

/** An SRI string (`sha512-<base64>`) as a CycloneDX hash (algorithm, hex), when it is one CycloneDX names. */
function sriHash(integrity: string): [string, string] | undefined {
  const first = integrity.trim().split(/\s+/)[0]!;
  const match = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/=]+)$/.exec(first);
  if (!match) return undefined;
  const algorithm = { sha1: 'SHA-1', sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' }[match[1]!]!;
  return [algorithm, Buffer.from(match[2]!, 'base64').toString('hex')];
}

function addLicense(cdx: Library, licenses: CycloneDX.Models.LicenseRepository, license: string | undefined): void {
  if (!license) return;
  if (cdx.SPDX.isSupportedSpdxId(license)) licenses.add(new cdx.Models.SpdxLicense(license));
  else if (/\s(OR|AND|WITH)\s|[()]/.test(license)) licenses.add(new cdx.Models.LicenseExpression(license));
  else licenses.add(new cdx.Models.NamedLicense(license));
}

export interface BomInput {
  readonly tree: NpmTree;
  /** The operator's own files, for an image's runtime files. */
  readonly files?: readonly LayoutFile[];
  /** What was read: recorded as the `operator-runtime:sbom:source` property. */
  readonly source: string;
  readonly specVersion: SbomSpecVersion;
  /** The BOM's timestamp. @defaultValue now, or SOURCE_DATE_EPOCH when set */
  readonly timestamp?: Date;
}

/** The BOM as CycloneDX JSON (sorted lists, two-space indent, trailing newline). */
export function cyclonedxJson(cdx: Library, input: BomInput): string {
  const { Models, Enums } = cdx;
  const component = (pkg: Omit<NpmTreePackage, 'paths' | 'dependsOn'>, type: CycloneDX.Enums.ComponentType) => {
    const purl = npmPurl(pkg.name, pkg.version);
    const [scope, base] = pkg.name.startsWith('@') ? pkg.name.split('/', 2) : [undefined, pkg.name];
    const c = new Models.Component(type, base!, { version: pkg.version, purl, bomRef: purl });
    if (scope) c.group = scope;
    addLicense(cdx, c.licenses, pkg.license);
    const hash = pkg.integrity ? sriHash(pkg.integrity) : undefined;
    if (hash) c.hashes.set(hash[0] as CycloneDX.Enums.HashAlgorithm, hash[1]);
    return c;
  };

  const root = component(input.tree.root, Enums.ComponentType.Application);
  const byId = new Map<string, CycloneDX.Models.Component>();
  for (const [id, pkg] of input.tree.packages) {
    const c = component(pkg, Enums.ComponentType.Library);
    for (const path of pkg.paths) c.properties.add(new Models.Property('cdx:npm:package:path', path));
    byId.set(id, c);
  }
  for (const [id, pkg] of input.tree.packages) {
    for (const d of pkg.dependsOn) byId.get(id)!.dependencies.add(byId.get(d)!.bomRef);
  }
  for (const d of input.tree.root.dependsOn) root.dependencies.add(byId.get(d)!.bomRef);

  const epoch = process.env.SOURCE_DATE_EPOCH;
  const timestamp = input.timestamp ?? (epoch && /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000) : new Date());
  const runtime = runtimePackage();
  const tools = new Models.Tools();
  tools.components.add(
    new Models.Component(Enums.ComponentType.Application, runtime.name, {
      version: runtime.version,
      purl: npmPurl(runtime.name, runtime.version),
    }),
  );
  const bom = new Models.Bom({
    serialNumber: `urn:uuid:${randomUUID()}`,
    metadata: new Models.Metadata({ timestamp, component: root, tools }),
  });
  bom.metadata.properties.add(new Models.Property('operator-runtime:sbom:source', input.source));
  for (const c of byId.values()) bom.components.add(c);
  for (const file of input.files ?? []) {
    const f = new Models.Component(Enums.ComponentType.File, file.path, { bomRef: `file:${file.path}` });
    f.hashes.set(Enums.HashAlgorithm['SHA-256'], file.sha256);
    bom.components.add(f);
  }

  const spec = input.specVersion === '1.5' ? cdx.Spec.Spec1dot5 : cdx.Spec.Spec1dot6;
  const serializer = new cdx.Serialize.JsonSerializer(new cdx.Serialize.JSON.Normalize.Factory(spec));
  return `${serializer.serialize(bom, { sortLists: true, space: 2 })}\n`;
}
