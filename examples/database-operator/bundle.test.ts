/**
 * The reference operator's OLM bundle, as a user makes it: `operator-runtime generate bundle` on
 * operator-runtime.config.ts (version from package.json, samples from config/samples.yaml and
 * samples/), then `operator-runtime validate bundle` — clean, no error and no warning. Its CSV
 * carries the Kustomize base's own Deployment and RBAC rules, its CRDs are the base's schemas, and
 * every generated manifest uses only APIs served by each Kubernetes minor from 1.25 to 1.37.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { checkApiVersion, generateManifests, type ClusterServiceVersion } from 'operator-runtime/codegen';
import { runCli } from '../../src/cli/program.js';
import config from './operator-runtime.config.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const CSV = 'manifests/database-operator.clusterserviceversion.yaml';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  [field: string]: unknown;
}

const documents = (text: string): Manifest[] => parseAllDocuments(text).map((d) => d.toJS() as Manifest);

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { cwd: HERE, stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

describe('the reference operator’s OLM bundle', () => {
  let out: string;
  let base: Map<string, Manifest[]>;
  let csv: ClusterServiceVersion;

  before(async () => {
    out = await mkdtemp(join(tmpdir(), 'operator-runtime-bundle-'));
    const generated = await cli('generate', 'bundle', '--config', 'operator-runtime.config.ts', '--out', out);
    assert.equal(generated.code, 0, generated.stderr);
    assert.equal(generated.stderr, '', 'no note: nothing of the operator is left out');
    base = new Map((await generateManifests(config)).map((f) => [f.path, documents(f.content)]));
    csv = documents(await readFile(join(out, CSV), 'utf8'))[0] as unknown as ClusterServiceVersion;
  });
  after(async () => {
    if (out) await rm(out, { recursive: true, force: true });
  });

  test('`validate bundle` finds no error and no warning', async () => {
    const run = await cli('validate', 'bundle', out);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.match(run.stdout, /valid registry\+v1 bundle \(0 error\(s\), 0 warning\(s\)\)/);
  });

  test('the CSV is database-operator.v<package.json version>, AllNamespaces only, with a sample per owned kind', async () => {
    const pkg = JSON.parse(await readFile(join(HERE, 'package.json'), 'utf8')) as { version: string };
    assert.equal(csv.metadata.name, `database-operator.v${pkg.version}`);
    assert.equal(csv.spec.version, pkg.version);
    assert.deepEqual(
      csv.spec.installModes.filter((m) => m.supported).map((m) => m.type),
      ['AllNamespaces'],
    );
    const examples = JSON.parse(csv.metadata.annotations['alm-examples']!) as Manifest[];
    assert.deepEqual([...new Set(examples.map((e) => e.kind))].sort(), ['Database', 'DatabaseFleet']);
    assert.deepEqual(
      csv.spec.customresourcedefinitions.owned.map((o) => `${o.name} ${o.version}`),
      ['databasefleets.example.com v1', 'databases.example.com v1'],
    );
  });

  test("the CSV's Deployment is the Kustomize base's Deployment", () => {
    const deployment = base.get('deployment.yaml')!.find((o) => o.kind === 'Deployment')! as Manifest & {
      metadata: { name: string; labels: Record<string, string> };
      spec: unknown;
    };
    const [strategy] = csv.spec.install.spec.deployments;
    assert.equal(csv.spec.install.spec.deployments.length, 1);
    assert.equal(strategy!.name, deployment.metadata.name);
    assert.deepEqual(strategy!.label, deployment.metadata.labels);
    assert.deepEqual(strategy!.spec, deployment.spec);
  });

  test("the CSV's permissions are the Kustomize base's RBAC rules", () => {
    const rbac = base.get('rbac.yaml')!;
    const boundTo = (bindingKind: string, roleKind: string) => {
      const bindings = rbac.filter((o) => o.kind === bindingKind) as (Manifest & { roleRef: { name: string } })[];
      return rbac
        .filter((o) => o.kind === roleKind && bindings.some((b) => b.roleRef.name === o.metadata.name))
        .flatMap((o) => (o as Manifest & { rules: unknown[] }).rules);
    };
    assert.deepEqual(csv.spec.install.spec.clusterPermissions, [
      { serviceAccountName: 'database-operator', rules: boundTo('ClusterRoleBinding', 'ClusterRole') },
    ]);
    assert.deepEqual(csv.spec.install.spec.permissions, [
      { serviceAccountName: 'database-operator', rules: boundTo('RoleBinding', 'Role') },
    ]);
  });

  test("the bundle's CRDs carry the Kustomize base's schemas; OLM, not cert-manager, wires the conversion webhook", async () => {
    for (const crd of base.get('crd.yaml')! as (Manifest & { spec: { group: string; names: { plural: string } } })[]) {
      const [bundled] = documents(
        await readFile(join(out, `manifests/${crd.spec.group}_${crd.spec.names.plural}.yaml`), 'utf8'),
      ) as (typeof crd)[];
      const { conversion, ...spec } = crd.spec as typeof crd.spec & { conversion?: unknown };
      assert.deepEqual(bundled!.spec, spec, crd.metadata.name);
      if (conversion)
        assert.ok(
          csv.spec.webhookdefinitions?.some(
            (w) => w.type === 'ConversionWebhook' && w.conversionCRDs?.includes(crd.metadata.name),
          ),
          `${crd.metadata.name}: a ConversionWebhook definition`,
        );
    }
  });

  test('every generated manifest, base and bundle, uses only APIs each Kubernetes 1.25–1.37 serves, undeprecated', async () => {
    const objects = [...base.values()].flat();
    for (const name of await readdir(join(out, 'manifests')))
      objects.push(...documents(await readFile(join(out, 'manifests', name), 'utf8')));
    for (let minor = 25; minor <= 37; minor++)
      for (const object of objects)
        assert.equal(
          checkApiVersion(object, { major: 1, minor }),
          undefined,
          `${object.apiVersion} ${object.kind} at 1.${minor}`,
        );
    for (const minor of ['1.25', '1.37']) {
      const run = await cli(
        'generate',
        'manifests',
        '--config',
        'operator-runtime.config.ts',
        '--out',
        join(out, `base-${minor}`),
        '--kubernetes-version',
        minor,
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '', `no deprecation warning at ${minor}`);
    }
  });
});
