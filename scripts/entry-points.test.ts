/**
 * package.json `exports` is the one list of entry points; README and src/index.ts's doc comment
 * repeat it for readers, so they are compared with it here. The quickstart demo's header names
 * the command that runs it, which must still run that file.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from './doc-samples.js';

const read = (file: string): string => readFileSync(join(REPO_ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { exports: Record<string, unknown>; scripts: Record<string, string> };

/** package.json's entry points as export subpaths (the root is '.'), leaving out the entry of package.json itself. */
const exported = Object.keys(pkg.exports).filter((k) => k !== './package.json');

/** Backticked entry names in `text` (`operator-runtime`, `operator-runtime/x`, `/x`) as export subpaths. */
function entryNames(text: string): string[] {
  return [...text.matchAll(/`(operator-runtime(?:\/[\w/-]+)?|\/[\w-]+(?:\/[\w-]+)*)`/g)].map((m) => {
    const name = m[1]!.replace(/^operator-runtime/, '');
    return name === '' ? '.' : `.${name}`;
  });
}

/** What a listed set lacks and adds compared with `exports`, and what it lists twice. */
function compare(listed: readonly string[]): { missing: string[]; extra: string[]; repeated: string[] } {
  return {
    missing: exported.filter((e) => !listed.includes(e)),
    extra: listed.filter((l) => !exported.includes(l)),
    repeated: listed.filter((l, i) => listed.indexOf(l) !== i),
  };
}

const none = { missing: [], extra: [], repeated: [] };

test('README lists exactly the entry points package.json exports', () => {
  const readme = read('README.md');
  const at = readme.indexOf('The entry points are defined once');
  assert.ok(at >= 0, 'README has the sentence listing the entry points');
  const sentence = readme.slice(at, readme.indexOf('What each exports', at));
  assert.deepEqual(compare(entryNames(sentence)), none);
});

test("src/index.ts's doc comment lists every other entry point package.json exports", () => {
  const header = /^\/\*\*[\s\S]*?\*\//.exec(read('src/index.ts'))?.[0] ?? '';
  assert.deepEqual(compare(['.', ...entryNames(header)]), none);
});

test('the entry names are read from both spellings, so a missing one is named', () => {
  assert.deepEqual(
    entryNames('the root `operator-runtime`, `operator-runtime/client`, `/cache` and `/testing/chaos`; not `x`'),
    ['.', './client', './cache', './testing/chaos'],
  );
  assert.deepEqual(compare(['.', './client', './nowhere']).extra, ['./nowhere']);
  assert.ok(compare(['.']).missing.includes('./codegen'));
});

test("the quickstart demo's header names a command that runs it", () => {
  const demo = 'examples/quickstart/demo.ts';
  const header = /^\/\*\*[\s\S]*?\*\//.exec(read(demo))?.[0].replace(/\n \* ?/g, ' ') ?? '';
  const command = /`((?:npm run|node) [^`]+)`/.exec(header)?.[1];
  assert.ok(command, `${demo}'s header names an npm script or a node command`);
  const npmScript = /^npm run (\S+)/.exec(command)?.[1];
  if (npmScript !== undefined) {
    const script = pkg.scripts[npmScript];
    assert.ok(script, `package.json has a "${npmScript}" script`);
    // The script runs the demo itself, or a shell script that does.
    const shell = /^(\S+\.sh)\b/.exec(script)?.[1];
    const body = shell && existsSync(join(REPO_ROOT, shell)) ? read(shell) : script;
    assert.match(body, new RegExp(demo.replaceAll('.', '\\.')), `npm run ${npmScript} runs ${demo}`);
  } else {
    const file = command.split(/\s+/).find((arg) => arg.endsWith('.ts'));
    assert.equal(file, demo, `\`${command}\` runs ${demo}`);
    assert.ok(existsSync(join(REPO_ROOT, file)));
  }
});
