/**
 * How a finding reads in a report: one line (`[oracle] key (step n) after fault: message`), and the
 * minimal trace that led there — the scenario steps, faults, process starts and deaths, and the
 * reconciles and writes of the object the finding names (its children too: they carry its name),
 * up to the end of the run, at most {@link TRACE_LINES} lines. Reads (gets, lists, watches) that
 * succeeded are left out: they change nothing.
 */
import type { Finding, RunRecord } from './simulation-records.js';

/** Lines of trace a finding shows at most (the last ones). @defaultValue 40 */
export const TRACE_LINES = 40;

export function formatFinding(x: Finding): string {
  return `[${x.oracle}] ${x.key ?? ''}${x.step !== undefined ? ` (step ${x.step})` : ''}${x.fault ? ` after ${x.fault}` : ''}: ${x.message}`;
}

const READ_OK = / call \d+ (get|list|watch) .* -> ok$/;
const WRITE = / call \d+ (create|update|patch|delete) /;

/** The trace lines that explain `finding` in `run` (see the module comment). */
export function findingTrace(run: Pick<RunRecord, 'trace'>, finding: Finding, max = TRACE_LINES): string[] {
  // `Widget default/w1` or `widget default/w1` (a controller's key): the object's namespace/name.
  const name = finding.key?.split(' ').at(-1);
  const lines = run.trace.filter((line) => {
    if (line.startsWith('final ')) return false;
    if (/ step \d+/.test(line) || / fault /.test(line) || / (starts|dies|exits|livelock|lost leadership)/.test(line))
      return !/ reconcile /.test(line) || (name !== undefined && line.includes(name));
    if (/ (quiet window|faults stop|budget exhausted)/.test(line)) return true;
    if (name === undefined) return WRITE.test(line);
    if (READ_OK.test(line)) return false;
    return line.includes(name) && (WRITE.test(line) || / reconcile /.test(line) || / call /.test(line));
  });
  const folded = foldRepeats(lines);
  return folded.length > max ? [`… ${folded.length - max} earlier line(s)`, ...folded.slice(-max)] : folded;
}

/** A block of one or two lines repeated (a hot loop's start/end) is shown once, with its count. */
function foldRepeats(lines: readonly string[]): string[] {
  const text = (line: string): string => line.replace(/^\d+ /, '');
  const out: string[] = [];
  for (let i = 0; i < lines.length;) {
    let folded = false;
    for (const size of [1, 2]) {
      let n = 1;
      while (
        i + (n + 1) * size <= lines.length &&
        Array.from({ length: size }, (_, k) => text(lines[i + k]!) === text(lines[i + n * size + k]!)).every(Boolean)
      )
        n++;
      if (n >= 3) {
        out.push(
          ...lines.slice(i, i + size),
          `… the ${size === 1 ? 'line' : 'two lines'} above ${n - 1} more time(s), until ${lines[i + n * size - 1]!.split(' ')[0]} ms`,
        );
        i += n * size;
        folded = true;
        break;
      }
    }
    if (!folded) out.push(lines[i++]!);
  }
  return out;
}
