/**
 * leader-election: Lease-based leader election with fencing. Several replicas run; the one holding
 * the `coordination.k8s.io/v1` Lease runs leader-only work under a signal that aborts before anyone
 * else can acquire, and releases the Lease on a clean shutdown.
 */
export { LeaderElector } from './leader-elector.js';
export type { LeaderWork } from './leader-elector.js';
export {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  JITTER_FACTOR,
  defaultIdentity,
} from './leader-elector-options.js';
export type {
  LeaderElectorOptions,
  LeaderElectorTimings,
  LeadershipEndReason,
  LeaseClient,
} from './leader-elector-options.js';
export { LeadershipLostError } from './leadership-lost-error.js';
export { isLeadershipLost } from '../core/leadership-lost.js';
export { LEASE_TYPE, formatMicroTime } from './lease-record.js';
export type { Lease, LeaseSpec } from './lease-record.js';
