import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BinariesNotFoundError, defaultModernAssetsDir, resolveModernBinaries } from './binaries.js';

async function withCache(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'modern-binaries-'));
  try {
    await fn(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function fakeBuild(root: string, version: string): Promise<string> {
  const bin = join(root, 'modern-apiserver', version, 'bin');
  await mkdir(bin, { recursive: true });
  for (const name of ['apiextensions-apiserver', 'etcd']) {
    await writeFile(join(bin, name), '#!/bin/sh\n');
    await chmod(join(bin, name), 0o755);
  }
  return bin;
}

test('without binaries, resolveModernBinaries fails saying why — with the installer failure scripts/test.sh recorded', async () => {
  await withCache(async (root) => {
    const env = {
      OPERATOR_RUNTIME_CACHE_DIR: root,
      OPERATOR_RUNTIME_MODERN_UNAVAILABLE: 'go build failed (full log: .tmp/install-modern-apiserver.log)',
    };
    assert.throws(
      () => resolveModernBinaries(env),
      (e: unknown) => {
        assert.ok(e instanceof BinariesNotFoundError);
        assert.match(
          e.message,
          /The installer failed: go build failed \(full log: \.tmp\/install-modern-apiserver\.log\)/,
        );
        assert.match(e.message, /scripts\/install-modern-apiserver\.sh/);
        return true;
      },
    );
  });
});

test('the installer cache: the newest complete version wins; OPERATOR_RUNTIME_MODERN_ASSETS overrides it', async () => {
  await withCache(async (root) => {
    await fakeBuild(root, 'v1.9.0');
    const newest = await fakeBuild(root, 'v1.36.4');
    await mkdir(join(root, 'modern-apiserver', 'v1.40.0', 'bin'), { recursive: true }); // incomplete: no binaries
    assert.equal(defaultModernAssetsDir({ OPERATOR_RUNTIME_CACHE_DIR: root }), newest);
    assert.equal(
      resolveModernBinaries({ OPERATOR_RUNTIME_CACHE_DIR: root }).apiextensionsApiserver,
      join(newest, 'apiextensions-apiserver'),
    );
    const own = await fakeBuild(root, 'mine');
    assert.equal(
      resolveModernBinaries({ OPERATOR_RUNTIME_CACHE_DIR: root, OPERATOR_RUNTIME_MODERN_ASSETS: own }).etcd,
      join(own, 'etcd'),
    );
  });
});
