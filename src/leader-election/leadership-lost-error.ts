import { OperatorRuntimeError } from '../core/errors.js';
import type { LeadershipEndReason } from './leader-elector-options.js';

/**
 * `start()` rejects with this when leadership ended for any reason but shutdown and the elector was
 * not told to re-enter candidacy: the process should exit non-zero (controller-runtime's default),
 * and its leader-only work has already been told to stop.
 */
export class LeadershipLostError extends OperatorRuntimeError {
  declare readonly code: 'ERR_LEADERSHIP_LOST';
  readonly reason: Exclude<LeadershipEndReason, 'shutdown'>;
  readonly lease: string;

  constructor(lease: string, reason: Exclude<LeadershipEndReason, 'shutdown'>) {
    super('ERR_LEADERSHIP_LOST', `leadership of Lease ${lease} lost (${reason}): leader-only work was stopped`);
    this.reason = reason;
    this.lease = lease;
  }
}
