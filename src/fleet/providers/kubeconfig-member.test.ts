import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { KubeClient } from '../../client/kube-client.js';
import { recordingLogger } from '../../logging/recording-logger.js';
import {
  ClusterKubeconfigError,
  checkKubeconfig,
  clusterKubeconfigError,
  kubeconfigMember,
  kubeconfigRevision,
} from './kubeconfig-member.js';
import { TOKEN, tokenKubeconfig } from '../testing/kubeconfig-fixtures.js';

function assertNoToken(what: string, text: string): void {
  assert.ok(!text.includes(TOKEN), `${what} contains the token: ${text}`);
}

test('the revision is a sha256 of the bytes: equal bytes agree, other bytes differ, the content never shows', () => {
  const a = kubeconfigRevision(tokenKubeconfig());
  assert.match(a, /^sha256:[0-9a-f]{64}$/);
  assert.equal(kubeconfigRevision(Buffer.from(tokenKubeconfig())), a);
  assert.notEqual(kubeconfigRevision(tokenKubeconfig('https://127.0.0.1:2')), a);
  assertNoToken('revision', a);
});

test('broken YAML is refused with the cluster named and the parser error reduced to its kind, never the token', async () => {
  const broken = `${tokenKubeconfig()}\n  - : [unbalanced ${TOKEN}`;
  const err = await checkKubeconfig('member-a', broken).then(
    () => assert.fail('accepted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ClusterKubeconfigError);
  assert.equal(err.code, 'ERR_CLUSTER_KUBECONFIG');
  assert.equal(err.cluster, 'member-a');
  assert.match(err.message, /^cluster "member-a": kubeconfig is not valid YAML \(YAML\w*Error\)$/);
  assertNoToken('message', err.message);
  assertNoToken('inspected error', inspect(err, { depth: 10 }));
});

test('a kubeconfig whose context is missing is refused naming the context', async () => {
  const kc = tokenKubeconfig().replace('current-context: ctx', 'current-context: other');
  await assert.rejects(checkKubeconfig('member-a', kc), {
    name: 'ClusterKubeconfigError',
    message: 'cluster "member-a": context "other" not found in kubeconfig',
  });
});

test('a token of the wrong type is refused naming the field, not the value', async () => {
  const kc = tokenKubeconfig().replace(`token: ${TOKEN}`, `token: [${TOKEN}]`);
  const err = (await checkKubeconfig('m', kc).catch((e: unknown) => e)) as ClusterKubeconfigError;
  assert.equal(err.field, 'users[0].user.token');
  assertNoToken('message', err.message);
});

test('without allowExecAndFiles an exec plugin, a token file or a CA file is refused; inline data is fine', async () => {
  const exec = tokenKubeconfig().replace(
    `    token: ${TOKEN}`,
    '    exec: { apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "id"] }',
  );
  const tokenFile = tokenKubeconfig().replace(
    `    token: ${TOKEN}`,
    '    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token',
  );
  const caFile = tokenKubeconfig().replace(
    '    insecure-skip-tls-verify: true',
    '    certificate-authority: /etc/ca.crt',
  );
  for (const [kc, field] of [
    [exec, 'users[0].user.exec'],
    [tokenFile, 'users[0].user.tokenFile'],
    [caFile, 'clusters[0].cluster.certificate-authority'],
  ] as const) {
    await assert.rejects(checkKubeconfig('m', kc, { allowExecAndFiles: false }), (err: unknown) => {
      assert.ok(err instanceof ClusterKubeconfigError);
      assert.equal(err.field, field);
      assert.match(err.message, /not allowed here/);
      return true;
    });
  }
  // Allowed, the exec kubeconfig resolves (the plugin only runs when a request needs a credential).
  await checkKubeconfig('m', exec, { allowExecAndFiles: true });
  await checkKubeconfig('m', tokenKubeconfig(), { allowExecAndFiles: false });
});

test('connect builds a KubeClient for the context; an unreachable server fails the request without the token in the error or any log line', async () => {
  const log = recordingLogger();
  const kubeconfig = await checkKubeconfig('member-a', tokenKubeconfig());
  const member = kubeconfigMember({
    name: 'member-a',
    revision: kubeconfigRevision(tokenKubeconfig()),
    kubeconfig,
    clientOptions: { logger: log, backoff: { maxAttempts: 2, initialMs: 1, maxMs: 1 }, requestTimeoutMs: 2_000 },
  });
  assert.equal(member.name, 'member-a');
  const client = await member.connect(new AbortController().signal);
  assert.ok(client instanceof KubeClient);
  try {
    assertNoToken('inspected client', inspect(client, { depth: 10 }));
    const err = await client.listPage({ apiVersion: 'v1', kind: 'Namespace' }).then(
      () => assert.fail('an unreachable server answered'),
      (e: unknown) => e as Error,
    );
    assertNoToken('message', err.message);
    assertNoToken('inspected error', inspect(err, { depth: 10 }));
    assert.ok(log.entries.length > 0, 'the client logged its retry');
    for (const e of log.entries) assertNoToken('log line', JSON.stringify(e) + inspect(e, { depth: 10 }));
  } finally {
    await (client as KubeClient).close();
  }
});

test('connect with an aborted signal rejects with AbortedError and builds nothing', async () => {
  const kubeconfig = await checkKubeconfig('m', tokenKubeconfig());
  const member = kubeconfigMember({ name: 'm', revision: 'r', kubeconfig });
  await assert.rejects(member.connect(AbortSignal.abort()), { name: 'AbortedError' });
});

test('a CA file that cannot be read is refused naming the cluster and the file', async () => {
  const kc = tokenKubeconfig().replace(
    '    insecure-skip-tls-verify: true',
    '    certificate-authority: /nonexistent/ca.crt',
  );
  await assert.rejects(
    checkKubeconfig('m', kc),
    /cluster "m": cannot read certificate-authority file \/nonexistent\/ca\.crt: ENOENT/,
  );
});

test('a foreign error is reduced to its class name: its message (which may quote input) is dropped', () => {
  const err = clusterKubeconfigError('m', new SyntaxError(`Unexpected token in ${TOKEN}`));
  assert.equal(err.message, 'cluster "m": kubeconfig cannot be used (SyntaxError)');
  assert.equal(err.cause, undefined);
});
