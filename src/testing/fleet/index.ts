/**
 * operator-runtime/testing/fleet: the fleet rig — a host TestEnv and member control planes, each
 * behind a link that can cut it off, member Secrets for the fleet providers, and the fleet-wide
 * consistency audit (the etcd histories of every member).
 */
export { TestFleet } from './test-fleet.js';
export type { TestFleetOptions, TestFleetStartup } from './test-fleet.js';
export { TestFleetMember } from './test-fleet-member.js';
export type { MemberMemory } from './test-fleet-member.js';
export { TestFleetError } from './test-fleet-error.js';
export { MemberLinkError, DEFAULT_CUT_OFF_MODE } from './member-link.js';
export type { CutOffMode } from './member-link.js';
export {
  memberSecretManifest,
  FLEET_MEMBER_LABEL,
  DEFAULT_MEMBER_SECRET_KEY,
  MEMBER_CLUSTER_NAME_ANNOTATION,
} from './member-secret.js';
export type { MemberSecretOptions, MemberSecretManifest } from './member-secret.js';
export { auditFleet, fleetAuditMark, formatFleetAuditReport } from './fleet-audit.js';
export type { FleetAuditOptions, FleetAuditReport, FleetAuditMark } from './fleet-audit.js';
