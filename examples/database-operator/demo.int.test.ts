import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('the demo (--once) converges every step and exits 0', { timeout: 240_000 }, async () => {
  const demo = fileURLToPath(new URL('./demo.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', demo, '--once'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'error' },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  assert.equal(code, 0, out.slice(-3000));
  for (const step of [
    'every Database is Ready',
    'sessions has 3 ready replicas',
    'analytics is gone after its backup',
    'demo converged',
  ]) {
    assert.match(out, new RegExp(`✔ ${step}`));
  }
  assert.match(out, /replica-[ab] \(leader\)/);
  assert.match(out, /backup service: 1 backup\(s\), 1 completed/);
});
