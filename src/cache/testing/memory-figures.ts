/** The figures memory-footprint.ts measures and memory-footprint-runner.ts reduces, shared by both and the thresholds' check. */
import type { DatabaseLikeSize } from './database-like.js';

export interface HeapFigures {
  readonly mode: 'heap';
  readonly node: string;
  /** Real heap bytes per cached object, by object size. */
  readonly bytesPerObject: Record<DatabaseLikeSize, number>;
  /** Every round's figure (the spread shows how stable it is). */
  readonly rounds: Record<DatabaseLikeSize, readonly number[]>;
  /** The informer's estimate of the same figure. */
  readonly estimatedBytesPerObject: Record<DatabaseLikeSize, number | undefined>;
}

export interface IdleFigures {
  readonly mode: 'idle';
  readonly node: string;
  readonly objects: number;
  readonly heapUsedBytes: number;
  readonly rssBytes: number;
  /** RSS after the manager's idle heap compaction (collectGarbageAndShrinkHeap); V8 12+ (Node 22+) only. */
  readonly compactedRssBytes?: number;
  /** V8's committed heap (heapTotal) right after that compaction: what it gives back, without RSS's spread. */
  readonly compactedHeapCommittedBytes?: number;
}

export interface FootprintFigures {
  readonly node: string;
  readonly heap: HeapFigures;
  /** Median of the idle runs, and every run. */
  readonly idle: {
    readonly heapUsedBytes: number;
    readonly rssBytes: number;
    readonly compactedRssBytes?: number;
    readonly compactedHeapCommittedBytes?: number;
    readonly runs: readonly IdleFigures[];
  };
}
