import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { ARTEFACTS } from './artefacts.js';
import { allExpressions, renderDashboard } from './render.js';
import { ALERT_RULES, RECORDING_RULES } from './rules-source.js';

const run = promisify(execFile);
const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
/** Debian's `prometheus` package; scripts/install-test-tools.sh installs it for the test command. */
const PROMTOOL = process.env.PROMTOOL ?? '/usr/bin/promtool';

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args);
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`promtool ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`, {
      cause: err,
    });
  }
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'monitoring-test-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the rule file, PrometheusRule and dashboard in the repository are what rules-source.ts renders (run monitoring/generate.ts)', async () => {
  for (const a of ARTEFACTS) {
    assert.equal(await readFile(here(a.file), 'utf8'), a.render(), `monitoring/${a.file} drifted from rules-source.ts`);
  }
});

test("promtool accepts the plain rule file and the PrometheusRule manifest's groups", async () => {
  const out = await promtool('check', 'rules', here('operator-runtime.rules.yaml'));
  assert.match(out, new RegExp(`SUCCESS: ${RECORDING_RULES.rules.length + ALERT_RULES.rules.length} rules found`));
  const manifest = parse(await readFile(here('prometheus-rule.yaml'), 'utf8')) as { kind: string; spec: unknown };
  assert.equal(manifest.kind, 'PrometheusRule');
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'from-manifest.yaml'), stringify(manifest.spec));
    assert.match(await promtool('check', 'rules', join(dir, 'from-manifest.yaml')), /SUCCESS/);
  });
});

test('promtool rule unit tests pass, and they exercise every alert of the source', async () => {
  const testFile = here('alerts.promtool-test.yaml');
  assert.match(await promtool('test', 'rules', testFile), /SUCCESS/);
  const spec = parse(await readFile(testFile, 'utf8')) as {
    tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
  };
  const firing = new Set(
    spec.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
  );
  for (const rule of ALERT_RULES.rules)
    assert.ok(firing.has(rule.alert), `no promtool test shows ${rule.alert} firing`);
});

test('every dashboard query parses as PromQL', async () => {
  // promtool has no "check expression"; a recording rule per query gets the same parser.
  const rules = allExpressions().map((expr, i) => ({
    record: `check:expr_${i}`,
    expr: expr.replaceAll('$job', '.*').replaceAll('$namespace', '.*'),
  }));
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'exprs.yaml'), stringify({ groups: [{ name: 'exprs', rules }] }));
    assert.match(
      await promtool('check', 'rules', join(dir, 'exprs.yaml')),
      new RegExp(`SUCCESS: ${rules.length} rules found`),
    );
  });
});

/** Every `name: '…'` a .ts file under src/ registers (non-test files). */
async function registeredMetricNames(): Promise<Set<string>> {
  const names = new Set<string>();
  const src = here('../src/');
  for (const file of await readdir(src, { recursive: true })) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const text = await readFile(join(src, file), 'utf8');
    for (const m of text.matchAll(/name: '([a-z_]+)'/g)) names.add(m[1]!);
  }
  return names;
}

test('every metric the rules and the dashboard query is one the runtime registers (a renamed metric fails here)', async () => {
  const registered = await registeredMetricNames();
  const records = new Set(RECORDING_RULES.rules.map((r) => r.record));
  const used = new Set<string>();
  for (const expr of allExpressions()) {
    for (const m of expr.matchAll(/\boperator_runtime:[a-z0-9_:]+/g))
      assert.ok(records.has(m[0]), `${m[0]} is not a recording rule of the source`);
    const raw = expr.replaceAll(/\boperator_runtime:[a-z0-9_:]+/g, '');
    for (const m of raw.matchAll(/\b(?:controller_runtime|workqueue|cache|leader_election|rest_client)_[a-z_]+\b/g))
      used.add(m[0].replace(/_(bucket|sum|count)$/, ''));
  }
  assert.ok(used.size >= 15, `found only ${used.size} metric names: the pattern broke`);
  for (const name of used) assert.ok(registered.has(name), `${name} is queried but nothing in src/ registers it`);
});

test('the dashboard has unique panel ids, a datasource on every query and a panel for every recording rule', () => {
  const dashboard = JSON.parse(renderDashboard()) as {
    panels: { id: number; type: string; targets?: { expr: string; refId: string; datasource: { uid: string } }[] }[];
  };
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  const targets = dashboard.panels.flatMap((p) => p.targets ?? []);
  assert.ok(targets.every((t) => t.datasource.uid === '${datasource}' && /^[A-Z]$/.test(t.refId)));
  for (const r of RECORDING_RULES.rules) {
    if (r.record.endsWith(':rate5m') && r.record.includes('errors')) continue; // shown through the error ratio
    assert.ok(
      targets.some((t) => t.expr.includes(r.record)),
      `no panel shows ${r.record}`,
    );
  }
});
