/**
 * heap-snapshot-summary.ts reads a real V8 snapshot: objects are grouped by their constructor and
 * counted, and the groups add up to the live heap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { formatHeapSummary, summarizeHeapSnapshot } from './heap-snapshot-summary.js';

class FootprintMarker {
  constructor(readonly index: number) {}
}

test('a snapshot is summarized by constructor, and its groups add up to the live heap', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'heap-summary-'));
  const kept = Array.from({ length: 5000 }, (_, i) => new FootprintMarker(i));
  try {
    const file = writeHeapSnapshot(join(dir, 'test.heapsnapshot'));
    const summary = summarizeHeapSnapshot(await readFile(file, 'utf8'));
    const markers = summary.groups.find((g) => g.name === 'FootprintMarker');
    assert.equal(markers?.count, kept.length);
    assert.ok(markers.bytes >= kept.length * 16, `${markers.bytes} B for ${markers.count} markers`);
    assert.equal(
      summary.groups.reduce((n, g) => n + g.bytes, 0),
      summary.totalBytes,
    );
    assert.match(formatHeapSummary(summary, 200), /FootprintMarker\s+[\d.]+ MiB\s+5000/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
