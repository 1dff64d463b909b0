import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClient } from '../testing/fake-client/fake-client.js';
import { FakeClock } from '../core/fake-clock.js';
import { Manager } from './manager.js';
import { ControllerManager } from './controller-manager.js';

const SRC = join(import.meta.dirname, '..');
/** What makes a cluster's triple: the informer factory, a cache over it, the delegating client. */
const TRIPLE = /new InformerFactory\(|new InformerCache\(|createDelegatingClient\(|new DelegatingClient\(/;

/** Library code under src/: no tests, no test support. */
function libraryFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'testing' || e.name === 'test-support' ? [] : libraryFiles(path);
    return e.name.endsWith('.ts') && !/\.(test|bench|test-support)\.ts$/.test(e.name) ? [path] : [];
  });
}

test('Manager construction builds no informer factory, cache or client itself: only Cluster builds the triple', () => {
  const builders = libraryFiles(SRC)
    .filter((file) => TRIPLE.test(readFileSync(file, 'utf8')))
    .map((file) => relative(SRC, file))
    // The delegating client's own module declares the function the cluster calls.
    .filter((file) => file !== join('cache', 'delegating-client.ts'));
  assert.deepEqual(builders, [join('cluster', 'cluster.ts')]);
  for (const file of libraryFiles(join(SRC, 'manager')))
    assert.doesNotMatch(readFileSync(file, 'utf8'), TRIPLE, `${relative(SRC, file)} builds part of a cluster`);
});

test('`new Manager(options)` builds the implementation behind the interface, and `instanceof Manager` still holds', () => {
  const manager = new Manager({ client: new FakeClient(), clock: new FakeClock(0) });
  assert.ok(manager instanceof ControllerManager);
  assert.ok(manager instanceof Manager);
  // The interface's cluster parts are the host cluster's: the client reads through that cache.
  assert.equal(typeof manager.cache.get, 'function');
  assert.equal(manager.informers.list().length, 0, 'no informer before a kind is read or watched');
});
