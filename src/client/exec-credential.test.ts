import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, chmod, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { FakeClock } from '../core/fake-clock.js';
import { InvalidOptionError } from '../core/errors.js';
import { CredentialError } from './credentials.js';
import { ExecCredentialPlugin, type ExecConfig } from './exec-credential.js';
import { resolveKubeconfig } from './kubeconfig.js';

let dir: string;
let plugin: string;

// The plugin counts its runs in a file, echoes what it was given into another, and answers with
// the token, expiry and apiVersion its environment asks for.
const PLUGIN = `#!/usr/bin/env node
const fs = require('node:fs');
const dir = process.env.PLUGIN_DIR;
const countFile = dir + '/count';
const n = (fs.existsSync(countFile) ? Number(fs.readFileSync(countFile, 'utf8')) : 0) + 1;
fs.writeFileSync(countFile, String(n));
fs.writeFileSync(dir + '/seen.json', JSON.stringify({ info: JSON.parse(process.env.KUBERNETES_EXEC_INFO), args: process.argv.slice(2), extra: process.env.EXTRA }));
if (process.env.FAIL) { process.stderr.write('stderr-SECRET'); process.stdout.write('stdout-SECRET'); process.exit(3); }
const status = {};
if (process.env.MODE !== 'cert') status.token = 'tok-' + n;
if (process.env.MODE === 'cert') { status.clientCertificateData = 'CERT'; status.clientKeyData = 'KEY-SECRET'; }
if (process.env.EXPIRES) status.expirationTimestamp = process.env.EXPIRES;
process.stdout.write(JSON.stringify({ apiVersion: process.env.ANSWER_VERSION || 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'exec-'));
  plugin = path.join(dir, 'plugin.js');
  await writeFile(plugin, PLUGIN);
  await chmod(plugin, 0o755);
});

async function freshDir(): Promise<string> {
  return mkdtemp(path.join(dir, 'run-'));
}

function config(over: Partial<ExecConfig> = {}): ExecConfig {
  return {
    command: plugin,
    args: ['--flag'],
    apiVersion: 'client.authentication.k8s.io/v1',
    interactiveMode: 'Never',
    ...over,
  };
}

test('the plugin token is used and cached until its expirationTimestamp, then the plugin runs again', async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const d = await freshDir();
  const cred = new ExecCredentialPlugin(config(), {
    clock,
    env: { ...process.env, PLUGIN_DIR: d, EXPIRES: '2026-01-01T00:10:00Z' },
  });
  assert.deepEqual(await cred.get(), { authorization: 'Bearer tok-1' });
  clock.step(9 * 60_000);
  assert.deepEqual(await cred.get(), { authorization: 'Bearer tok-1' });
  assert.equal(cred.runs, 1);
  clock.step(60_000);
  assert.deepEqual(await cred.get(), { authorization: 'Bearer tok-2' });
  assert.equal(cred.runs, 2);
});

test('after a 401 the plugin runs again even before expiry', async () => {
  const d = await freshDir();
  const cred = new ExecCredentialPlugin(config(), { clock: new FakeClock(), env: { ...process.env, PLUGIN_DIR: d } });
  assert.deepEqual(await cred.get(), { authorization: 'Bearer tok-1' });
  assert.equal(cred.invalidate(), true);
  assert.deepEqual(await cred.get(), { authorization: 'Bearer tok-2' });
});

test('concurrent requests share one plugin run', async () => {
  const d = await freshDir();
  const cred = new ExecCredentialPlugin(config(), { env: { ...process.env, PLUGIN_DIR: d } });
  const values = await Promise.all([cred.get(), cred.get(), cred.get()]);
  assert.equal(cred.runs, 1);
  assert.deepEqual(
    values.map((v) => v.authorization),
    ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1'],
  );
});

test('the plugin gets args, env entries and KUBERNETES_EXEC_INFO, with cluster info only when asked', async () => {
  const d = await freshDir();
  const cred = new ExecCredentialPlugin(
    config({
      env: [{ name: 'EXTRA', value: 'x1' }],
      provideClusterInfo: true,
      apiVersion: 'client.authentication.k8s.io/v1beta1',
    }),
    {
      env: { ...process.env, PLUGIN_DIR: d, ANSWER_VERSION: 'client.authentication.k8s.io/v1beta1' },
      cluster: { server: 'https://h:1', 'certificate-authority-data': 'PEM' },
    },
  );
  await cred.get();
  const seen = JSON.parse(await readFile(path.join(d, 'seen.json'), 'utf8')) as {
    info: { apiVersion: string; spec: { interactive: boolean; cluster?: Record<string, string> } };
    args: string[];
    extra: string;
  };
  assert.deepEqual(seen.args, ['--flag']);
  assert.equal(seen.extra, 'x1');
  assert.equal(seen.info.apiVersion, 'client.authentication.k8s.io/v1beta1');
  assert.equal(seen.info.spec.interactive, false);
  assert.deepEqual(seen.info.spec.cluster, {
    server: 'https://h:1',
    'certificate-authority-data': Buffer.from('PEM').toString('base64'),
  });
});

test('a plugin may return a client certificate instead of a token; its key stays hidden', async () => {
  const d = await freshDir();
  const cred = new ExecCredentialPlugin(config(), { env: { ...process.env, PLUGIN_DIR: d, MODE: 'cert' } });
  const v = await cred.get();
  assert.equal(v.authorization, undefined);
  assert.equal(v.clientCert?.cert, 'CERT');
  assert.equal(v.clientCert?.key, 'KEY-SECRET');
  assert.ok(!inspect(v, { depth: 5 }).includes('KEY-SECRET'));
  assert.ok(!JSON.stringify(v).includes('KEY-SECRET'));
});

test('a failing plugin gives a CredentialError with its exit code and none of its output', async () => {
  const d = await freshDir();
  const cred = new ExecCredentialPlugin(config(), { env: { ...process.env, PLUGIN_DIR: d, FAIL: '1' } });
  await assert.rejects(cred.get(), (e: unknown) => {
    assert.ok(e instanceof CredentialError);
    assert.match(e.message, /exit code 3/);
    assert.ok(!inspect(e, { depth: 10 }).includes('SECRET'), 'neither stdout nor stderr leak');
    return true;
  });
});

test('a missing plugin names its install hint; a mismatched apiVersion is rejected', async () => {
  const missing = new ExecCredentialPlugin(config({ command: path.join(dir, 'nope'), installHint: 'install nope' }));
  await assert.rejects(missing.get(), /not found: install nope/);
  const d = await freshDir();
  const wrong = new ExecCredentialPlugin(config(), {
    env: { ...process.env, PLUGIN_DIR: d, ANSWER_VERSION: 'client.authentication.k8s.io/v1beta1' },
  });
  await assert.rejects(wrong.get(), /expected "client.authentication.k8s.io\/v1"/);
});

test('unsupported apiVersions and interactiveMode Always are rejected up front', () => {
  assert.throws(
    () => new ExecCredentialPlugin(config({ apiVersion: 'client.authentication.k8s.io/v1alpha1' })),
    CredentialError,
  );
  assert.throws(() => new ExecCredentialPlugin(config({ interactiveMode: 'Always' })), CredentialError);
});

test('a kubeconfig exec user resolves to the plugin, and the config prints without the token', async () => {
  const d = await freshDir();
  const cfg = await resolveKubeconfig(
    {
      'current-context': 'c',
      clusters: [{ name: 'k', cluster: { server: 'https://h:1' } }],
      users: [{ name: 'u', user: { exec: config() } }],
      contexts: [{ name: 'c', context: { cluster: 'k', user: 'u' } }],
    },
    { env: { ...process.env, PLUGIN_DIR: d } },
  );
  assert.equal(cfg.credential.kind, 'exec');
  assert.deepEqual(await cfg.credential.get(), { authorization: 'Bearer tok-1' });
  assert.ok(!inspect(cfg, { depth: 10 }).includes('tok-1'));
});

test('a caller giving up stops waiting without killing the plugin run others share', async () => {
  const d = await freshDir();
  const cred = new ExecCredentialPlugin(config(), { env: { ...process.env, PLUGIN_DIR: d } });
  const ac = new AbortController();
  const impatient = cred.get(ac.signal);
  const patient = cred.get();
  ac.abort();
  await assert.rejects(impatient, (e: unknown) => (e as { code?: string }).code === 'ERR_ABORTED');
  assert.deepEqual(await patient, { authorization: 'Bearer tok-1' });
  assert.equal(cred.runs, 1);
});

// Issue 18, item 2: a plugin that ignores SIGTERM, or leaves a child holding its stdout, must not
// wedge the client. These run real shell plugins, so they measure real time (no fake clock here).

const ANSWER = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-sh"}}`;

async function shellPlugin(d: string, body: string): Promise<string> {
  const file = path.join(d, 'plugin.sh');
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

/** Polls until `pid` is gone (reaped or never ours): a real process, so there is no clock to step. */
async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

test(
  'a plugin that ignores SIGTERM is SIGKILLed with its process group after the grace period, and a later request runs it again',
  { timeout: 30_000 },
  async () => {
    const d = await freshDir();
    // First run: record our pid and the pid of a child in our group, ignore TERM, loop forever.
    // Second run: answer.
    const command = await shellPlugin(
      d,
      `if [ -e "${d}/ran" ]; then echo '${ANSWER}'; exit 0; fi
touch "${d}/ran"
echo $$ > "${d}/pid"
trap '' TERM
sleep 600 &
echo $! > "${d}/child"
while true; do sleep 1; done`,
    );
    const timeoutMs = 400;
    const graceMs = 300;
    const cred = new ExecCredentialPlugin(config({ command, args: [] }), { timeoutMs, graceMs });
    const start = performance.now();
    let pids: number[] = [];
    try {
      await assert.rejects(cred.get(), (e: unknown) => e instanceof CredentialError && /timed out/.test(e.message));
      const elapsed = performance.now() - start;
      pids = [
        Number(await readFile(path.join(d, 'pid'), 'utf8')),
        Number(await readFile(path.join(d, 'child'), 'utf8')),
      ];
      console.log(`# hung plugin settled after ${elapsed.toFixed(0)} ms (timeoutMs ${timeoutMs} + graceMs ${graceMs})`);
      assert.ok(elapsed >= timeoutMs + graceMs - 5, `not before timeout + grace: ${elapsed}`);
      // Slack for a loaded 2-core machine; before the fix this never settled at all.
      assert.ok(elapsed < timeoutMs + graceMs + 3000, `bounded by timeout + grace: ${elapsed}`);
      for (const pid of pids) assert.ok(await gone(pid, 5000), `process ${pid} of the plugin's group was killed`);
      assert.deepEqual(
        await cred.get(),
        { authorization: 'Bearer tok-sh' },
        'the shared run was cleared: the plugin runs again',
      );
      assert.equal(cred.runs, 2);
    } finally {
      for (const pid of pids) killQuietly(pid);
    }
  },
);

test(
  'a plugin that exits on SIGTERM settles at the timeout, without waiting out the grace period',
  { timeout: 30_000 },
  async () => {
    const d = await freshDir();
    const command = await shellPlugin(d, 'exec sleep 600');
    const cred = new ExecCredentialPlugin(config({ command, args: [] }), { timeoutMs: 300, graceMs: 10_000 });
    const start = performance.now();
    await assert.rejects(cred.get(), (e: unknown) => e instanceof CredentialError && /timed out/.test(e.message));
    assert.ok(performance.now() - start < 5000, 'well before the 10 s grace');
  },
);

test("a grandchild holding the plugin's stdout does not delay the credential", { timeout: 60_000 }, async () => {
  const d = await freshDir();
  const command = await shellPlugin(d, `sleep 30 &\necho $! > "${d}/child"\necho '${ANSWER}'\nexit 0`);
  const cred = new ExecCredentialPlugin(config({ command, args: [] }));
  const start = performance.now();
  try {
    assert.deepEqual(await cred.get(), { authorization: 'Bearer tok-sh' });
    const elapsed = performance.now() - start;
    console.log(`# plugin with a grandchild holding stdout answered after ${elapsed.toFixed(0)} ms`);
    // The grandchild lives 30 s; before the fix the answer waited for it.
    assert.ok(elapsed < 5000, `answered on the plugin's own exit: ${elapsed}`);
  } finally {
    killQuietly(Number(await readFile(path.join(d, 'child'), 'utf8')));
  }
});

test('a plugin printing more than the output limit is killed and refused', { timeout: 30_000 }, async () => {
  const d = await freshDir();
  const command = await shellPlugin(d, 'exec yes SECRET-LINE');
  const cred = new ExecCredentialPlugin(config({ command, args: [] }), { timeoutMs: 20_000 });
  await assert.rejects(
    cred.get(),
    (e: unknown) => e instanceof CredentialError && /output/.test(e.message) && !e.message.includes('SECRET'),
  );
});

test('a timeout, grace or drain that is not a non-negative finite number is refused up front', () => {
  for (const bad of [{ timeoutMs: -1 }, { graceMs: Number.NaN }, { drainMs: Number.POSITIVE_INFINITY }]) {
    assert.throws(
      () => new ExecCredentialPlugin(config(), bad),
      (e: unknown) => e instanceof InvalidOptionError,
    );
  }
});

test('an ExecCredential whose status fields have the wrong types is refused, naming the field and not the value', async () => {
  const d = await freshDir();
  const answers: [string, string][] = [
    ['{"token":12345}', 'status.token'],
    ['{"token":"t","expirationTimestamp":1700000000}', 'status.expirationTimestamp'],
    ['{"clientCertificateData":"C","clientKeyData":{"k":"KEY-SECRET"}}', 'status.clientKeyData'],
    ['"KEY-SECRET"', 'status'],
  ];
  for (const [status, field] of answers) {
    const command = await shellPlugin(
      d,
      `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":${status}}'`,
    );
    const cred = new ExecCredentialPlugin(config({ command, args: [] }));
    await assert.rejects(
      cred.get(),
      (e: unknown) =>
        e instanceof CredentialError &&
        e.message.includes(field) &&
        !e.message.includes('SECRET') &&
        !e.message.includes('12345'),
    );
  }
});
