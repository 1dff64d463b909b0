/**
 * What a webhook rule needs to know about a kind: its group, version, plural resource and scope.
 * Custom kinds from `operator-runtime/crd` carry `plural` and `scope`; for any other kind the
 * plural is guessed as kube's `meta.UnsafeGuessKindToResource` does (lower case; `y` → `ies`,
 * `s`/`x`/`ch`/`sh` → `es`, else `s`), which is right for every built-in kind but Endpoints.
 */
import type { ResourceType } from '../client/discovery.js';

export interface KindResource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Plural resource name, e.g. `databases`. */
  readonly resource: string;
  /** `'*'` when the kind does not say. */
  readonly scope: 'Namespaced' | 'Cluster' | '*';
}

/** Plurals `UnsafeGuessKindToResource` gets wrong. */
const IRREGULAR: Readonly<Record<string, string>> = { endpoints: 'endpoints' };

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function guessPlural(kind: string): string {
  const lower = kind.toLowerCase();
  if (IRREGULAR[lower]) return IRREGULAR[lower];
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}

/** The kind's group, version, resource and scope (see the file comment for where they come from). */
export function kindResource(kind: ResourceType, override: { readonly resource?: string } = {}): KindResource {
  const { group, version } = splitApiVersion(kind.apiVersion);
  const plural = 'plural' in kind && typeof kind.plural === 'string' ? kind.plural : undefined;
  const scope = 'scope' in kind && (kind.scope === 'Namespaced' || kind.scope === 'Cluster') ? kind.scope : '*';
  return { group, version, kind: kind.kind, resource: override.resource ?? plural ?? guessPlural(kind.kind), scope };
}
