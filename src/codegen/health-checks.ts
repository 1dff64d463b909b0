/**
 * GitOps health checks generated from a custom kind, both encoding the kstatus rules of
 * core/kstatus-rules.ts (R1…R6, docs/status.md), for tools that do not apply them on their own:
 * - Flux: a `spec.healthCheckExprs` entry (CEL) for the Kustomization that applies the kind's
 *   objects. Flux evaluates `inProgress`, then `failed`, then `current`; the first true decides and
 *   none true means InProgress (the Kustomization API, "Health check expressions":
 *   https://github.com/fluxcd/kustomize-controller/blob/main/docs/spec/v1/kustomizations.md). Flux compares status.observedGeneration itself first; the expressions
 *   repeat it so they stand alone.
 * - Argo CD: a Lua health check, which Argo CD runs with the object as `obj` and which returns
 *   `{ status = Healthy|Progressing|Degraded|Suspended, message }`; without one Argo CD reports a
 *   custom resource Healthy as soon as it exists. It goes into argocd-cm as
 *   `resource.customizations.health.<group>_<Kind>` (Argo CD's operator manual, "Resource Health").
 *   Argo CD runs it on gopher-lua, so it is Lua 5.1.
 * A kind whose storage version has a boolean `spec.suspend` (Flux's convention) is also reported
 * Suspended by Argo CD while it is true; kstatus has no such state, so Flux's check is unchanged.
 */
import type { AnyCustomKind } from '../crd/custom-kind.js';
import { READY_CONDITION, RECONCILING_CONDITION, STALLED_CONDITION } from '../core/kstatus-rules.js';

/** One entry of a Flux Kustomization's `spec.healthCheckExprs`. */
export interface FluxHealthCheckExpr {
  readonly apiVersion: string;
  readonly kind: string;
  readonly inProgress: string;
  readonly failed: string;
  readonly current: string;
}

/** CEL: a condition of `type` with `status` that speaks for metadata.generation (the rules' "fresh"). */
function celFreshCondition(type: string, status: 'True'): string {
  return (
    `has(status.conditions) && status.conditions.exists(c, c.type == '${type}' && c.status == '${status}'` +
    ` && (!has(c.observedGeneration) || c.observedGeneration == metadata.generation))`
  );
}

/**
 * The kind's Flux health check. An object no controller has written yet has no `status` at all:
 * Flux documents that CEL then fails on the missing field, and it counts the object as not ready
 * (it keeps waiting), which is what R2 asks; a deleting one is caught before `status` is read.
 */
export function fluxHealthCheckExpr(kind: AnyCustomKind): FluxHealthCheckExpr {
  const deleting = 'has(metadata.deletionTimestamp)'; // R1
  const unobserved = '!has(status.observedGeneration) || status.observedGeneration != metadata.generation'; // R2
  const reconciling = celFreshCondition(RECONCILING_CONDITION, 'True'); // R3
  const stalled = celFreshCondition(STALLED_CONDITION, 'True'); // R4
  const ready = celFreshCondition(READY_CONDITION, 'True'); // R5
  return {
    apiVersion: kind.apiVersion,
    kind: kind.kind,
    // R1, R2, R3, and R6: neither Stalled nor Ready.
    inProgress: `${deleting} || ${unobserved} || (${reconciling}) || !((${stalled}) || (${ready}))`,
    failed: stalled,
    current: ready,
  };
}

/** The argocd-cm key Argo CD reads a kind's health check from. */
export function argoCdHealthKey(kind: AnyCustomKind): string {
  return `resource.customizations.health.${kind.group}_${kind.kind}`;
}

/** Whether the kind's storage version has a boolean `spec.suspend`. */
export function hasSuspendField(kind: AnyCustomKind): boolean {
  const version = kind.definition.versions.find((v) => v.storage);
  const spec = (version?.schema as { spec?: { properties?: Record<string, { type?: unknown }> } } | undefined)?.spec;
  return spec?.properties?.suspend?.type === 'boolean';
}

const luaString = (value: string) => JSON.stringify(value); // kind names and condition types: no escapes beyond JSON's

/** The kind's Argo CD health check (Lua 5.1), rule by rule. */
export function argoCdHealthLua(kind: AnyCustomKind): string {
  const suspend = hasSuspendField(kind)
    ? [
        'if obj.spec ~= nil and obj.spec.suspend == true then',
        '  hs.status = "Suspended"',
        '  hs.message = "spec.suspend is true"',
        '  return hs',
        'end',
      ]
    : [];
  return [
    `-- ${kind.group}/${kind.kind}: the kstatus rules (operator-runtime docs/status.md), first match decides.`,
    'local hs = { status = "Progressing", message = "" }',
    'local meta = obj.metadata or {}',
    'local status = obj.status',
    '-- R1: being deleted.',
    'if meta.deletionTimestamp ~= nil then',
    '  hs.message = "Deleting"',
    '  return hs',
    'end',
    ...suspend,
    '-- R2: the operator has not observed this generation yet.',
    'if status == nil or status.observedGeneration == nil or status.observedGeneration ~= meta.generation then',
    '  hs.message = "Waiting for the operator to observe generation " .. tostring(meta.generation)',
    '  return hs',
    'end',
    '-- A condition counts only if it speaks for this generation.',
    'local function fresh(type)',
    '  if status.conditions == nil then return nil end',
    '  for _, c in ipairs(status.conditions) do',
    '    if c.type == type and (c.observedGeneration == nil or c.observedGeneration == meta.generation) then',
    '      return c',
    '    end',
    '  end',
    '  return nil',
    'end',
    'local function describe(c)',
    '  local reason = c.reason or ""',
    '  if c.message ~= nil and c.message ~= "" then return reason .. ": " .. c.message end',
    '  return reason',
    'end',
    '-- R3: work in progress.',
    `local reconciling = fresh(${luaString(RECONCILING_CONDITION)})`,
    'if reconciling ~= nil and reconciling.status == "True" then',
    '  hs.message = describe(reconciling)',
    '  return hs',
    'end',
    '-- R4: stalled until something changes.',
    `local stalled = fresh(${luaString(STALLED_CONDITION)})`,
    'if stalled ~= nil and stalled.status == "True" then',
    '  hs.status = "Degraded"',
    '  hs.message = describe(stalled)',
    '  return hs',
    'end',
    '-- R5: converged.',
    `local ready = fresh(${luaString(READY_CONDITION)})`,
    'if ready ~= nil and ready.status == "True" then',
    '  hs.status = "Healthy"',
    '  hs.message = describe(ready)',
    '  return hs',
    'end',
    '-- R6: not Ready (yet).',
    'if ready ~= nil then',
    '  hs.message = describe(ready)',
    'else',
    '  hs.message = "Waiting for the Ready condition"',
    'end',
    'return hs',
  ].join('\n');
}

/** Where `generate manifests` writes them: beside the Kustomize base, not in it (they configure Flux and Argo CD). */
export const FLUX_HEALTH_CHECKS_FILE = 'health/flux-health-checks.yaml';
export const ARGOCD_HEALTH_CHECKS_FILE = 'health/argocd-cm.yaml';

/** `healthCheckExprs` for every kind, to merge into the `spec` of the Flux Kustomization applying their objects. */
export function fluxHealthChecks(kinds: readonly AnyCustomKind[]): { healthCheckExprs: FluxHealthCheckExpr[] } {
  return { healthCheckExprs: kinds.map(fluxHealthCheckExpr) };
}

/** argocd-cm with one health check per kind, to merge into Argo CD's (a merge patch: other keys stay). */
export function argoCdHealthConfigMap(kinds: readonly AnyCustomKind[]): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'argocd-cm',
      namespace: 'argocd',
      labels: { 'app.kubernetes.io/name': 'argocd-cm', 'app.kubernetes.io/part-of': 'argocd' },
    },
    data: Object.fromEntries(kinds.map((kind) => [argoCdHealthKey(kind), argoCdHealthLua(kind)])),
  };
}
