/**
 * The directory provider on the real file system (a temporary folder per test, removed after it)
 * with the fake clock driving the debounce and the rescan. File I/O takes real time, so tests wait
 * for the provider's "scanned" debug line rather than for the clock.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rename, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { FakeClock } from '../../core/fake-clock.js';
import { recordingLogger } from '../../logging/recording-logger.js';
import type { ClusterEvents, MemberCluster } from '../cluster-provider.js';
import { TOKEN, tokenKubeconfig } from '../testing/kubeconfig-fixtures.js';
import { kubeconfigRevision } from './kubeconfig-member.js';
import { kubeconfigDirectory, type KubeconfigDirectoryOptions } from './kubeconfig-directory.js';

const DEBOUNCE_MS = 500;
const RESCAN_MS = 30_000;
const KC_A = tokenKubeconfig('https://10.0.0.1:6443');
const KC_B = tokenKubeconfig('https://10.0.0.2:6443');
const KC_C = tokenKubeconfig('https://10.0.0.3:6443');
const rev = kubeconfigRevision;

type Event =
  { readonly type: 'engage'; readonly cluster: MemberCluster } | { readonly type: 'disengage'; readonly name: string };

/** Polls a condition that real file I/O makes true; fails after 5 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function setup(
  t: TestContext,
  files: Record<string, string> = {},
  options: Partial<KubeconfigDirectoryOptions> & { missing?: boolean } = {},
) {
  const root = await mkdtemp(path.join(tmpdir(), 'kubeconfig-directory-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const dir = path.join(root, 'clusters');
  if (!options.missing) await mkdir(dir);
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(dir, name), content);
  const clock = new FakeClock();
  const log = recordingLogger();
  const events: Event[] = [];
  const sink: ClusterEvents = {
    engage: (cluster) => events.push({ type: 'engage', cluster }),
    disengage: (name) => void events.push({ type: 'disengage', name }),
  };
  const provider = kubeconfigDirectory({
    path: dir,
    clock,
    logger: log,
    debounceMs: DEBOUNCE_MS,
    rescanPeriodMs: RESCAN_MS,
    ...options,
  });
  const stop = new AbortController();
  const run = provider.start(stop.signal, sink);
  t.after(async () => {
    stop.abort();
    await run;
  });
  const scans = (): number => log.entries.filter((e) => e.msg === 'kubeconfig folder scanned').length;
  await until('the first scan', () => scans() === 1);
  return {
    dir,
    clock,
    log,
    events,
    provider,
    summary: () =>
      events.map((e) =>
        e.type === 'engage' ? `engage ${e.cluster.name} ${e.cluster.revision}` : `disengage ${e.name}`,
      ),
    warnings: () =>
      log.entries.filter((e) => e.level === 'warn').map((e) => `${String(e.obj.file)}: ${String(e.obj.error)}`),
    scans,
    /** Fires the periodic rescan and waits for it to finish. */
    rescan: async (): Promise<void> => {
      const before = scans();
      await clock.advance(RESCAN_MS);
      await until('the rescan', () => scans() > before);
    },
    stop: async () => {
      stop.abort();
      await run;
    },
  };
}

test('every kubeconfig file in the folder engages a cluster named after the file, with the sha256 of its bytes', async (t) => {
  const d = await setup(t, { 'member-a.yaml': KC_A, 'member-b.kubeconfig': KC_B, 'member-c.yml': KC_C });
  assert.deepEqual(d.summary().sort(), [
    `engage member-a ${rev(KC_A)}`,
    `engage member-b ${rev(KC_B)}`,
    `engage member-c ${rev(KC_C)}`,
  ]);
  assert.deepEqual(d.warnings(), []);
});

test('labels given to the provider are every cluster’s labels', async (t) => {
  const d = await setup(t, { 'member-a.yaml': KC_A }, { labels: { source: 'files' } });
  assert.deepEqual((d.events[0] as Extract<Event, { type: 'engage' }> | undefined)?.cluster.labels, {
    source: 'files',
  });
});

test('a file added engages, changed engages again with the new revision, removed disengages (periodic rescan)', async (t) => {
  const d = await setup(t, {}, { rescanPeriodMs: RESCAN_MS });
  // fs.watch may start a scan of its own beside the periodic one: the first scan to finish after a
  // change can be one that read the folder before it, so wait for the event the change must cause.
  const eventCount = (n: number) => until(`${n} cluster events`, () => d.events.length >= n);
  await writeFile(path.join(d.dir, 'member-a.yaml'), KC_A);
  await d.rescan();
  await eventCount(1);
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
  await writeFile(path.join(d.dir, 'member-a.yaml'), KC_B);
  await d.rescan();
  await eventCount(2);
  assert.deepEqual(d.summary().slice(1), [`engage member-a ${rev(KC_B)}`]);
  await unlink(path.join(d.dir, 'member-a.yaml'));
  await d.rescan();
  await eventCount(3);
  assert.deepEqual(d.summary().slice(2), ['disengage member-a']);
});

test('a rescan that finds the same bytes (the file rewritten unchanged) engages nothing again', async (t) => {
  const d = await setup(t, { 'member-a.yaml': KC_A });
  await writeFile(path.join(d.dir, 'member-a.yaml'), KC_A);
  await d.rescan();
  await d.rescan();
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
});

test('fs.watch sees a new file; the scan waits for the debounce, on the clock', async (t) => {
  // A rescan period far away: only the watch can find the file.
  const d = await setup(t, {}, { rescanPeriodMs: 3_600_000 });
  assert.equal(d.clock.pendingTimers, 1, 'the rescan timer alone');
  await writeFile(path.join(d.dir, 'member-a.yaml'), KC_A);
  await until('the watch event arms the debounce', () => d.clock.pendingTimers === 2);
  assert.equal(d.clock.nextTimerInMs(), DEBOUNCE_MS);
  assert.equal(d.scans(), 1, 'no scan before the debounce has elapsed');
  await d.clock.advance(DEBOUNCE_MS - 1);
  assert.equal(d.scans(), 1);
  await d.clock.advance(1);
  await until('the debounced scan', () => d.scans() >= 2);
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
});

test('a Kubernetes Secret volume: file links into ..data, and an atomic swap of ..data changes, adds and removes clusters', async (t) => {
  const d = await setup(t, {}, { rescanPeriodMs: 3_600_000 });
  // The layout the kubelet's atomic writer makes: a timestamped folder, `..data` linking to it,
  // and one link per key through `..data`.
  const first = '..2026_12_02_14_00_00.000000001';
  await mkdir(path.join(d.dir, first));
  await writeFile(path.join(d.dir, first, 'member-a.yaml'), KC_A);
  await symlink(first, path.join(d.dir, '..data'));
  await symlink('..data/member-a.yaml', path.join(d.dir, 'member-a.yaml'));
  await until('the watch event', () => d.clock.pendingTimers === 2);
  await d.clock.advance(DEBOUNCE_MS);
  await until('the scan', () => d.scans() >= 2);
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);

  // Update: new folder, `..data_tmp` renamed over `..data`, a link for the new key, old folder gone.
  const swap = async (folder: string, files: Record<string, string>, links: { add?: string[]; remove?: string[] }) => {
    await mkdir(path.join(d.dir, folder));
    for (const [name, content] of Object.entries(files)) await writeFile(path.join(d.dir, folder, name), content);
    await symlink(folder, path.join(d.dir, '..data_tmp'));
    await rename(path.join(d.dir, '..data_tmp'), path.join(d.dir, '..data'));
    for (const name of links.add ?? []) await symlink(`..data/${name}`, path.join(d.dir, name));
    for (const name of links.remove ?? []) await unlink(path.join(d.dir, name));
  };
  const second = '..2026_12_02_14_05_00.000000002';
  await swap(second, { 'member-a.yaml': KC_B, 'member-b.yaml': KC_C }, { add: ['member-b.yaml'] });
  await rm(path.join(d.dir, first), { recursive: true });
  await until('the watch event of the swap', () => d.clock.pendingTimers === 2);
  await d.clock.advance(DEBOUNCE_MS);
  await until('the scan', () => d.scans() >= 3);
  assert.deepEqual(d.summary().slice(1).sort(), [`engage member-a ${rev(KC_B)}`, `engage member-b ${rev(KC_C)}`]);

  // The key member-a removed from the Secret.
  const third = '..2026_12_02_14_10_00.000000003';
  await swap(third, { 'member-b.yaml': KC_C }, { remove: ['member-a.yaml'] });
  await rm(path.join(d.dir, second), { recursive: true });
  await until('the watch event of the swap', () => d.clock.pendingTimers === 2);
  await d.clock.advance(DEBOUNCE_MS);
  await until('the scan', () => d.scans() >= 4);
  assert.deepEqual(d.summary().slice(3), ['disengage member-a']);
  assert.deepEqual(d.warnings(), []);
});

test('a link whose target vanished in a swap counts as no file: its cluster leaves, nothing is logged', async (t) => {
  const d = await setup(t, {});
  await mkdir(path.join(d.dir, '..old'));
  await writeFile(path.join(d.dir, '..old', 'member-a.yaml'), KC_A);
  await symlink('..old/member-a.yaml', path.join(d.dir, 'member-a.yaml'));
  await d.rescan();
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
  await rm(path.join(d.dir, '..old'), { recursive: true });
  await d.rescan();
  assert.deepEqual(d.summary().slice(1), ['disengage member-a']);
  assert.deepEqual(d.warnings(), []);
});

test('a file that does not parse is skipped and logged once by file name and kind of problem, never its content; fixed, it engages', async (t) => {
  const broken = `${KC_A}\n  - : [unbalanced ${TOKEN}`;
  const d = await setup(t, { 'broken.yaml': broken, 'member-a.yaml': KC_A });
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
  assert.deepEqual(d.warnings(), ['broken.yaml: cluster "broken": kubeconfig is not valid YAML (YAMLParseError)']);
  await d.rescan();
  assert.equal(d.warnings().length, 1, 'not logged again while unchanged');
  for (const e of d.log.entries)
    assert.ok(!JSON.stringify(e).includes(TOKEN), `a log line has the token: ${JSON.stringify(e)}`);
  await writeFile(path.join(d.dir, 'broken.yaml'), KC_B);
  await d.rescan();
  assert.deepEqual(d.summary().slice(1), [`engage broken ${rev(KC_B)}`]);
});

test('a file broken by a change keeps its cluster on the previous kubeconfig, and says so', async (t) => {
  const d = await setup(t, { 'member-a.yaml': KC_A });
  await writeFile(path.join(d.dir, 'member-a.yaml'), 'users: {}');
  await d.rescan();
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
  assert.deepEqual(d.warnings(), [
    'member-a.yaml: cluster "member-a": kubeconfig users must be a list of named entries; the cluster stays on its previous kubeconfig',
  ]);
});

test('hidden files, other endings and folders are not clusters; a bad name or a name given twice is logged', async (t) => {
  const d = await setup(t, {
    '.hidden.yaml': KC_A,
    'README.md': 'not a kubeconfig',
    'Upper_Case.yaml': KC_A,
    'dup.yaml': KC_A,
    'dup.kubeconfig': KC_B,
  });
  await mkdir(path.join(d.dir, 'folder.yaml'));
  await d.rescan();
  // `.kubeconfig` comes first in KUBECONFIG_FILE_EXTENSIONS.
  assert.deepEqual(d.summary(), [`engage dup ${rev(KC_B)}`]);
  assert.deepEqual(d.warnings().sort(), [
    'Upper_Case.yaml: cluster name "Upper_Case" is not a DNS label (a-z, 0-9 and \'-\', at most 63 characters)',
    'dup.yaml: cluster "dup" is already given by dup.kubeconfig; this file is not used while that one gives it',
    'folder.yaml: cannot read the file (not a regular file)',
  ]);
});

test('a file added under the name of an engaged cluster is refused, even with an extension that comes first: logged and counted once; it takes the name once the first goes', async (t) => {
  const registry = new Registry();
  const d = await setup(t, { 'prod.yaml': KC_A }, { registry });
  assert.deepEqual(d.summary(), [`engage prod ${rev(KC_A)}`]);
  // `.kubeconfig` comes before `.yaml`: before the fix this file took "prod" over.
  await writeFile(path.join(d.dir, 'prod.kubeconfig'), KC_B);
  await d.rescan();
  await d.rescan();
  assert.deepEqual(d.summary(), [`engage prod ${rev(KC_A)}`]);
  assert.deepEqual(d.warnings(), [
    'prod.kubeconfig: cluster "prod" is already given by prod.yaml; this file is not used while that one gives it',
  ]);
  assert.match(
    await registry.metrics(),
    /^fleet_provider_refused_total\{provider="kubeconfig-directory",reason="name_taken"\} 1$/m,
  );
  await unlink(path.join(d.dir, 'prod.yaml'));
  await d.rescan();
  // A scan the watch started may have listed prod.yaml before it went and read it after: it sees the
  // file gone and disengages first (seen once on Node 24 under load). Either way prod ends engaged
  // from the second file, and never again from the first.
  const after = d.summary().slice(1);
  assert.equal(after.at(-1), `engage prod ${rev(KC_B)}`, after.join('\n'));
  assert.ok(
    after.every((e) => e === 'disengage prod' || e === `engage prod ${rev(KC_B)}`),
    after.join('\n'),
  );
});

test('a folder missing at start is no error: its files engage once it appears', async (t) => {
  const d = await setup(t, {}, { missing: true });
  assert.deepEqual(d.summary(), []);
  await mkdir(d.dir);
  await writeFile(path.join(d.dir, 'member-a.yaml'), KC_A);
  await d.rescan();
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
  // The rescan also set up the watch that was missing: a second file is seen without one.
  await writeFile(path.join(d.dir, 'member-b.yaml'), KC_B);
  await until('the watch event', () => d.clock.pendingTimers === 2);
  await d.clock.advance(DEBOUNCE_MS);
  await until('the scan', () => d.summary().length === 2);
  assert.deepEqual(d.summary().slice(1), [`engage member-b ${rev(KC_B)}`]);
});

test('connect reads relative file paths against the folder', async (t) => {
  const d = await setup(t, {});
  await writeFile(path.join(d.dir, 'ca.crt'), 'not checked until a request');
  await writeFile(
    path.join(d.dir, 'member-a.yaml'),
    KC_A.replace('    insecure-skip-tls-verify: true', '    certificate-authority: ca.crt'),
  );
  await d.rescan();
  assert.equal(d.summary().length, 1, d.warnings().join('\n'));
  await unlink(path.join(d.dir, 'ca.crt'));
  const member = (d.events[0] as Extract<Event, { type: 'engage' }>).cluster;
  await assert.rejects(member.connect(new AbortController().signal), {
    name: 'ClusterKubeconfigError',
    message: `cluster "member-a": cannot read certificate-authority file ${path.join(d.dir, 'ca.crt')}: ENOENT`,
  });
});

/** A kubeconfig whose user runs `plugin` (a script that leaves `marker` behind when it runs). */
async function execKubeconfig(root: string): Promise<{ readonly kubeconfig: string; readonly marker: string }> {
  const marker = path.join(root, 'plugin-ran');
  const plugin = path.join(root, 'plugin.sh');
  await writeFile(
    plugin,
    `#!/bin/sh\ntouch '${marker}'\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'\n`,
    { mode: 0o755 },
  );
  const kubeconfig = KC_A.replace(
    `    token: ${TOKEN}`,
    `    exec: { apiVersion: client.authentication.k8s.io/v1, command: ${plugin} }`,
  );
  return { kubeconfig, marker };
}

/** Connects every engaged cluster and makes one request, which runs an exec plugin if there is one. */
async function useEngaged(events: readonly Event[]): Promise<void> {
  for (const e of events) {
    if (e.type !== 'engage') continue;
    const client = await e.cluster.connect(new AbortController().signal).catch(() => undefined);
    await client
      ?.listPage({ apiVersion: 'v1', kind: 'ConfigMap' }, { signal: AbortSignal.timeout(5_000) })
      .catch(() => {});
    await (client as { close?: () => Promise<void> } | undefined)?.close?.();
  }
}

test('an exec plugin in a folder kubeconfig is refused by default and never runs; allowExecAndFiles lets it', async (t) => {
  const root = await mkdtemp(path.join(tmpdir(), 'kubeconfig-directory-exec-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const { kubeconfig, marker } = await execKubeconfig(root);
  const refused = await setup(t, { 'member-a.yaml': kubeconfig });
  assert.deepEqual(refused.summary(), []);
  assert.deepEqual(refused.warnings(), [
    'member-a.yaml: cluster "member-a": kubeconfig users[0].user.exec runs a command, which is not allowed unless allowExecAndFiles',
  ]);
  await useEngaged(refused.events);
  await assert.rejects(stat(marker), { code: 'ENOENT' }, 'the plugin did not run');

  // The same file with the option: engaged, and its plugin runs (so the marker above could have shown).
  const allowed = await setup(t, { 'member-a.yaml': kubeconfig }, { allowExecAndFiles: true });
  assert.equal(allowed.summary().length, 1, allowed.warnings().join('\n'));
  await useEngaged(allowed.events);
  await stat(marker);
});

test('a file outside the folder is refused by default (a service-account token sent elsewhere); files inside it are not', async (t) => {
  const token = KC_A.replace(
    `    token: ${TOKEN}`,
    '    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token',
  );
  const escape = KC_B.replace('    insecure-skip-tls-verify: true', '    certificate-authority: ../ca.crt');
  const inside = KC_C.replace('    insecure-skip-tls-verify: true', '    certificate-authority: ca.crt');
  const d = await setup(t, { 'member-a.yaml': token, 'member-b.yaml': escape, 'member-c.yaml': inside, 'ca.crt': 'x' });
  assert.deepEqual(d.summary(), [`engage member-c ${rev(inside)}`]);
  assert.deepEqual(d.warnings().sort(), [
    'member-a.yaml: cluster "member-a": kubeconfig users[0].user.tokenFile names a file outside the folder, which is not allowed unless allowExecAndFiles',
    'member-b.yaml: cluster "member-b": kubeconfig clusters[0].cluster.certificate-authority names a file outside the folder, which is not allowed unless allowExecAndFiles',
  ]);
});

test('stopping resolves start, cancels its timers and engages nothing afterwards', async (t) => {
  const d = await setup(t, { 'member-a.yaml': KC_A });
  await d.stop();
  assert.equal(d.clock.pendingTimers, 0);
  await writeFile(path.join(d.dir, 'member-b.yaml'), KC_B);
  await d.clock.advance(RESCAN_MS);
  assert.deepEqual(d.summary(), [`engage member-a ${rev(KC_A)}`]);
});

test('invalid timings are refused when the provider is made', () => {
  assert.throws(() => kubeconfigDirectory({ path: '/x', rescanPeriodMs: 0 }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => kubeconfigDirectory({ path: '/x', debounceMs: -1 }), { code: 'ERR_INVALID_OPTION' });
  assert.throws(() => kubeconfigDirectory({ path: '' }), { code: 'ERR_INVALID_OPTION' });
});
