/**
 * The per-environment overlays in overlays/ (the source document's example: a region patched into
 * the operator's Deployment environment) on top of the generated Kustomize base in config/,
 * rendered by the real `kustomize` (Debian sid's 5.8) and accepted by a real API server
 * (`kubectl apply --dry-run=server` against a TestEnv, with cert-manager's kinds as the base expects
 * cert-manager): what Flux or Argo CD would apply.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { TestEnv, kubectl } from 'operator-runtime/testing';
import { supplyChainTool } from '../../scripts/packaging/supply-chain-tools.js';
import { CERT_MANAGER_CRDS } from './testing/cert-manager-kinds.js';

const run = promisify(execFile);
const HERE = import.meta.dirname;
const NAMESPACE = 'database-operator-system';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}
interface Rendered {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: {
    replicas?: number;
    template?: { spec?: { containers?: { name: string; image?: string; env?: EnvVar[] }[] } };
  };
}

async function build(kustomize: string, dir: string): Promise<{ yaml: string; objects: Rendered[] }> {
  const { stdout } = await run(kustomize, ['build', dir], { maxBuffer: 64 << 20 });
  return { yaml: stdout, objects: parseAllDocuments(stdout).map((d) => d.toJS() as Rendered) };
}

function operatorContainer(objects: Rendered[]) {
  const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'database-operator');
  assert.ok(deployment, 'the rendering has the operator Deployment');
  const container = deployment.spec?.template?.spec?.containers?.find((c) => c.name === 'operator');
  assert.ok(container, 'the Deployment has the operator container');
  return { deployment, container };
}

const OVERLAYS = [
  { name: 'staging', region: 'staging-eu-central', replicas: 1, image: 'example.com/database-operator:0.1.0' },
  { name: 'production', region: 'prod-us-west', replicas: 2, image: 'example.com/database-operator:0.1.0-prod' },
] as const;

describe('GitOps overlays on the generated base, rendered by kustomize', { timeout: 180_000 }, () => {
  let kustomize: string;
  let base: Rendered[];
  let env: TestEnv;
  let dir: string;

  before(async () => {
    kustomize = await supplyChainTool('kustomize');
    base = (await build(kustomize, join(HERE, 'config'))).objects;
    dir = await mkdtemp(join(tmpdir(), 'operator-runtime-overlays-'));
    // The base's webhook certificate is cert-manager's: its kinds must exist for the dry run.
    env = await TestEnv.start({ crds: CERT_MANAGER_CRDS });
  });

  after(async () => {
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const overlay of OVERLAYS) {
    test(`${overlay.name}: REGION=${overlay.region} joins the generated environment, nothing else in it changes`, async () => {
      const { objects } = await build(kustomize, join(HERE, 'overlays', overlay.name));
      const { deployment, container } = operatorContainer(objects);
      const envOf = (vars: EnvVar[] | undefined) => new Map((vars ?? []).map((v) => [v.name, v]));
      const rendered = envOf(container.env);
      assert.deepEqual(rendered.get('REGION'), { name: 'REGION', value: overlay.region });
      const generated = envOf(operatorContainer(base).container.env);
      assert.ok(generated.size > 2, 'the base has its own environment');
      for (const [name, variable] of generated) assert.deepEqual(rendered.get(name), variable, `${name} is kept`);
      assert.equal(rendered.size, generated.size + 1);
      assert.equal(deployment.spec?.replicas, overlay.replicas);
      assert.equal(container.image, overlay.image);
      // Every other object is the base's, untouched.
      const others = (list: Rendered[]) => list.filter((o) => o !== deployment && o.kind !== 'Deployment');
      assert.deepEqual(others(objects), others(base));
    });
  }

  test('the API server accepts each rendering (kubectl apply --dry-run=server), and refuses a broken one', async () => {
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    await writeFile(kubeconfig, stringify(env.kubeconfig));
    // A server-side dry run creates nothing, so the namespaced objects need their Namespace to exist.
    await kubectl(kubeconfig, ['create', 'namespace', NAMESPACE]);
    for (const overlay of OVERLAYS) {
      const { yaml, objects } = await build(kustomize, join(HERE, 'overlays', overlay.name));
      const file = join(dir, `${overlay.name}.yaml`);
      await writeFile(file, yaml);
      const output = await kubectl(kubeconfig, ['apply', '--dry-run=server', '-f', file]);
      const accepted = output.split('\n').filter((line) => line.endsWith('(server dry run)'));
      assert.equal(accepted.length, objects.length, `every object accepted:\n${output}`);
      assert.match(output, /^deployment\.apps\/database-operator (created|configured) \(server dry run\)$/m);
    }
    // The check has teeth: the server's own validation refuses a Deployment without an image.
    const { objects } = await build(kustomize, join(HERE, 'overlays', 'production'));
    delete operatorContainer(objects).container.image;
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, objects.map((o) => stringify(o)).join('---\n'));
    await assert.rejects(
      kubectl(kubeconfig, ['apply', '--dry-run=server', '-f', broken]),
      /spec\.template\.spec\.containers\[0\]\.image: Required value/,
    );
  });
});
