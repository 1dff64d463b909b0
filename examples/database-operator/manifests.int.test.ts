/**
 * The reference operator's Kustomize base (config/) is exactly what the CLI generates from
 * operator-runtime.config.ts — run as a user runs it, `operator-runtime generate manifests` into a
 * temporary folder — and it deploys: `kubectl kustomize` renders it and a real kube-apiserver 1.20
 * accepts every object with `kubectl apply --dry-run=server` (the namespace created first, since a
 * dry run creates nothing; cert-manager's kinds installed as the base expects cert-manager).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { KubeClient } from 'operator-runtime';
import { TestEnv, kubectl } from 'operator-runtime/testing';
import { lineDiff } from '../../scripts/generate-example-crd.js';
import { CERT_MANAGER_CRDS } from './testing/cert-manager-kinds.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG_DIR = fileURLToPath(new URL('./config', import.meta.url));
const REGENERATE = 'npm run generate:example';
/** The files under `dir` (health/ is a subfolder), relative to it, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** Files in config/ that are not generated (the image build, sample objects). */
const HAND_WRITTEN = ['Dockerfile', 'samples.yaml'];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

describe('the reference operator’s Kustomize base', { timeout: 300_000 }, () => {
  let out: string;

  before(async () => {
    out = await mkdtemp(join(tmpdir(), 'operator-runtime-manifests-'));
  });
  after(async () => {
    await rm(out, { recursive: true, force: true });
  });

  test('config/ is exactly what `operator-runtime generate manifests` writes from operator-runtime.config.ts', async () => {
    // The CLI from source, under tsx, as `npm run generate:example` runs it.
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO, 'src/cli/main.ts'),
        'generate',
        'manifests',
        '--config',
        'examples/database-operator/operator-runtime.config.ts',
        '--out',
        out,
      ],
      {
        cwd: REPO,
        env: { ...process.env, NODE_OPTIONS: '--conditions=operator-runtime-source' },
      },
    );
    const generated = await filesUnder(out);
    assert.equal(stdout.trim().split('\n').length, generated.length);
    const committed = (await filesUnder(CONFIG_DIR)).filter((f) => !HAND_WRITTEN.includes(f));
    assert.deepEqual(committed, generated, `generated files vs committed config/ (regenerate: ${REGENERATE})`);
    for (const file of generated) {
      const want = await readFile(join(out, file), 'utf8');
      const have = await readFile(join(CONFIG_DIR, file), 'utf8');
      assert.ok(
        want === have,
        `config/${file} drifted from what the config generates (- committed, + generated):\n${lineDiff(have, want)}\nRegenerate: ${REGENERATE}`,
      );
    }
  });

  describe('deployed to a real API server', () => {
    let env: TestEnv;
    let client: KubeClient;
    let rendered: Manifest[];

    before(async () => {
      env = await TestEnv.start({
        crds: CERT_MANAGER_CRDS,
      });
      client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    });
    after(async () => {
      await client?.close();
      await env?.stop();
    });

    test('kubectl kustomize renders every object the base lists', async () => {
      const yaml = await kubectl(env.kubeconfigPath, ['kustomize', CONFIG_DIR]);
      rendered = parseAllDocuments(yaml).map((d) => d.toJS() as Manifest);
      const kinds = new Set(rendered.map((o) => o.kind));
      for (const kind of [
        'Namespace',
        'CustomResourceDefinition',
        'ServiceAccount',
        'ClusterRole',
        'ClusterRoleBinding',
        'Role',
        'RoleBinding',
        'Deployment',
        'Service',
        'NetworkPolicy',
      ]) {
        assert.ok(kinds.has(kind), `${kind} in the rendered base (${[...kinds].join(', ')})`);
      }
      const deployment = rendered.find((o) => o.kind === 'Deployment') as unknown as {
        spec: { template: { spec: { securityContext: unknown; containers: { securityContext: unknown }[] } } };
      };
      assert.deepEqual(deployment.spec.template.spec.securityContext, {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      assert.deepEqual(deployment.spec.template.spec.containers[0]!.securityContext, {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    });

    test('kubectl apply --dry-run=server accepts every object', async () => {
      assert.ok(rendered, 'rendered by the previous test');
      // A server-side dry run creates nothing: the namespace must exist for the objects in it.
      await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'database-operator-system' } });
      const yaml = await kubectl(env.kubeconfigPath, ['kustomize', CONFIG_DIR]);
      const output = await kubectl(env.kubeconfigPath, ['apply', '--dry-run=server', '-f', '-'], yaml);
      const accepted = output
        .trim()
        .split('\n')
        .filter((line) => / (created|configured|unchanged) \(server dry run\)$/.test(line));
      assert.equal(accepted.length, rendered.length, output);
    });
  });
});
