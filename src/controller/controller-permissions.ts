import type { ResourceType } from '../client/discovery.js';
import { omitUndefined } from '../core/omit-undefined.js';
import type { PermissionRequirement } from '../rbac/permission.js';
import type { ControllerDescription } from './controller-description.js';

/**
 * What a controller needs RBAC to allow: list and watch on every kind it watches, what `writes`
 * declares, and `update` on the primary's `finalizers` when it writes objects of a kind it owns
 * (`setControllerReference` sets `blockOwnerDeletion`, which the
 * OwnerReferencesPermissionEnforcement admission plugin allows only to whoever may update the
 * owner's finalizers).
 */
export function controllerPermissions(d: ControllerDescription): PermissionRequirement[] {
  const who = `controller ${d.name}`;
  const out: PermissionRequirement[] = d.sources.map((s) => ({
    resource: s.type,
    verbs: ['list', 'watch'],
    reason: `${who}: ${s.declaredBy} ${s.type.kind}`,
  }));
  for (const w of d.writes) {
    const reason = `${who}: writes ${w.type.kind}${w.subresource ? `/${w.subresource}` : ''}`;
    out.push({ resource: w.type, verbs: w.verbs, ...omitUndefined({ subresource: w.subresource }), reason });
  }
  const sameKind = (a: ResourceType, b: ResourceType): boolean => a.apiVersion === b.apiVersion && a.kind === b.kind;
  const writesObjects = (type: ResourceType): boolean =>
    d.writes.some(
      (w) =>
        w.subresource === undefined &&
        sameKind(w.type, type) &&
        w.verbs.some((v) => v === 'create' || v === 'update' || v === 'patch'),
    );
  const ownedWritten = d.sources.filter((s) => s.declaredBy === 'owns' && writesObjects(s.type));
  if (ownedWritten.length > 0) {
    const reason = `${who}: blocking ownerReferences to ${d.primary.kind} on ${ownedWritten.map((s) => s.type.kind).join(', ')}`;
    out.push({ resource: d.primary, verbs: ['update'], subresource: 'finalizers', reason });
  }
  return out;
}
