import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ManagedProcess } from './managed-process.js';

// Real processes, no control plane: the pipes of a child can deliver output after its exit event.
test('output a component writes after its exit reaches the log, and stopping then is no write after end', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'managed-process-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const logFile = path.join(dir, 'component.log');
  const errors: unknown[] = [];
  const onUncaught = (err: unknown): void => void errors.push(err);
  process.on('uncaughtException', onUncaught);
  t.after(() => process.off('uncaughtException', onUncaught));

  // The shell exits at once; the subshell it leaves behind holds stdout and writes a moment later.
  const p = new ManagedProcess({
    name: 'late-writer',
    command: '/bin/sh',
    args: ['-c', 'echo early; (sleep 0.3; echo late) & exit 0'],
    logFile,
  });
  p.start();
  await p.waitForExit();
  await p.stop();

  assert.deepEqual(errors, []);
  assert.match(readFileSync(logFile, 'utf8'), /early\nlate\n/);
});
