/**
 * How leader-only work learns it was fenced: the leader elector (and a sharded replica's ring
 * membership) aborts it with an error carrying this code. In core, so the controller, the manager
 * and the simulation recognise it without depending on leader election.
 */
export const LEADERSHIP_LOST_CODE = 'ERR_LEADERSHIP_LOST';

/**
 * Whether `err` (a thrown error or an abort reason) says leadership was lost — a
 * `LeadershipLostError`, or any error with its code. The process should then stop its leader-only
 * work at once and, by default, exit (controller-runtime's behaviour).
 */
export function isLeadershipLost(err: unknown): err is { readonly code: typeof LEADERSHIP_LOST_CODE } {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === LEADERSHIP_LOST_CODE;
}
