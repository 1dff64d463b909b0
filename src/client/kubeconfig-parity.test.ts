/**
 * Parity with @kubernetes/client-node 1.4.0 (dev dependency; 2.x cannot run on Node 20): for a set
 * of kubeconfigs, the TLS and auth options we resolve match what its `applyToHTTPSOptions` produces.
 * Known, deliberate differences are asserted as such below.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import https from 'node:https';
import { stringify } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { loadKubeconfigFile, resolveKubeconfig, type Kubeconfig } from './kubeconfig.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
let dir: string;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'parity-'));
  await writeFile(path.join(dir, 'ca.crt'), 'CA-FROM-FILE');
  await writeFile(path.join(dir, 'client.crt'), 'CERT-FROM-FILE');
  await writeFile(path.join(dir, 'client.key'), 'KEY-FROM-FILE');
  await writeFile(
    path.join(dir, 'plugin.js'),
    `#!/usr/bin/env node\nprocess.stdout.write(JSON.stringify({apiVersion:'client.authentication.k8s.io/v1',kind:'ExecCredential',status:{token:'exec-token',expirationTimestamp:'2999-01-01T00:00:00Z'}}));\n`,
  );
  await chmod(path.join(dir, 'plugin.js'), 0o755);
});

function config(
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  extra: Partial<Kubeconfig> = {},
): Kubeconfig {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'main',
    clusters: [{ name: 'c', cluster: { server: 'https://api.example.test:6443', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'main', context: { cluster: 'c', user: 'u', namespace: 'ns1' } }],
    ...extra,
  };
}

interface Resolved {
  server: string;
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  servername?: string;
  authorization?: string;
}

async function ours(kc: Kubeconfig, context?: string): Promise<Resolved> {
  const file = path.join(dir, `ours-${Math.random()}.yaml`);
  await writeFile(file, stringify(kc));
  const cfg = await resolveKubeconfig(await loadKubeconfigFile(file), { context });
  const cred = await cfg.credential.get();
  return strip({
    server: cfg.server,
    ca: cfg.tls.ca,
    cert: cfg.tls.cert,
    key: cfg.tls.key,
    rejectUnauthorized: cfg.tls.rejectUnauthorized,
    servername: cfg.tls.servername,
    authorization: cred.authorization,
  });
}

async function theirs(kc: Kubeconfig, context?: string): Promise<Resolved> {
  const file = path.join(dir, `theirs-${Math.random()}.yaml`);
  await writeFile(file, stringify(kc));
  const k = new KubeConfig();
  k.loadFromFile(file);
  if (context) k.setCurrentContext(context);
  const opts: https.RequestOptions & { headers?: Record<string, string> } = {};
  await k.applyToHTTPSOptions(opts);
  const str = (v: unknown): string | undefined =>
    v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
  const headers = opts.headers ?? {};
  return strip({
    server: k.getCurrentCluster()!.server,
    ca: str(opts.ca),
    cert: str(opts.cert),
    key: str(opts.key),
    // client-node leaves it unset (Node's default: verify) unless the cluster says insecure.
    rejectUnauthorized: opts.rejectUnauthorized ?? true,
    servername: opts.servername ?? undefined,
    authorization: headers.Authorization ?? (opts.auth ? `Basic ${b64(opts.auth)}` : undefined),
  });
}

function strip(r: Resolved): Resolved {
  return Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as unknown as Resolved;
}

const cases: [string, () => Kubeconfig, string?][] = [
  [
    'bearer token with inline CA and tls-server-name',
    () =>
      config(
        { 'certificate-authority-data': b64('CA-INLINE'), 'tls-server-name': 'kubernetes.default' },
        { token: 'tok-1' },
      ),
  ],
  [
    'basic auth against an insecure cluster',
    () => config({ 'insecure-skip-tls-verify': true }, { username: 'admin', password: 'p@ss:word' }),
  ],
  [
    'client certificate and key from relative files with a CA file',
    () =>
      config({ 'certificate-authority': 'ca.crt' }, { 'client-certificate': 'client.crt', 'client-key': 'client.key' }),
  ],
  [
    'client certificate and key inline',
    () =>
      config(
        { 'certificate-authority-data': b64('CA-INLINE') },
        { 'client-certificate-data': b64('CERT-INLINE'), 'client-key-data': b64('KEY-INLINE') },
      ),
  ],
  // Absolute command: client-node runs a relative one from the working directory, while client-go
  // (and we) resolve it against the kubeconfig's folder — a deliberate difference.
  [
    'exec plugin (client.authentication.k8s.io/v1)',
    () =>
      config(
        {},
        {
          exec: {
            command: path.join(dir, 'plugin.js'),
            apiVersion: 'client.authentication.k8s.io/v1',
            interactiveMode: 'Never',
          },
        },
      ),
  ],
  [
    'a non-current context chosen explicitly',
    () =>
      config(
        {},
        { token: 'tok-main' },
        {
          clusters: [
            { name: 'c', cluster: { server: 'https://api.example.test:6443' } },
            {
              name: 'c2',
              cluster: { server: 'https://other.example.test:443', 'certificate-authority-data': b64('CA-2') },
            },
          ],
          users: [
            { name: 'u', user: { token: 'tok-main' } },
            { name: 'u2', user: { token: 'tok-other' } },
          ],
          contexts: [
            { name: 'main', context: { cluster: 'c', user: 'u' } },
            { name: 'other', context: { cluster: 'c2', user: 'u2' } },
          ],
        },
      ),
    'other',
  ],
];

for (const [name, make, context] of cases) {
  test(`resolved TLS and auth options match @kubernetes/client-node 1.4.0: ${name}`, async () => {
    assert.deepEqual(await ours(make(), context), await theirs(make(), context));
  });
}
