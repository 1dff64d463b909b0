import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MEMORY_REDUCING_GC_SUPPORTED } from './memory-reducing-gc.js';

const MODULE = fileURLToPath(new URL('./memory-reducing-gc.ts', import.meta.url));

interface ChildReport {
  /** `'collected'`, or the error code the collection was refused with. */
  readonly collection: string;
  /** `typeof gc` in a vm context created after the collection. */
  readonly gcInNewContext: string;
}

/**
 * Runs the collection in a fresh process (a test process's own flags are not ours to change):
 * `flags` on its command line, `setup` run before the collection as "other code".
 */
function runChild(flags: readonly string[], setup: string): Promise<ChildReport> {
  const script = `
    const { runInNewContext } = require('node:vm');
    const v8 = require('node:v8');
    ${setup}
    import(${JSON.stringify(MODULE)}).then((m) => {
      let collection = 'collected';
      try { m.collectGarbageAndShrinkHeap(); } catch (e) { collection = e.code ?? String(e); }
      console.log(JSON.stringify({ collection, gcInNewContext: runInNewContext('typeof gc') }));
    });
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...flags, '--import', 'tsx', '-e', script], (error, stdout, stderr) => {
      if (error) reject(new Error(`child failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as ChildReport);
    });
  });
}

// Node 22+ (V8 12) collects; Node 20 refuses before touching the flag. Either way the flag must be as it was.
const COLLECTION = MEMORY_REDUCING_GC_SUPPORTED ? 'collected' : 'ERR_UNSUPPORTED_RUNTIME';

test('the collection leaves --expose-gc on when the process was started with it: new vm contexts keep gc', async () => {
  assert.deepEqual(await runChild(['--expose-gc'], ''), { collection: COLLECTION, gcInNewContext: 'function' });
});

test('the collection leaves --expose-gc on when other code turned it on with v8.setFlagsFromString', async () => {
  // Regression: the collection used to turn the flag off after taking gc, whoever had turned it on.
  assert.deepEqual(await runChild([], "v8.setFlagsFromString('--expose-gc');"), {
    collection: COLLECTION,
    gcInNewContext: 'function',
  });
});

test('the collection leaves --expose-gc off when it was off: it does not expose gc to the rest of the process', async () => {
  assert.deepEqual(await runChild([], ''), { collection: COLLECTION, gcInNewContext: 'undefined' });
});
