/**
 * Version selectors as setup-envtest reads them: `1.30.0`, `1.30.x` / `1.30.*` / `1.30` (any patch
 * of 1.30), `~1.30.2` (1.30.2 or a later 1.30 patch), `<1.31` / `<=1.30.4`, `latest` (or nothing:
 * the newest). A leading `v` is accepted.
 */
import { EnvtestError } from './envtest-error.js';

export interface VersionSelector {
  /** The text it was parsed from (`latest` when none was given). */
  readonly text: string;
  matches(version: string): boolean;
}

type Triple = readonly [number, number, number];

function triple(version: string): Triple | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(version);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Orders `1.9.0` before `1.10.0` (numbers, not text); a leading `v` is ignored. */
export function compareVersions(a: string, b: string): number {
  const pa = triple(a) ?? [0, 0, 0];
  const pb = triple(b) ?? [0, 0, 0];
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}

/** Newest first. */
export function newestFirst<T>(items: readonly T[], version: (item: T) => string): T[] {
  return [...items].sort((a, b) => compareVersions(version(b), version(a)));
}

const SELECTOR = /^(<=|<|~)?v?(0|[1-9]\d*)\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*|x|\*))?$/;

export function parseVersionSelector(text: string | undefined): VersionSelector {
  const trimmed = text?.trim();
  if (!trimmed || trimmed === 'latest') return { text: 'latest', matches: (v) => triple(v) !== undefined };
  const match = SELECTOR.exec(trimmed);
  if (!match) {
    throw new EnvtestError(
      `cannot read the version "${trimmed}": write X.Y.Z, X.Y.x (any patch of X.Y), ~X.Y.Z, <X.Y[.Z], <=X.Y[.Z] or latest (as setup-envtest does)`,
    );
  }
  const [, op, majorText, minorText, patchText] = match;
  const major = Number(majorText);
  const minor = Number(minorText);
  const anyPatch = patchText === undefined || patchText === 'x' || patchText === '*';
  const patch = anyPatch ? 0 : Number(patchText);
  const matches = (version: string): boolean => {
    const v = triple(version);
    if (!v) return false;
    const [M, m, p] = v;
    if (op === '<' || op === '<=') {
      const bound: Triple = anyPatch ? [major, minor, 0] : [major, minor, patch];
      const cmp = compareVersions(`${M}.${m}.${p}`, bound.join('.'));
      // `<1.31` means below 1.31.0; `<=1.30` means any 1.30 patch or older.
      if (op === '<') return cmp < 0;
      return anyPatch ? M < major || (M === major && m <= minor) : cmp <= 0;
    }
    if (M !== major || m !== minor) return false;
    if (op === '~') return p >= patch;
    return anyPatch || p === patch;
  };
  return { text: trimmed, matches };
}
