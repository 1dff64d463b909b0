/**
 * A full, memory-reducing garbage collection, for a process that has just finished a busy phase
 * (initial lists, a wave of reconciles) and is idle. V8 keeps the old generation's pages committed
 * after such a phase; Node 24's V8 does not give them back by itself while idle (measured: 37 MiB
 * committed for 23 MiB used, 40 s later), and Node 20's memory reducer takes 5–40 s to start.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { OperatorRuntimeError } from './errors.js';

type V8Gc = (options?: { type: 'major'; execution: 'sync'; flavor: 'regular' | 'last-resort' }) => void;

/**
 * V8 12 (Node 22) added the `flavor` option. V8 11 (Node 20) has no memory-reducing GC to ask for;
 * its memory reducer shrinks an idle heap by itself, at a time of its own, and a regular full GC
 * was not seen to bring that time forward (docs/footprint.md).
 */
export const MEMORY_REDUCING_GC_SUPPORTED = Number(process.versions.v8.split('.')[0]) >= 12;

let cached: V8Gc | undefined;

/**
 * V8's `gc` function: the global one when the process runs with `--expose-gc`, else one taken from
 * a fresh context. `--expose-gc` only decides whether a new context gets the function, so the flag
 * is turned on just long enough to create one — and only when it was off: other code may have
 * turned it on (`v8.setFlagsFromString`, which `process.execArgv` does not show) for its own vm
 * contexts and workers, and turning it off would take `gc` away from them. A probe context tells
 * the flag's current state, the one thing V8 lets us read it by.
 */
function v8Gc(): V8Gc {
  if (cached) return cached;
  const exposed = (globalThis as { gc?: V8Gc }).gc;
  if (typeof exposed === 'function') return (cached = exposed);
  const alreadyOn = runInNewContext('typeof gc === "function" ? gc : undefined') as V8Gc | undefined;
  if (alreadyOn) return (cached = alreadyOn);
  setFlagsFromString('--expose-gc');
  try {
    cached = runInNewContext('gc') as V8Gc;
  } finally {
    // It was off: the probe above saw no `gc`.
    setFlagsFromString('--no-expose-gc');
  }
  return cached;
}

/**
 * Collects all garbage, compacts the old generation and releases its free pages at once: the "last
 * resort" collection V8 12+ runs under memory pressure (full GCs until nothing more is freed).
 * Blocks the event loop while it runs. Throws where {@link MEMORY_REDUCING_GC_SUPPORTED} is false.
 */
export function collectGarbageAndShrinkHeap(): void {
  if (!MEMORY_REDUCING_GC_SUPPORTED)
    throw new OperatorRuntimeError(
      'ERR_UNSUPPORTED_RUNTIME',
      `V8 ${process.versions.v8} has no memory-reducing GC to ask for (needs V8 12, Node 22)`,
    );
  v8Gc()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
