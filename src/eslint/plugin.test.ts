/**
 * The plugin object as flat config takes it: its configs carry it under its namespace, every rule is
 * in both configs, every rule's docs URL names a section docs/lint.md has, and its version is the package's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import plugin, { PLUGIN_NAMESPACE } from './index.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
const lintDoc = readFileSync(join(REPO_ROOT, 'docs/lint.md'), 'utf8');

test("the plugin's version is the package's", () => {
  assert.equal(plugin.meta.version, pkg.version);
});

test('both configs register the plugin itself under its namespace and turn on every rule', () => {
  const names = Object.keys(plugin.rules).map((r) => `${PLUGIN_NAMESPACE}/${r}`);
  for (const config of [plugin.configs.recommended, plugin.configs.strict]) {
    assert.equal(config.plugins?.[PLUGIN_NAMESPACE], plugin);
    assert.deepEqual(Object.keys(config.rules ?? {}).sort(), [...names].sort());
  }
  assert.ok(Object.values(plugin.configs.strict.rules ?? {}).every((s) => s === 'error'));
});

test("every rule's docs URL is a section of the docs/lint.md the package ships", () => {
  for (const [name, rule] of Object.entries(plugin.rules)) {
    const url = new URL(rule.meta.docs?.url ?? '');
    assert.equal(fileURLToPath(url), join(REPO_ROOT, 'docs/lint.md'), name);
    assert.equal(url.hash, `#${name}`);
    assert.match(lintDoc, new RegExp(`^## \`${name}\`$`, 'm'), `docs/lint.md has a "## \`${name}\`" heading`);
    assert.ok(rule.meta.docs?.description, `${name} has a description`);
  }
});
