/**
 * What a V8 heap snapshot holds, by kind of node: the live heap (a snapshot is taken after a full
 * GC) split into strings, code, closures, arrays and objects by constructor. operator-memory.bench.ts
 * uses it with BENCH_HEAP_SNAPSHOT=1 to say where an idle operator's heap goes; alone:
 *
 *   node --import tsx scripts/packaging/heap-snapshot-summary.ts FILE.heapsnapshot [rows=15]
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: unknown[] } };
  readonly nodes: number[];
  readonly strings: string[];
}

export interface HeapSummary {
  readonly totalBytes: number;
  /** Bytes by group, largest first: `(string)`-like node types in brackets, objects by constructor name. */
  readonly groups: readonly { readonly name: string; readonly bytes: number; readonly count: number }[];
}

export function summarizeHeapSnapshot(text: string): HeapSummary {
  const snap = JSON.parse(text) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0] as string[];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const groups = new Map<string, { bytes: number; count: number }>();
  let totalBytes = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!] ?? '?';
    const size = snap.nodes[i + sizeAt]!;
    totalBytes += size;
    const name =
      type === 'object' || type === 'native'
        ? (snap.strings[snap.nodes[i + nameAt]!] ?? '?')
        : type === 'string' || type === 'concatenated string' || type === 'sliced string'
          ? // Long strings are mostly the source text V8 keeps of every loaded module.
            size >= 8192
            ? '(string ≥ 8 KiB)'
            : '(string)'
          : `(${type})`;
    const g = groups.get(name) ?? { bytes: 0, count: 0 };
    g.bytes += size;
    g.count += 1;
    groups.set(name, g);
  }
  return {
    totalBytes,
    groups: [...groups].map(([name, g]) => ({ name, ...g })).sort((a, b) => b.bytes - a.bytes),
  };
}

export function formatHeapSummary(summary: HeapSummary, rows = 15): string {
  const mib = (n: number) => (n / 2 ** 20).toFixed(1);
  return [
    `live heap ${mib(summary.totalBytes)} MiB:`,
    ...summary.groups
      .slice(0, rows)
      .map(
        (g) => `    ${g.name.slice(0, 40).padEnd(40)} ${mib(g.bytes).padStart(6)} MiB  ${String(g.count).padStart(8)}`,
      ),
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: heap-snapshot-summary.ts FILE.heapsnapshot [rows]\n');
    process.exitCode = 2;
  } else {
    const summary = summarizeHeapSnapshot(await readFile(file, 'utf8'));
    process.stdout.write(`${formatHeapSummary(summary, Number(process.argv[3] ?? 15))}\n`);
  }
}
