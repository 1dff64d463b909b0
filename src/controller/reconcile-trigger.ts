/**
 * What put a key in a controller's queue, as the per-object history shows it: a watch event of one
 * of its sources (the primary kind, an owned kind, a watched kind), a list or resync that only
 * announced the object, an external trigger, or the controller itself (a requeue, a retry after an
 * error). Told to the console view's optional `noteTrigger` by the builder's sinks.
 */
export type HistoryTrigger =
  | {
      readonly type: 'event';
      /** How the source was declared: `for`, `owns` or `watches`. */
      readonly source: string;
      readonly kind: string;
      /** True for an add from a list (the initial list, a relist) or a resync: nothing changed. */
      readonly listed: boolean;
    }
  | { readonly type: 'external' }
  | { readonly type: 'requeue' }
  | { readonly type: 'retry' }
  | { readonly type: 'unknown' };
