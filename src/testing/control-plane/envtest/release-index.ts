/**
 * The release index controller-tools publishes for envtest (`envtest-releases.yaml`): versions →
 * archive name → `{ hash: sha512 hex, selfLink: URL }`. The index carries the checksums, so it is
 * read over https only (plain http on loopback, for mirrors in tests and on the same machine), and
 * so is every redirect it takes.
 */
import type { Dispatcher } from 'undici';
import { parse as parseYaml } from 'yaml';
import { omitUndefined } from '../../../core/omit-undefined.js';
import { EnvtestError } from './envtest-error.js';
import { checkedRequest, displayUrl, DOWNLOAD_URL_RULE, isAllowedDownloadUrl } from './http.js';
import { archiveName, type EnvtestPlatform } from './platform.js';
import { newestFirst } from './version-selector.js';

/** setup-envtest's default index (controller-tools' `envtest-releases.yaml` at HEAD). */
export const DEFAULT_ENVTEST_INDEX_URL =
  'https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml';

/** One downloadable archive of the index. */
export interface EnvtestArchive {
  /** Without the leading `v`: `1.30.0`. */
  readonly version: string;
  readonly platform: EnvtestPlatform;
  /** `envtest-v1.30.0-linux-amd64.tar.gz` */
  readonly name: string;
  /** sha512 of the archive, lowercase hex. */
  readonly sha512: string;
  readonly url: string;
}

export interface EnvtestRelease {
  readonly version: string;
  readonly archives: readonly EnvtestArchive[];
}

const INDEX_FIX =
  "The index carries the archives' checksums, which must not be altered on the way; nothing was downloaded. Fix: point OPERATOR_RUNTIME_ENVTEST_INDEX (--index) at an https mirror whose redirects stay on https";

/** Refuses index URLs whose answers could be altered on the way: not https, and not plain http on loopback. */
export function checkIndexUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new EnvtestError(`the envtest index URL "${displayUrl(url)}" is not a URL`);
  }
  if (!isAllowedDownloadUrl(parsed))
    throw new EnvtestError(
      `the envtest index ${displayUrl(parsed)} must be https (${DOWNLOAD_URL_RULE}). ${INDEX_FIX}`,
    );
  return parsed;
}

/** Reads the index text; releases newest first. Entries that do not parse are skipped. */
export function parseReleaseIndex(text: string, indexUrl: string): EnvtestRelease[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new EnvtestError(`the envtest index ${displayUrl(indexUrl)} is not YAML: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const releases = (doc as { releases?: unknown } | null)?.releases;
  if (!releases || typeof releases !== 'object')
    throw new EnvtestError(
      `the envtest index ${displayUrl(indexUrl)} has no "releases" map (is it controller-tools' envtest-releases.yaml?)`,
    );
  const out: EnvtestRelease[] = [];
  for (const [key, files] of Object.entries(releases as Record<string, unknown>)) {
    const version = /^v?(\d+\.\d+\.\d+)$/.exec(key)?.[1];
    if (!version || !files || typeof files !== 'object') continue;
    const archives: EnvtestArchive[] = [];
    for (const [name, entry] of Object.entries(files as Record<string, unknown>)) {
      const platform = new RegExp(
        `^envtest-v${version.replace(/\./g, '\\.')}-([a-z0-9]+)-([a-z0-9]+)\\.tar\\.gz$`,
      ).exec(name);
      const { hash, selfLink } = (entry ?? {}) as { hash?: unknown; selfLink?: unknown };
      if (!platform || typeof hash !== 'string' || !/^[0-9a-fA-F]{128}$/.test(hash) || typeof selfLink !== 'string')
        continue;
      archives.push({
        version,
        platform: { os: platform[1]!, arch: platform[2]! },
        name,
        sha512: hash.toLowerCase(),
        url: new URL(selfLink, indexUrl).href,
      });
    }
    out.push({ version, archives });
  }
  return newestFirst(out, (r) => r.version);
}

/** Fetches and parses the index. */
export async function fetchReleaseIndex(
  indexUrl: string,
  options: { readonly dispatcher: Dispatcher; readonly signal?: AbortSignal },
): Promise<EnvtestRelease[]> {
  const url = checkIndexUrl(indexUrl);
  let text: string;
  try {
    const res = await checkedRequest(url, {
      dispatcher: options.dispatcher,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
      refused: (reason) => new EnvtestError(`the envtest index was refused: ${reason}. ${INDEX_FIX}`),
      ...omitUndefined({ signal: options.signal }),
    });
    text = await res.body.text();
    if (res.statusCode !== 200)
      throw new EnvtestError(
        `the envtest index ${displayUrl(indexUrl)} answered ${res.statusCode}: ${text.slice(0, 200)}`,
      );
  } catch (error) {
    if (error instanceof EnvtestError) throw error;
    throw new EnvtestError(
      `cannot read the envtest index ${displayUrl(indexUrl)}: ${(error as Error).message}. Offline or behind a proxy? Set HTTPS_PROXY, or point OPERATOR_RUNTIME_ENVTEST_INDEX (--index) at a mirror`,
      { cause: error },
    );
  }
  return parseReleaseIndex(text, indexUrl);
}

/** The archive for `platform` in a release, or undefined. */
export function archiveFor(release: EnvtestRelease, platform: EnvtestPlatform): EnvtestArchive | undefined {
  const name = archiveName(release.version, platform);
  return release.archives.find((a) => a.name === name);
}
