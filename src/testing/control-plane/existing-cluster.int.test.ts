/**
 * TestEnv against an existing cluster: a control plane started in another process (a normal
 * TestEnv with kube-controller-manager) is handed over by its kubeconfig, as a user hands over
 * kind's or k3d's. CRDs are installed and removed, each test gets its own namespace, nothing is
 * left behind — also when a test fails — and every fault hook answers TestEnvUnavailableError.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Type } from 'typebox';
import { KubeClient } from '../../client/kube-client.js';
import { customResourceDefinition } from '../../crd/custom-resource-definition.js';
import { defineCustomKind } from '../../crd/custom-kind.js';
import { EtcdFaults } from '../chaos/etcd-faults.js';
import { TestEnvUnavailableError } from './existing-cluster.js';
import { FaultProxy } from '../chaos/fault-proxy.js';
import { TEST_ENV_LABEL, TestEnv } from './test-env.js';
import { startControlPlaneProcess, type ControlPlaneProcess } from './test-support/control-plane-process.js';

const GROUP = 'existing.test.operator-runtime.dev';
const GADGET = defineCustomKind({
  group: GROUP,
  names: { kind: 'Gadget', plural: 'gadgets' },
  scope: 'Namespaced',
  versions: [{ name: 'v1', served: true, storage: true, schema: { spec: Type.Object({ size: Type.Integer() }) } }],
});
const CRD = customResourceDefinition(GADGET);
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${GROUP}`;

describe('TestEnv against an existing cluster', { timeout: 300_000 }, () => {
  let cluster: ControlPlaneProcess;
  /** Sees the cluster as it is; creates nothing, so its stop() removes nothing. */
  let observer: TestEnv;

  before(async () => {
    cluster = await startControlPlaneProcess();
    observer = await TestEnv.start({ existingCluster: { kubeconfigPath: cluster.kubeconfigPath } });
  });
  after(async () => {
    await observer?.stop();
    await cluster?.stop();
  });

  /** Namespaces and CRDs any TestEnv labelled in the cluster. */
  async function leftBehind(): Promise<string[]> {
    const selector = `?labelSelector=${encodeURIComponent(TEST_ENV_LABEL)}`;
    const namespaces = await observer.request<{ items: { metadata: { name: string } }[] }>(
      'GET',
      `/api/v1/namespaces${selector}`,
    );
    const crds = await observer.request<{ items: { metadata: { name: string } }[] }>(
      'GET',
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions${selector}`,
    );
    return [
      ...namespaces.body.items.map((n) => `namespace/${n.metadata.name}`),
      ...crds.body.items.map((c) => `crd/${c.metadata.name}`),
    ];
  }

  test('installs the CRDs (labelled as its own), gives each test its own namespace, and removes both at stop', async () => {
    const env = await TestEnv.start({ existingCluster: { kubeconfigPath: cluster.kubeconfigPath }, crds: [CRD] });
    const namespaces: string[] = [];
    try {
      assert.equal(env.existingCluster, true);
      assert.equal(env.serverKind, 'existing');
      assert.equal(env.server, cluster.server);
      assert.deepEqual(env.pids(), [], 'nothing started');
      const crd = await observer.request<{ metadata: { labels: Record<string, string> } }>('GET', CRD_PATH);
      assert.equal(crd.status, 200);
      assert.equal(crd.body.metadata.labels[TEST_ENV_LABEL], env.id);
      namespaces.push(await env.createNamespace(), await env.createNamespace('gadgets'));
      assert.notEqual(namespaces[0], namespaces[1]);
      assert.match(namespaces[1]!, /^gadgets-[0-9a-f]{8}$/);
      // The env's kubeconfig is what the test's clients use, as with a started control plane.
      const client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
      try {
        await client.create({
          apiVersion: `${GROUP}/v1`,
          kind: 'Gadget',
          metadata: { name: 'g', namespace: namespaces[0]! },
          spec: { size: 1 },
        });
        assert.equal((await client.get(GADGET, 'g', { namespace: namespaces[0]! })).spec.size, 1);
      } finally {
        await client.close();
      }
      assert.deepEqual(
        (await leftBehind()).sort(),
        [`crd/gadgets.${GROUP}`, ...namespaces.map((n) => `namespace/${n}`)].sort(),
      );
    } finally {
      await env.stop();
    }
    // stop() waits until they are gone, not only marked for deletion.
    assert.deepEqual(await leftBehind(), []);
    for (const n of namespaces) assert.equal((await observer.request('GET', `/api/v1/namespaces/${n}`)).status, 404);
    assert.equal((await observer.request('GET', CRD_PATH)).status, 404);
  });

  test('two envs at once (two test files) share a CRD: it stays until the last one stops', async () => {
    const first = await TestEnv.start({ existingCluster: { kubeconfigPath: cluster.kubeconfigPath }, crds: [CRD] });
    const second = await TestEnv.start({ existingCluster: { kubeconfigPath: cluster.kubeconfigPath }, crds: [CRD] });
    try {
      await first.stop();
      assert.equal((await observer.request('GET', CRD_PATH)).status, 200, 'still used by the second env');
      const namespace = await second.createNamespace();
      assert.equal(
        (
          await second.request('POST', `/apis/${GROUP}/v1/namespaces/${namespace}/gadgets`, {
            apiVersion: `${GROUP}/v1`,
            kind: 'Gadget',
            metadata: { name: 'g' },
            spec: { size: 1 },
          })
        ).status,
        201,
      );
    } finally {
      await first.stop();
      await second.stop();
    }
    assert.deepEqual(await leftBehind(), []);
  });

  test('OPERATOR_RUNTIME_USE_EXISTING_CLUSTER=true with KUBECONFIG turns it on for every TestEnv', async () => {
    const saved = { use: process.env.OPERATOR_RUNTIME_USE_EXISTING_CLUSTER, kubeconfig: process.env.KUBECONFIG };
    process.env.OPERATOR_RUNTIME_USE_EXISTING_CLUSTER = 'true';
    process.env.KUBECONFIG = cluster.kubeconfigPath;
    try {
      // Options that shape a control plane of its own are ignored: the cluster is what it is.
      const env = await TestEnv.start({
        controllerManager: true,
        ownerReferencesPermissionEnforcement: true,
        apiServerFlags: ['--not-a-flag'],
      });
      try {
        assert.equal(env.existingCluster, true);
        assert.equal(env.server, cluster.server);
      } finally {
        await env.stop();
      }
    } finally {
      for (const [key, value] of [
        ['OPERATOR_RUNTIME_USE_EXISTING_CLUSTER', saved.use],
        ['KUBECONFIG', saved.kubeconfig],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });

  test('every fault hook answers TestEnvUnavailableError naming itself', async () => {
    const env = await TestEnv.start({ existingCluster: { kubeconfigPath: cluster.kubeconfigPath } });
    try {
      const unavailable = (feature: string) => (error: unknown) => {
        assert.ok(error instanceof TestEnvUnavailableError, `${feature}: ${String(error)}`);
        assert.equal(error.code, 'ERR_TEST_ENV_UNAVAILABLE');
        assert.equal(error.feature, feature);
        assert.match(
          error.message,
          new RegExp(`^TestEnv ${feature.replace(/[()]/g, '\\$&')} is not available against an existing cluster: `),
        );
        return true;
      };
      assert.throws(() => env.pause('kube-apiserver'), unavailable('pause()'));
      assert.throws(() => env.pause('etcd'), unavailable('pause()'));
      assert.throws(() => env.resume('kube-controller-manager'), unavailable('resume()'));
      assert.throws(() => env.etcdEndpoint, unavailable('etcdEndpoint'));
      assert.throws(() => env.etcdEndpoints, unavailable('etcdEndpoints'));
      assert.throws(() => env.etcdMembers, unavailable('etcdMembers'));
      assert.throws(() => env.etcdCluster, unavailable('etcdCluster'));
      assert.throws(() => new EtcdFaults(env), unavailable('etcdCluster'));
      await assert.rejects(env.restartApiServer(), unavailable('restartApiServer()'));
      await assert.rejects(env.etcdctl(['endpoint', 'status']), unavailable('etcdctl()'));
      await assert.rejects(env.etcdRevision(), unavailable('etcdRevision()'));
      await assert.rejects(env.compact(), unavailable('compact()'));
      await assert.rejects(env.userKubeconfig({ user: 'someone' }), unavailable('userKubeconfig()'));
      await assert.rejects(FaultProxy.start({ upstream: env }), unavailable('FaultProxy'));
      // What needs no control plane of its own works: the kubeconfig's static token, raw requests.
      assert.ok(env.adminToken.length > 0);
      assert.equal((await env.request('GET', '/readyz')).status, 200);
    } finally {
      await env.stop();
    }
  });

  test('a failing test still leaves nothing behind (after() runs stop()); a CRD the user had is left alone', async () => {
    // The user's own CRD of the same name, there before the suite: used, never removed.
    const userCrd = { ...CRD, metadata: { name: `gadgets.${GROUP}` } };
    assert.equal(
      (await observer.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', userCrd)).status,
      201,
    );
    const dir = await mkdtemp(join(tmpdir(), 'operator-runtime-existing-'));
    try {
      const file = join(dir, 'fails.test.ts');
      const src = (path: string) => pathToFileURL(fileURLToPath(new URL(path, import.meta.url))).href;
      await writeFile(
        file,
        `import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TestEnv } from '${src('./test-env.ts')}';
const crd = ${JSON.stringify(CRD)};
const other = { ...crd, metadata: { name: 'others.${GROUP}' }, spec: { ...crd.spec, names: { kind: 'Other', plural: 'others', singular: 'other', listKind: 'OtherList' } } };
let env;
before(async () => { env = await TestEnv.start({ crds: [crd, other] }); });
after(async () => { await env?.stop(); });
test('fails halfway', async () => {
  const namespace = await env.createNamespace();
  const res = await env.request('POST', '/apis/${GROUP}/v1/namespaces/' + namespace + '/others', { apiVersion: '${GROUP}/v1', kind: 'Other', metadata: { name: 'o' }, spec: { size: 1 } });
  assert.equal(res.status, 201);
  assert.fail('deliberately failing with a namespace and a custom resource in the cluster');
});
`,
      );
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        OPERATOR_RUNTIME_USE_EXISTING_CLUSTER: 'true',
        KUBECONFIG: cluster.kubeconfigPath,
      };
      delete env.NODE_TEST_CONTEXT;
      const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--test', file], {
        cwd: fileURLToPath(new URL('../../..', import.meta.url)),
        env,
        timeout: 180_000,
      }).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? '' }),
      );
      assert.equal(result.code, 1, result.stdout);
      assert.match(result.stdout, /deliberately failing/);
      assert.match(result.stdout, /# fail 1/);
      assert.deepEqual(await leftBehind(), []);
      assert.equal(
        (await observer.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/others.${GROUP}`))
          .status,
        404,
      );
      assert.equal((await observer.request('GET', CRD_PATH)).status, 200, "the user's CRD is still there");
    } finally {
      await rm(dir, { recursive: true, force: true });
      await observer.request('DELETE', CRD_PATH);
    }
  });
});
