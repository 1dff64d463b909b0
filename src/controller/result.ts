/** The controller's view of the one result type (defined in core so the helpers share it). */
export { done, requeueAfter, isRequeue, type Result } from '../core/result.js';
