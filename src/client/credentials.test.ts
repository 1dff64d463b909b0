import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { execFileSync } from 'node:child_process';
import { FakeClock } from '../core/fake-clock.js';
import { CredentialError, StaticTokenCredential, TokenFileCredential, BasicAuthCredential } from './credentials.js';

async function tokenFile(content: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'tok-'));
  const file = path.join(dir, 'token');
  await writeFile(file, content);
  return file;
}

test('a rotated token file is picked up after the refresh interval, not before', async () => {
  const clock = new FakeClock();
  const file = await tokenFile('first\n');
  const cred = new TokenFileCredential(file, { clock, refreshMs: 60_000 });
  assert.deepEqual(await cred.get(), { authorization: 'Bearer first' });
  await writeFile(file, 'second');
  clock.step(59_999);
  assert.deepEqual(await cred.get(), { authorization: 'Bearer first' }, 'still cached');
  clock.step(1);
  assert.deepEqual(await cred.get(), { authorization: 'Bearer second' });
});

test('after a 401 the token file is re-read at once', async () => {
  const clock = new FakeClock();
  const file = await tokenFile('old');
  const cred = new TokenFileCredential(file, { clock });
  await cred.get();
  await writeFile(file, 'new');
  assert.equal(cred.invalidate(), true, 'a retry is worth it');
  assert.deepEqual(await cred.get(), { authorization: 'Bearer new' });
});

test('a token file briefly missing mid-rotation keeps the last good token; missing from the start is a CredentialError', async () => {
  const clock = new FakeClock();
  const file = await tokenFile('good');
  const cred = new TokenFileCredential(file, { clock });
  await cred.get();
  await rm(file);
  clock.step(120_000);
  assert.deepEqual(await cred.get(), { authorization: 'Bearer good' });
  await assert.rejects(
    new TokenFileCredential(file, { clock }).get(),
    (e: unknown) => e instanceof CredentialError && e.code === 'ERR_CREDENTIAL',
  );
});

test('concurrent reads at refresh time share one file read', async () => {
  const clock = new FakeClock();
  const file = await tokenFile('t');
  const cred = new TokenFileCredential(file, { clock });
  const [a, b] = [cred.get(), cred.get()];
  assert.equal(a, b);
  await a;
});

test('static credentials print as redacted and are not worth a retry after a 401', () => {
  for (const cred of [new StaticTokenCredential('tok-SECRET'), new BasicAuthCredential('u', 'pw-SECRET')]) {
    assert.ok(!inspect(cred, { showHidden: true, depth: 5 }).includes('SECRET'));
    assert.ok(!JSON.stringify(cred).includes('SECRET'));
    assert.equal(cred.invalidate(), false);
  }
});

test(
  'a token file that is a FIFO or a device is a CredentialError at once, not a hang or an endless read',
  { timeout: 20_000 },
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'tok-'));
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const file of [fifo, '/dev/zero']) {
      await assert.rejects(
        new TokenFileCredential(file, { clock: new FakeClock() }).get(),
        (e: unknown) => e instanceof CredentialError && /not a regular file/.test(e.message),
      );
    }
  },
);
