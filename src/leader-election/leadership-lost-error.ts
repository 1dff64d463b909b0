import { OperatorRuntimeError } from '../core/errors.js';
import { LEADERSHIP_LOST_CODE } from '../core/leadership-lost.js';
import type { LeadershipEndReason } from './leader-elector-options.js';

/**
 * `start()` rejects with this when leadership ended for any reason but shutdown and the elector was
 * not told to re-enter candidacy: the process should exit non-zero (controller-runtime's default),
 * and its leader-only work has already been told to stop. `isLeadershipLost(err)` recognises it (and
 * any abort reason with its code).
 */
export class LeadershipLostError extends OperatorRuntimeError {
  declare readonly code: typeof LEADERSHIP_LOST_CODE;
  readonly reason: Exclude<LeadershipEndReason, 'shutdown'>;
  readonly lease: string;

  constructor(lease: string, reason: Exclude<LeadershipEndReason, 'shutdown'>) {
    super(LEADERSHIP_LOST_CODE, `leadership of Lease ${lease} lost (${reason}): leader-only work was stopped`);
    this.reason = reason;
    this.lease = lease;
  }
}
