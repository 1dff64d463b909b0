import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  API_DIR,
  UPDATE_COMMAND,
  buildApiReport,
  readCommittedReport,
  readEntryPoints,
  reportDiff,
} from './api-report.js';

// One program over every entry (a few seconds); the tests below read from it.
const reports = buildApiReport();

test('the committed API report (api/) matches the public API; a difference is a public change to review', () => {
  const generated = new Map(reports.map((r) => [r.entry.reportFile, r.text]));
  const diff = reportDiff(readCommittedReport(API_DIR), generated);
  if (diff !== '')
    assert.fail(
      `api/ is out of date with the entry points in package.json exports. Review this diff, then run \`${UPDATE_COMMAND}\` and commit api/:\n${diff}`,
    );
});

test('reportDiff names the file and the lines that changed, added or went missing', () => {
  const committed = new Map([
    ['a.api.md', 'x\nfunction f: () => void\ny\n'],
    ['gone.api.md', 'z\n'],
  ]);
  const generated = new Map([
    ['a.api.md', 'x\nfunction f: (n: number) => void\ny\n'],
    ['new.api.md', 'w\n'],
  ]);
  const diff = reportDiff(committed, generated);
  assert.match(diff, /^--- api\/a\.api\.md$/m);
  assert.match(diff, /^- function f: \(\) => void$/m);
  assert.match(diff, /^\+ function f: \(n: number\) => void$/m);
  assert.doesNotMatch(diff, /^[-+] x$/m);
  assert.match(diff, /api\/gone\.api\.md: committed but no entry point generates it/);
  assert.match(diff, /api\/new\.api\.md: not committed/);
  assert.equal(reportDiff(generated, generated), '');
});

test('every entry point in package.json exports is reported, each once', () => {
  const entries = readEntryPoints();
  assert.ok(entries.length >= 2);
  assert.deepEqual(
    reports.map((r) => r.entry.specifier),
    entries.map((e) => e.specifier),
  );
  assert.equal(new Set(entries.map((e) => e.reportFile)).size, entries.length);
  for (const r of reports) assert.ok(r.names.length > 0, `${r.entry.specifier} exports nothing`);
});

test('the root entry is curated: 60–80 names, no test tools, no bare combinators', () => {
  const root = reports.find((r) => r.entry.specifier === 'operator-runtime');
  assert.ok(root);
  const names = new Set(root.names.map((n) => n.name));
  assert.ok(
    names.size >= 60 && names.size <= 80,
    `root exports ${names.size} names; the front door holds what writing an operator needs (60–80)`,
  );
  for (const name of [
    'Manager',
    'KubeClient',
    'Client',
    'kinds',
    'requeueAfter',
    'TerminalError',
    'OperatorRuntimeError',
    'createLogger',
    'runUntilSignal',
    'LeaderElector',
    'predicates',
  ]) {
    assert.ok(names.has(name), `root lacks ${name}`);
  }
  for (const name of [
    'FakeClock',
    'seededRandom',
    'recordingLogger',
    'FakeClient',
    'TestEnv',
    'and',
    'or',
    'not',
    'done',
  ]) {
    assert.ok(!names.has(name), `root exports ${name}`);
  }
});

test('test tools are exported only from operator-runtime/testing*, internals from no entry', () => {
  const testTools = [
    'FakeClock',
    'seededRandom',
    'recordingLogger',
    'FakeClient',
    'TestEnv',
    'FaultProxy',
    'auditConsistency',
  ];
  const internals = ['Transport', 'WatchDecoder', 'StoreReplacement', 'IDEMPOTENT_METHODS'];
  for (const r of reports) {
    const names = new Set(r.names.map((n) => n.name));
    for (const name of internals) assert.ok(!names.has(name), `${r.entry.specifier} exports the internal ${name}`);
    if (r.entry.specifier.startsWith('operator-runtime/testing')) continue;
    for (const name of testTools) assert.ok(!names.has(name), `${r.entry.specifier} exports the test tool ${name}`);
  }
});

test('no name means two things: a name exported by several entries has one declaration', () => {
  const seen = new Map<string, { specifier: string; kind: string; signature: string }>();
  for (const r of reports) {
    for (const n of r.names) {
      const first = seen.get(n.name);
      if (!first) {
        seen.set(n.name, { specifier: r.entry.specifier, kind: n.kind, signature: n.signature });
        continue;
      }
      assert.deepEqual(
        { kind: n.kind, signature: n.signature },
        { kind: first.kind, signature: first.signature },
        `${n.name} in ${r.entry.specifier} differs from ${n.name} in ${first.specifier}; rename one side`,
      );
    }
  }
});
