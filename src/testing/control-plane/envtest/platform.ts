/**
 * The platform names of envtest archives (`linux-amd64`, `darwin-arm64`…), as Go spells them, and
 * the folder names of setup-envtest's store (`1.30.0-linux-amd64`).
 */
import { EnvtestError } from './envtest-error.js';

export interface EnvtestPlatform {
  /** Go's GOOS: `linux`, `darwin`, `windows`. */
  readonly os: string;
  /** Go's GOARCH: `amd64`, `arm64`, `ppc64le`, `s390x`. */
  readonly arch: string;
}

const OS: Partial<Record<NodeJS.Platform, string>> = { linux: 'linux', darwin: 'darwin', win32: 'windows' };
const ARCH: Partial<Record<NodeJS.Architecture, string>> = {
  x64: 'amd64',
  arm64: 'arm64',
  ppc64: 'ppc64le',
  s390x: 's390x',
};

/** This machine's platform in Go's names; an error for platforms envtest publishes nothing for. */
export function currentPlatform(
  platform: NodeJS.Platform = process.platform,
  arch: NodeJS.Architecture = process.arch,
): EnvtestPlatform {
  const os = OS[platform];
  const goArch = ARCH[arch];
  if (!os || !goArch)
    throw new EnvtestError(
      `envtest publishes no binaries for ${platform}/${arch} (only linux, darwin and windows on amd64, arm64, ppc64le, s390x)`,
    );
  return { os, arch: goArch };
}

/** `1.30.0-linux-amd64`: the folder of one version in setup-envtest's store (and ours). */
export function storeFolderName(version: string, platform: EnvtestPlatform): string {
  return `${version.replace(/^v/, '')}-${platform.os}-${platform.arch}`;
}

/** `envtest-v1.30.0-linux-amd64.tar.gz`: the archive name controller-tools publishes. */
export function archiveName(version: string, platform: EnvtestPlatform): string {
  return `envtest-v${storeFolderName(version, platform)}.tar.gz`;
}

/** Splits a store folder name back into version and platform, or undefined when it is not one. */
export function parseStoreFolderName(name: string): { version: string; platform: EnvtestPlatform } | undefined {
  const match = /^(\d+\.\d+\.\d+)-([a-z0-9]+)-([a-z0-9]+)$/.exec(name);
  if (!match) return undefined;
  return { version: match[1]!, platform: { os: match[2]!, arch: match[3]! } };
}
