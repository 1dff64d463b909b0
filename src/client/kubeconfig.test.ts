import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { execFileSync } from 'node:child_process';
import { stringify } from 'yaml';
import {
  KubeconfigError,
  asKubeconfig,
  defaultKubeconfigPaths,
  loadDefaultKubeconfig,
  loadKubeconfigFile,
  mergeKubeconfigs,
  parseKubeconfig,
  resolveKubeconfig,
  type Kubeconfig,
} from './kubeconfig.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const CA = '-----BEGIN CERTIFICATE-----\nFAKECA\n-----END CERTIFICATE-----\n';
const SECRET = 's3cr3t-token-value';

function kubeconfig(over: Partial<Kubeconfig> = {}): Kubeconfig {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'dev',
    clusters: [
      {
        name: 'c1',
        cluster: {
          server: 'https://10.0.0.1:6443/',
          'certificate-authority-data': b64(CA),
          'tls-server-name': 'kubernetes',
        },
      },
    ],
    users: [{ name: 'u1', user: { token: SECRET } }],
    contexts: [{ name: 'dev', context: { cluster: 'c1', user: 'u1', namespace: 'team-a' } }],
    ...over,
  };
}

async function tmp(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'kc-test-'));
}

test('a token user resolves to server, CA, SNI name, namespace and a bearer header', async () => {
  const cfg = await resolveKubeconfig(kubeconfig());
  assert.equal(cfg.server, 'https://10.0.0.1:6443');
  assert.equal(cfg.tls.ca, CA);
  assert.equal(cfg.tls.servername, 'kubernetes');
  assert.equal(cfg.tls.rejectUnauthorized, true, 'TLS verification is on by default');
  assert.equal(cfg.namespace, 'team-a');
  assert.deepEqual(await cfg.credential.get(), { authorization: `Bearer ${SECRET}` });
});

test('TLS verification is off only when the cluster says insecure-skip-tls-verify: true', async () => {
  const kc = kubeconfig({
    clusters: [{ name: 'c1', cluster: { server: 'https://x:1', 'insecure-skip-tls-verify': true } }],
  });
  assert.equal((await resolveKubeconfig(kc)).tls.rejectUnauthorized, false);
});

test('a context without namespace defaults to "default", and an explicit context overrides current-context', async () => {
  const kc = kubeconfig({
    contexts: [
      { name: 'dev', context: { cluster: 'c1', user: 'u1', namespace: 'team-a' } },
      { name: 'other', context: { cluster: 'c1', user: 'u1' } },
    ],
  });
  const cfg = await resolveKubeconfig(kc, { context: 'other' });
  assert.equal(cfg.namespace, 'default');
  assert.equal(cfg.contextName, 'other');
  await assert.rejects(
    resolveKubeconfig(kc, { context: 'nope' }),
    (e: unknown) => e instanceof KubeconfigError && /context "nope"/.test(e.message),
  );
});

test('relative certificate, key, token-file and exec paths resolve against the kubeconfig file folder', async () => {
  const dir = await tmp();
  await mkdir(path.join(dir, 'sub'));
  await writeFile(path.join(dir, 'sub', 'ca.crt'), CA);
  await writeFile(path.join(dir, 'sub', 'client.crt'), 'CERT');
  await writeFile(path.join(dir, 'sub', 'client.key'), 'KEY');
  await writeFile(path.join(dir, 'sub', 'token'), 'file-token\n');
  const file = path.join(dir, 'sub', 'config');
  await writeFile(
    file,
    stringify(
      kubeconfig({
        clusters: [{ name: 'c1', cluster: { server: 'https://h:1', 'certificate-authority': 'ca.crt' } }],
        users: [
          {
            name: 'u1',
            user: { tokenFile: 'token', 'client-certificate': 'client.crt', 'client-key': './client.key' },
          },
          { name: 'u2', user: { exec: { command: './bin/plugin', apiVersion: 'client.authentication.k8s.io/v1' } } },
          { name: 'u3', user: { exec: { command: 'aws', apiVersion: 'client.authentication.k8s.io/v1' } } },
        ],
      }),
    ),
  );
  const kc = await loadKubeconfigFile(file);
  assert.equal(kc.users![1]!.user.exec!.command, path.join(dir, 'sub', 'bin', 'plugin'));
  assert.equal(kc.users![2]!.user.exec!.command, 'aws', 'a bare program name is looked up on PATH');
  const cfg = await resolveKubeconfig(kc);
  assert.equal(cfg.tls.ca, CA);
  assert.equal(cfg.tls.cert, 'CERT');
  assert.equal(cfg.tls.key, 'KEY');
  assert.deepEqual(await cfg.credential.get(), { authorization: 'Bearer file-token' });
});

test('inline data wins over a file reference', async () => {
  const kc = kubeconfig({
    clusters: [
      {
        name: 'c1',
        cluster: {
          server: 'https://h:1',
          'certificate-authority': '/does/not/exist',
          'certificate-authority-data': b64(CA),
        },
      },
    ],
  });
  assert.equal((await resolveKubeconfig(kc)).tls.ca, CA);
});

test('several KUBECONFIG files merge as kubectl does: first definition and first current-context win, missing files are skipped', async () => {
  const dir = await tmp();
  const a = path.join(dir, 'a');
  const b = path.join(dir, 'b');
  await writeFile(
    a,
    stringify({
      clusters: [{ name: 'shared', cluster: { server: 'https://from-a:1' } }],
      users: [{ name: 'ua', user: { token: 'ta' } }],
      contexts: [{ name: 'ctx-a', context: { cluster: 'shared', user: 'ua' } }],
    }),
  );
  await writeFile(
    b,
    stringify({
      'current-context': 'ctx-b',
      clusters: [
        { name: 'shared', cluster: { server: 'https://from-b:1' } },
        { name: 'only-b', cluster: { server: 'https://b:1' } },
      ],
      users: [{ name: 'ub', user: { token: 'tb' } }],
      contexts: [{ name: 'ctx-b', context: { cluster: 'shared', user: 'ub', namespace: 'nb' } }],
    }),
  );
  const env = { KUBECONFIG: [a, '', path.join(dir, 'missing'), b].join(path.delimiter) };
  assert.deepEqual(defaultKubeconfigPaths(env, '/home/x'), [a, path.join(dir, 'missing'), b]);
  const kc = await loadDefaultKubeconfig(env, '/home/x');
  assert.ok(kc);
  assert.equal(kc['current-context'], 'ctx-b', 'a is silent about current-context, so b decides');
  assert.deepEqual(
    kc.clusters!.map((c) => [c.name, c.cluster.server]),
    [
      ['shared', 'https://from-a:1'],
      ['only-b', 'https://b:1'],
    ],
  );
  const cfg = await resolveKubeconfig(kc);
  assert.equal(cfg.server, 'https://from-a:1');
  assert.equal(cfg.namespace, 'nb');
  assert.deepEqual(await cfg.credential.get(), { authorization: 'Bearer tb' });
});

test('without KUBECONFIG the default is ~/.kube/config, and nothing found means undefined', async () => {
  const home = await tmp();
  assert.deepEqual(defaultKubeconfigPaths({}, home), [path.join(home, '.kube', 'config')]);
  assert.equal(await loadDefaultKubeconfig({}, home), undefined);
  await mkdir(path.join(home, '.kube'));
  await writeFile(path.join(home, '.kube', 'config'), stringify(kubeconfig()));
  assert.equal((await loadDefaultKubeconfig({}, home))?.['current-context'], 'dev');
});

test('mergeKubeconfigs of one config is that config', () => {
  const kc = kubeconfig();
  const merged = mergeKubeconfigs([kc]);
  assert.deepEqual(merged.clusters, kc.clusters);
  assert.equal(merged['current-context'], 'dev');
});

test('basic auth resolves to a Basic header', async () => {
  const cfg = await resolveKubeconfig(
    kubeconfig({ users: [{ name: 'u1', user: { username: 'admin', password: 'pw' } }] }),
  );
  assert.deepEqual(await cfg.credential.get(), { authorization: `Basic ${b64('admin:pw')}` });
});

test('impersonation fields are carried to the config', async () => {
  const cfg = await resolveKubeconfig(
    kubeconfig({ users: [{ name: 'u1', user: { token: 't', as: 'bob', 'as-groups': ['g1', 'g2'] } }] }),
  );
  assert.deepEqual(cfg.impersonate, { user: 'bob', uid: undefined, groups: ['g1', 'g2'] });
});

test('a user with two authentication methods, an auth-provider, or a cert without key is rejected without echoing secrets', async () => {
  const cases: Kubeconfig['users'][] = [
    [{ name: 'u1', user: { token: SECRET, username: 'a', password: SECRET } }],
    [{ name: 'u1', user: { 'auth-provider': { name: 'oidc', config: { 'id-token': SECRET } } } }],
    [{ name: 'u1', user: { 'client-certificate-data': b64('CERT') } }],
  ];
  for (const users of cases) {
    await assert.rejects(
      resolveKubeconfig(kubeconfig({ users })),
      (e: unknown) => e instanceof KubeconfigError && !inspect(e).includes(SECRET),
    );
  }
});

test('a server URL carrying credentials, or an invalid one, is rejected without echoing it', async () => {
  for (const server of [`https://admin:${SECRET}@h:1`, 'not a url', 'ftp://h']) {
    await assert.rejects(
      resolveKubeconfig(kubeconfig({ clusters: [{ name: 'c1', cluster: { server } }] })),
      (e: unknown) => e instanceof KubeconfigError && !e.message.includes(SECRET),
    );
  }
});

test('invalid YAML is reported without quoting the file', () => {
  assert.throws(
    () => parseKubeconfig(`users:\n  - name: u\n    user: {token: ${SECRET}\n`),
    (e: unknown) => e instanceof KubeconfigError && !e.message.includes(SECRET),
  );
});

test('printing or serialising a resolved config shows neither the token nor the client key', async () => {
  const cfg = await resolveKubeconfig(
    kubeconfig({
      users: [
        {
          name: 'u1',
          user: { token: SECRET, 'client-certificate-data': b64('CERT'), 'client-key-data': b64('PRIVATE-KEY-PEM') },
        },
      ],
    }),
  );
  assert.equal(cfg.tls.key, 'PRIVATE-KEY-PEM');
  for (const text of [inspect(cfg, { depth: 10 }), JSON.stringify(cfg), String(cfg.credential)]) {
    assert.ok(!text.includes(SECRET), text);
    assert.ok(!text.includes('PRIVATE-KEY-PEM'), text);
  }
  assert.match(inspect(cfg.credential), /redacted/);
});

test('a kubeconfig passed as an object is checked for its shape', () => {
  assert.equal(asKubeconfig(kubeconfig())['current-context'], 'dev');
  assert.throws(() => asKubeconfig({ clusters: { c1: {} } }), KubeconfigError);
  assert.throws(() => asKubeconfig({ users: [{ user: {} }] }), KubeconfigError);
  assert.throws(() => asKubeconfig({ 'current-context': 3 }), KubeconfigError);
});

test('proxy-url: http(s) is kept out of printed output, other schemes are refused', async () => {
  const cfg = await resolveKubeconfig(
    kubeconfig({
      clusters: [{ name: 'c1', cluster: { server: 'https://h:1', 'proxy-url': `http://u:${SECRET}@proxy:3128` } }],
    }),
  );
  assert.equal(cfg.proxyUrl, `http://u:${SECRET}@proxy:3128/`);
  assert.ok(!inspect(cfg, { depth: 10 }).includes(SECRET) && !JSON.stringify(cfg).includes(SECRET));
  await assert.rejects(
    resolveKubeconfig(
      kubeconfig({
        clusters: [{ name: 'c1', cluster: { server: 'https://h:1', 'proxy-url': 'socks5://proxy:1080' } }],
      }),
    ),
    KubeconfigError,
  );
});

// Issue 18, item 7: wrong shapes gave raw TypeErrors, echoed values, or were accepted silently.

/** Runs every entry point on one shape and checks each fails with a KubeconfigError naming `field` and not quoting SECRET. */
async function rejectsNaming(kc: Record<string, unknown>, field: string): Promise<void> {
  const check = (e: unknown): boolean => {
    assert.ok(e instanceof KubeconfigError, `a KubeconfigError, not ${inspect(e)}`);
    assert.ok(e.message.includes(field), `"${e.message}" names ${field}`);
    assert.equal(e.field, field);
    assert.ok(!inspect(e, { depth: 10 }).includes(SECRET), `"${e.message}" does not quote the value`);
    return true;
  };
  assert.throws(() => parseKubeconfig(stringify(kc)), check);
  assert.throws(() => asKubeconfig(kc), check);
  await assert.rejects(resolveKubeconfig(kc as Kubeconfig), check);
}

const cluster0 = { name: 'c1', cluster: { server: 'https://h:1' } };
const context0 = { name: 'dev', context: { cluster: 'c1', user: 'u1' } };
const withUser = (user: Record<string, unknown>): Record<string, unknown> => ({
  'current-context': 'dev',
  clusters: [cluster0],
  contexts: [context0],
  users: [{ name: 'u1', user }],
});
const withCluster = (cluster: Record<string, unknown>): Record<string, unknown> => ({
  'current-context': 'dev',
  clusters: [{ name: 'c1', cluster }],
  contexts: [context0],
  users: [{ name: 'u1', user: {} }],
});
const execUser = (exec: Record<string, unknown>): Record<string, unknown> =>
  withUser({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'plugin', ...exec } });

test('a kubeconfig of the wrong shape is a KubeconfigError naming the field path, never a TypeError or the value', async () => {
  await rejectsNaming({ clusters: 5 }, 'clusters');
  await rejectsNaming({ users: [{ name: 'u1', user: SECRET }] }, 'users[0].user');
  await rejectsNaming(withUser({ token: 12345 }), 'users[0].user.token');
  await rejectsNaming(withUser({ password: { value: SECRET } }), 'users[0].user.password');
  await rejectsNaming(execUser({ command: 42 }), 'users[0].user.exec.command');
  await rejectsNaming(execUser({ args: `--token=${SECRET}` }), 'users[0].user.exec.args');
  await rejectsNaming(execUser({ args: ['--ok', 7] }), 'users[0].user.exec.args[1]');
  await rejectsNaming(execUser({ env: [{ name: 'X', value: { v: SECRET } }] }), 'users[0].user.exec.env[0].value');
  await rejectsNaming(execUser({ env: { X: SECRET } }), 'users[0].user.exec.env');
  await rejectsNaming(
    withUser({ 'auth-provider': { name: 'oidc', config: { 'id-token': [SECRET] } } }),
    'users[0].user.auth-provider.config.id-token',
  );
  await rejectsNaming(withUser({ 'as-groups': SECRET }), 'users[0].user.as-groups');
  await rejectsNaming(
    withCluster({ server: 'https://h:1', 'insecure-skip-tls-verify': 'yes' }),
    'clusters[0].cluster.insecure-skip-tls-verify',
  );
  await rejectsNaming({ contexts: [{ name: 'dev', context: { cluster: 7 } }] }, 'contexts[0].context.cluster');
  await rejectsNaming({ 'current-context': 'dev', contexts: [context0, { name: 5, context: {} }] }, 'contexts[1].name');
});

test('base64 data fields must be valid base64; the error names the field, not the data', async () => {
  await rejectsNaming(
    withCluster({ server: 'https://h:1', 'certificate-authority-data': `not base64! ${SECRET}` }),
    'clusters[0].cluster.certificate-authority-data',
  );
  await rejectsNaming(
    withUser({ 'client-certificate-data': b64('CERT'), 'client-key-data': `%%${SECRET}%%` }),
    'users[0].user.client-key-data',
  );
  // Line-wrapped base64 (as some tools write it) is still base64.
  const wrapped = b64(CA).replace(/(.{20})/g, '$1\n');
  const cfg = await resolveKubeconfig(
    withCluster({ server: 'https://h:1', 'certificate-authority-data': wrapped }) as Kubeconfig,
  );
  assert.equal(cfg.tls.ca, CA);
});

test('insecure-skip-tls-verify together with a CA is refused, as client-go refuses it', async () => {
  for (const ca of [{ 'certificate-authority-data': b64(CA) }, { 'certificate-authority': '/etc/ca.crt' }]) {
    await assert.rejects(
      resolveKubeconfig(withCluster({ server: 'https://h:1', 'insecure-skip-tls-verify': true, ...ca }) as Kubeconfig),
      (e: unknown) => e instanceof KubeconfigError && e.field === 'clusters[0].cluster.insecure-skip-tls-verify',
    );
  }
});

test('holes in a sparse list are entries of the wrong shape, not skipped (found by the fuzz suite)', async () => {
  await rejectsNaming(
    // eslint-disable-next-line no-sparse-arrays
    { 'current-context': 'dev', clusters: [cluster0], contexts: [context0], users: [, { name: 'u1', user: {} }] },
    'users[0]',
  );
  // eslint-disable-next-line no-sparse-arrays
  await rejectsNaming(execUser({ args: ['--a', , '--b'] }), 'users[0].user.exec.args[1]');
});

test('YAML oddities next to a token are not reported as process warnings quoting the source', async () => {
  const seen: string[] = [];
  const onWarning = (w: Error): void => void seen.push(w.message);
  process.on('warning', onWarning);
  try {
    parseKubeconfig(`users:\n  - name: u\n    user: !unknown-tag {token: ${SECRET}}\n`);
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(
    seen.filter((m) => m.includes(SECRET)),
    [],
  );
});

test(
  'a kubeconfig, CA, certificate or key path naming a FIFO or a device is refused at once instead of hanging',
  { timeout: 20_000 },
  async () => {
    const dir = await tmp();
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    for (const file of [fifo, '/dev/zero']) {
      await assert.rejects(
        loadKubeconfigFile(file),
        (e: unknown) => e instanceof KubeconfigError && /not a regular file/.test(e.message),
      );
      await assert.rejects(
        resolveKubeconfig(withCluster({ server: 'https://h:1', 'certificate-authority': file }) as Kubeconfig),
        KubeconfigError,
      );
      await assert.rejects(
        resolveKubeconfig(withUser({ 'client-certificate': file, 'client-key-data': b64('KEY') }) as Kubeconfig),
        KubeconfigError,
      );
    }
  },
);

test('a shape error in a kubeconfig file names the file as well as the field', async () => {
  const dir = await tmp();
  const file = path.join(dir, 'config');
  await writeFile(file, stringify(withUser({ token: 12345 })));
  await assert.rejects(
    loadKubeconfigFile(file),
    (e: unknown) =>
      e instanceof KubeconfigError &&
      e.field === 'users[0].user.token' &&
      e.message.includes(file) &&
      !e.message.includes('12345'),
  );
});
