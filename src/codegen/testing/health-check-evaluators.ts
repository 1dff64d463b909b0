/**
 * Runs the generated health checks the way their tools do, so tests judge them by evaluation:
 * - Flux: the StatusEvaluator of https://github.com/fluxcd/pkg/blob/main/runtime/cel/status_evaluator.go
 *   — status.observedGeneration (when an integer) differing from metadata.generation is InProgress
 *   before any expression; then `inProgress`,
 *   `failed`, `current`, the first true deciding, none true InProgress; the object's top-level
 *   fields are the CEL variables. An evaluation error is Flux's Unknown (it keeps waiting). The CEL
 *   is @marcbachmann/cel-js, not Flux's cel-go: the expressions use only the standard macros
 *   (`has`, `exists`) and operators, which both implement.
 * - Argo CD: the Lua script run by Debian's Lua 5.1 (Argo CD's gopher-lua is Lua 5.1), with the
 *   object as the global `obj` built as Argo CD builds it (maps and lists as tables, 1-based).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { evaluate } from '@marcbachmann/cel-js';
import type { FluxHealthCheckExpr } from '../health-checks.js';

export type FluxStatus = 'InProgress' | 'Failed' | 'Current' | 'Unknown';

export interface FluxVerdict {
  readonly status: FluxStatus;
  /** Which step decided: `observedGeneration`, an expression's name, `none`, or the error. */
  readonly decidedBy: string;
}

export function evaluateFluxHealthCheck(check: FluxHealthCheckExpr, obj: Record<string, unknown>): FluxVerdict {
  const observed = (obj.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
  const generation = (obj.metadata as { generation?: unknown } | undefined)?.generation;
  if (Number.isInteger(observed) && Number.isInteger(generation) && observed !== generation)
    return { status: 'InProgress', decidedBy: 'observedGeneration' };
  const steps = [
    ['inProgress', check.inProgress, 'InProgress'],
    ['failed', check.failed, 'Failed'],
    ['current', check.current, 'Current'],
  ] as const;
  for (const [name, expression, status] of steps) {
    let result: unknown;
    try {
      result = evaluate(expression, obj);
    } catch (error) {
      return { status: 'Unknown', decidedBy: `error in ${name}: ${(error as Error).message.split('\n')[0]}` };
    }
    if (typeof result !== 'boolean')
      return { status: 'Unknown', decidedBy: `${name} is not a boolean: ${String(result)}` };
    if (result) return { status, decidedBy: name };
  }
  return { status: 'InProgress', decidedBy: 'none' };
}

/** A JSON value as a Lua 5.1 table constructor (Argo CD's conversion: objects and arrays become tables). */
export function luaValue(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return luaString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{${value.map(luaValue).join(', ')}}`;
  const entries = Object.entries(value as Record<string, unknown>).map(
    ([k, v]) => `[${luaString(k)}] = ${luaValue(v)}`,
  );
  return `{${entries.join(', ')}}`;
}

function luaString(text: string): string {
  // Lua 5.1 knows \\ \" and decimal \ddd escapes (always 3 digits here, so a digit after one is not
  // read as part of it); bytes above 127 pass through (UTF-8 stays UTF-8).
  let out = '"';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    out +=
      ch === '\\' || ch === '"' ? `\\${ch}` : code < 32 || code === 127 ? `\\${String(code).padStart(3, '0')}` : ch;
  }
  return `${out}"`;
}

export interface ArgoCdVerdict {
  readonly status: string;
  readonly message: string;
}

export const LUA_INTERPRETER = 'lua5.1';

/** Runs `script` once per object in one interpreter; each run gets a fresh `obj` and a fresh chunk. */
export async function evaluateArgoCdHealthLua(
  script: string,
  objects: readonly Record<string, unknown>[],
): Promise<ArgoCdVerdict[]> {
  const dir = await mkdtemp(join(tmpdir(), 'argocd-health-'));
  try {
    const driver = [
      `local script = ${luaString(script)}`,
      `local objects = {${objects.map(luaValue).join(',\n')}}`,
      'for _, o in ipairs(objects) do',
      '  obj = o',
      '  local chunk = assert(loadstring(script))',
      '  local hs = chunk()',
      '  io.write(tostring(hs.status), "\\t", (tostring(hs.message or "")):gsub("[\\t\\n]", " "), "\\n")',
      'end',
    ].join('\n');
    const file = join(dir, 'driver.lua');
    await writeFile(file, driver);
    const { stdout } = await promisify(execFile)(LUA_INTERPRETER, [file]);
    const lines = stdout.split('\n').filter((line) => line !== '');
    return lines.map((line) => {
      const [status = '', message = ''] = line.split('\t');
      return { status, message };
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
