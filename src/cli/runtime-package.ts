/**
 * The installed operator-runtime's own package.json (two levels above src/cli and dist/cli): its
 * version for `--version`, and the dependency ranges a scaffold pins so its versions match the
 * runtime's (and install from the same npm cache).
 */
import { readFileSync } from 'node:fs';

export interface RuntimePackage {
  readonly name: string;
  readonly version: string;
  readonly engines?: { readonly node?: string };
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
}

let cached: RuntimePackage | undefined;

export function runtimePackage(): RuntimePackage {
  cached ??= JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as RuntimePackage;
  return cached;
}

/** The range the runtime itself uses for `dependency` (from any of its dependency lists). */
export function runtimeRange(dependency: string): string | undefined {
  const p = runtimePackage();
  return p.dependencies?.[dependency] ?? p.peerDependencies?.[dependency] ?? p.devDependencies?.[dependency];
}
