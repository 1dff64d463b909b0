/**
 * One name per concept in options (issue 13, item 4): every backoff is configured through the one
 * `backoff: BackoffOptions` shape (core/backoff-options.ts), a prom-client registry is always
 * `registry` and a logger always `logger`, and an option's `@defaultValue` names an exported
 * `DEFAULT_*` constant rather than a bare number. This parses every non-test file under src/ with
 * the TypeScript parser and checks every property (nested ones too) of every `…Options` interface
 * or type literal, so a new option spelled the old way (`retries`, `baseDelayMs`, `metricsRegistry`,
 * `log`, `@defaultValue 100`) fails here, naming file:line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Interfaces that define the shared shape itself. */
const SHAPE_INTERFACES = new Set(['BackoffOptions', 'ExponentialBackoffOptions']);

/** Names that configure a backoff: they belong inside `backoff: BackoffOptions`. */
const BACKOFF_KNOB =
  /^(initialMs|maxMs|baseMs|capMs|steps|factor|jitter|maxAttempts|attempts)$|backoff|retr(y|ies)|^(base|max|min|initial)Delay/i;

/**
 * Properties that match BACKOFF_KNOB but are not a backoff's delays or attempts; each says why.
 * Keyed `Interface.property`.
 */
const NOT_BACKOFF_KNOBS: ReadonlyMap<string, string> = new Map([
  [
    'WatcherOptions.backoffResetMs',
    'how long a watcher must stay healthy before its backoff starts over: watcher state, not a delay',
  ],
  ['ScenarioGeneratorOptions.steps', 'how many scenario steps a generated scenario has: a length, not a delay'],
  ['TransportOptions.maxRetryAfterMs', "a cap on the server's Retry-After, which replaces our delay"],
  ['HttpClientOptions.maxRetryAfterMs', "a cap on the server's Retry-After, which replaces our delay"],
  ['RetryOnConflictOptions.retryable', 'which errors are retried: a predicate, not a delay'],
  ['HttpRequestOptions.retryUnsafe', 'whether a non-idempotent request may be repeated: a safety switch, not a delay'],
  ['FinalizerWriteOptions.retry', 'the retryOnConflict options (which carry `backoff`)'],
  [
    'LeaderElectorOptions.retryPeriodMs',
    "the fixed interval between a candidate's tries for the Lease (client-go's RetryPeriod), validated against the lease timings: not a growing backoff",
  ],
  [
    'ShardingOptions.retryPeriodMs',
    "the fixed interval between renewals of a ring member's Lease (leader election's RetryPeriod): not a growing backoff",
  ],
]);

export interface Finding {
  readonly line: number;
  readonly message: string;
}

function jsDocText(node: ts.Node, sf: ts.SourceFile): string {
  return ts
    .getJSDocCommentsAndTags(node)
    .map((d) => d.getText(sf))
    .join('\n');
}

/** Findings for every `…Options` interface or type alias in one file. */
export function scanOptions(fileName: string, source: string): Finding[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const findings: Finding[] = [];
  const report = (node: ts.Node, message: string): void => {
    findings.push({ line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, message });
  };

  const checkMembers = (owner: string, members: ts.NodeArray<ts.TypeElement>): void => {
    for (const member of members) {
      if (!ts.isPropertySignature(member) || !member.name) continue;
      const name = member.name.getText(sf);
      const typeText = member.type?.getText(sf) ?? '';
      const key = `${owner}.${name}`;
      if (!SHAPE_INTERFACES.has(owner)) {
        if (name === 'backoff') {
          if (!/\bBackoffOptions\b/.test(typeText))
            report(
              member,
              `${key}: a backoff option must have the shared type BackoffOptions (core/backoff-options.ts), not ${typeText}`,
            );
        } else if (BACKOFF_KNOB.test(name) && !NOT_BACKOFF_KNOBS.has(key)) {
          report(
            member,
            `${key}: a backoff knob outside the shared shape; use \`backoff: BackoffOptions\` ({ initialMs, maxMs, factor, jitter, maxAttempts })`,
          );
        }
      }
      if (name !== 'registry' && (/\bRegistry\b/.test(typeText) || /registry/i.test(name))) {
        report(member, `${key}: a prom-client registry option is named \`registry\``);
      }
      if (name !== 'logger' && (/\bLogger\b/.test(typeText) || name === 'log' || /logger/i.test(name))) {
        report(member, `${key}: a logger option is named \`logger\``);
      }
      const doc = jsDocText(member, sf);
      const literal = /@defaultValue\s+(-?[0-9][0-9_,.]*)/.exec(doc);
      if (literal)
        report(
          member,
          `${key}: @defaultValue ${literal[1]} is a bare literal; export a DEFAULT_* constant and name it`,
        );
      // Nested option groups (`rateLimit?: { qps, burst }`) follow the same rules.
      if (name !== 'backoff' && member.type && ts.isTypeLiteralNode(member.type))
        checkMembers(owner, member.type.members);
    }
  };

  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node) && node.name.text.endsWith('Options'))
      checkMembers(node.name.text, node.members);
    else if (ts.isTypeAliasDeclaration(node) && node.name.text.endsWith('Options') && ts.isTypeLiteralNode(node.type))
      checkMembers(node.name.text, node.type.members);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return findings;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !/\.test\.ts$/.test(entry.name))
      out.push(full);
  }
  return out;
}

test('the scanner names each old spelling with its line, nested ones too, and passes the shared shape', () => {
  const source = [
    "import type { Registry } from 'prom-client';",
    'export interface OldOptions {',
    '  readonly retries?: number;',
    '  readonly backoffInitialMs?: number;',
    '  readonly metricsRegistry?: Registry;',
    '  readonly log?: Logger;',
    '  readonly backoff?: { initialMs: number };',
    '  /** @defaultValue 100 */',
    '  readonly timeoutMs?: number;',
    '  readonly nested?: { readonly baseDelayMs?: number };',
    '}',
    'export interface NewOptions {',
    '  readonly backoff?: BackoffOptions;',
    '  readonly registry?: Registry;',
    '  readonly logger?: Logger;',
    '  /** @defaultValue {@link DEFAULT_TIMEOUT_MS} */',
    '  readonly timeoutMs?: number;',
    '}',
    'interface NotAnOptionsBag { readonly retries: number }',
  ].join('\n');
  const found = scanOptions('x.ts', source);
  assert.deepEqual(
    found.map((f) => [f.line, f.message.split(':')[0]]),
    [
      [3, 'OldOptions.retries'],
      [4, 'OldOptions.backoffInitialMs'],
      [5, 'OldOptions.metricsRegistry'],
      [6, 'OldOptions.log'],
      [7, 'OldOptions.backoff'],
      [9, 'OldOptions.timeoutMs'],
      [10, 'OldOptions.baseDelayMs'],
    ],
  );
});

test('every option in src/ uses one backoff shape, `registry`, `logger`, and DEFAULT_* constants for its defaults', () => {
  const files = sourceFiles(SRC);
  assert.ok(files.length > 100, `scanned only ${files.length} files`);
  const problems: string[] = [];
  for (const file of files) {
    for (const f of scanOptions(file, readFileSync(file, 'utf8')))
      problems.push(`src/${path.relative(SRC, file)}:${f.line}  ${f.message}`);
  }
  assert.deepEqual(problems, [], `\n${problems.join('\n')}`);
});
