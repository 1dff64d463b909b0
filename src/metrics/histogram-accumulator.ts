import { InvalidOptionError } from '../core/errors.js';

/**
 * One histogram series kept in plain numbers: `observe` is a few comparisons and additions (no
 * label hashing), and `registerHistogramCollector` exports it at scrape time.
 */
export class HistogramAccumulator {
  /** Upper bounds, ascending (without +Inf). */
  readonly buckets: readonly number[];
  /** Non-cumulative count per bucket; the last slot counts values above every bound (+Inf). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(buckets: readonly number[]) {
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]! > buckets[i - 1]!)) throw new InvalidOptionError('buckets', 'must be strictly increasing');
    }
    this.buckets = [...buckets];
    this.counts = new Float64Array(buckets.length + 1);
  }

  observe(value: number): void {
    const buckets = this.buckets;
    let i = 0;
    while (i < buckets.length && value > buckets[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}
