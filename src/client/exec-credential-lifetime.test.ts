/**
 * Issue 24 item 11: the exec plugin was started detached and outlived the operator, after kill -9
 * and after a clean abort followed by process.exit. Real processes throughout: an "operator" child
 * process runs an ExecCredentialPlugin whose plugin spawns a sleeper and then hangs; the test then
 * ends the operator and checks that neither the plugin nor its sleeper is left.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExecCredentialPlugin } from './exec-credential.js';
import { CredentialError } from './credentials.js';
import { makeTlsConfig } from './tls-config.js';
import { Transport } from './transport.js';

let dir: string;
let plugin: string;

// Starts a sleeper (its own child, same process group), writes both pids, and never answers.
const PLUGIN = `#!/usr/bin/env node
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
fs.writeFileSync(process.env.PIDS_FILE + '.tmp', JSON.stringify({ plugin: process.pid, sleeper: sleeper.pid }));
fs.renameSync(process.env.PIDS_FILE + '.tmp', process.env.PIDS_FILE);
setTimeout(() => {}, 120000);
`;

const OPERATOR = fileURLToPath(new URL('./testing/exec-plugin-operator.ts', import.meta.url));

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'exec-life-'));
  plugin = path.join(dir, 'plugin.js');
  await writeFile(plugin, PLUGIN);
  await chmod(plugin, 0o755);
});

/** Alive and not a zombie (PID 1 here may not reap orphans). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return !existsSync('/proc/self');
  }
}

async function waitFor(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function pidsOf(file: string): Promise<{ plugin: number; sleeper: number }> {
  await waitFor(() => existsSync(file), 'the plugin to start its sleeper');
  return JSON.parse(await readFile(file, 'utf8')) as { plugin: number; sleeper: number };
}

function killBoth(pids: { plugin: number; sleeper: number }): void {
  for (const pid of [pids.plugin, pids.sleeper]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Starts the operator child; `mode` says how it ends after the plugin started. */
function operator(mode: 'wait' | 'exit', pidsFile: string) {
  return spawn(process.execPath, ['--import', 'tsx', OPERATOR, plugin, mode], {
    env: { ...process.env, PIDS_FILE: pidsFile },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

test(
  'regression: after the operator is killed with SIGKILL, the plugin and the process it started are gone',
  { timeout: 60_000 },
  async () => {
    const pidsFile = path.join(dir, 'kill9.json');
    const op = operator('wait', pidsFile);
    const exited = new Promise((r) => op.once('exit', r));
    const pids = await pidsOf(pidsFile);
    try {
      assert.ok(alive(pids.plugin) && alive(pids.sleeper), 'the plugin tree runs');
      op.kill('SIGKILL');
      await exited;
      await waitFor(
        () => !alive(pids.plugin) && !alive(pids.sleeper),
        'the plugin tree to die after kill -9 of the operator',
      );
    } finally {
      killBoth(pids);
    }
  },
);

test('regression: a clean abort followed by process.exit leaves no plugin behind', { timeout: 60_000 }, async () => {
  const pidsFile = path.join(dir, 'exit.json');
  const op = operator('exit', pidsFile);
  const code = new Promise<number | null>((r) => op.once('exit', (c) => r(c)));
  const pids = await pidsOf(pidsFile);
  try {
    assert.equal(await code, 0);
    // The exit hook kills synchronously, before the operator is gone.
    await waitFor(() => !alive(pids.plugin) && !alive(pids.sleeper), 'the plugin tree to die with process.exit', 3_000);
  } finally {
    killBoth(pids);
  }
});

test(
  "close() kills the running plugin's process group and fails its waiters with a CredentialError",
  { timeout: 60_000 },
  async () => {
    const pidsFile = path.join(dir, 'close.json');
    const cred = new ExecCredentialPlugin(
      { command: plugin, apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never' },
      { env: { ...process.env, PIDS_FILE: pidsFile } },
    );
    const pending = cred.get();
    const pids = await pidsOf(pidsFile);
    try {
      cred.close();
      await assert.rejects(pending, (err: unknown) => err instanceof CredentialError && /closed/.test(err.message));
      await waitFor(() => !alive(pids.plugin) && !alive(pids.sleeper), 'the plugin tree to die on close()', 3_000);
    } finally {
      killBoth(pids);
    }
  },
);

test("closing the transport stops its credential (so the client's close stops a running plugin)", async () => {
  let closed = 0;
  const credential = {
    kind: 'exec',
    get: () => Promise.resolve({}),
    invalidate: () => false,
    close: () => void closed++,
  };
  const t = new Transport({
    server: 'https://127.0.0.1:1',
    tls: makeTlsConfig({ rejectUnauthorized: true }),
    credential,
    namespace: 'default',
  });
  await t.close();
  assert.equal(closed, 1);
});
