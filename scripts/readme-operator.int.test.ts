/**
 * The README's "Writing an operator" sample is not only type-checked (doc-samples.test.ts): it is
 * run, as it stands, as a process against a TestEnv, and must do what its comments say — add its
 * finalizer, create the owned ConfigMap, write status with observedGeneration and a Ready
 * condition, follow a spec change, clean up and release the finalizer on delete, and exit 0 on
 * SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { KubeClient, isNotFound, type Condition } from 'operator-runtime';
import { TestEnv, eventually } from 'operator-runtime/testing';
import { REPO_ROOT, extractSamples } from './doc-samples.js';

const WEBSITE = { apiVersion: 'example.com/v1', kind: 'Website' };
const CONFIG_MAP = { apiVersion: 'v1', kind: 'ConfigMap' };
interface Website {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; generation?: number; finalizers?: string[]; resourceVersion?: string };
  spec: { html: string };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

/**
 * The sample's CRD, generated from the sample's own `defineCustomKind` (the README writes the schema
 * once; this is what `operator-runtime generate crds` would write for it).
 */
async function sampleCrd(sample: string, dir: string): Promise<Record<string, unknown>> {
  const definition = /^const WEBSITE = defineCustomKind\(\{\n[\s\S]*?^\}\);$/m.exec(sample)?.[0];
  if (!definition) assert.fail('the sample defines WEBSITE with defineCustomKind');
  const file = join(dir, 'website-crd.ts');
  writeFileSync(
    file,
    `import { Type, customResourceDefinition, defineCustomKind, k8s } from 'operator-runtime/crd';\n${definition}\nexport default customResourceDefinition(WEBSITE);\n`,
  );
  return ((await import(pathToFileURL(file).href)) as { default: Record<string, unknown> }).default;
}

/** The first ts sample after the README's "## Writing an operator" heading. */
function readmeOperatorSample(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const heading = readme.split('\n').indexOf('## Writing an operator');
  assert.ok(heading >= 0, 'README has a "Writing an operator" section');
  const sample = extractSamples(readme, 'README.md').find((s) => s.line > heading + 1);
  if (!sample?.code.includes('runUntilSignal')) assert.fail('the section starts with the operator sample');
  return sample.code;
}

describe('the README operator sample, run against a TestEnv', () => {
  let env: TestEnv;
  let client: KubeClient;
  let dir: string;
  let operator: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;

  before(async () => {
    mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
    // Inside the repository, so 'operator-runtime' resolves to src/ by the package's self-reference.
    dir = mkdtempSync(join(REPO_ROOT, '.tmp', 'readme-operator-'));
    const sample = readmeOperatorSample();
    writeFileSync(join(dir, 'operator.ts'), sample);
    env = await TestEnv.start({ crds: [await sampleCrd(sample, dir)] });
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    for (const name of ['ops', 'web']) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    operator = spawn(
      process.execPath,
      ['--conditions=operator-runtime-source', '--import', 'tsx', join(dir, 'operator.ts')],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, KUBECONFIG: env.kubeconfigPath },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    operator.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    operator.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    exited = new Promise((resolve) => operator.on('exit', (code) => resolve(code)));
  });

  after(async () => {
    if (operator && operator.exitCode === null) operator.kill('SIGKILL');
    await client?.close();
    await env?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const ready = (w: Website) => w.status?.conditions?.find((c) => c.type === 'Ready');

  it('creates the owned ConfigMap, adds its finalizer and writes status with observedGeneration and a Ready condition', async () => {
    await client.create<Website>({
      ...WEBSITE,
      metadata: { name: 'home', namespace: 'web' },
      spec: { html: '<h1>v1</h1>' },
    });
    const cm = await eventually(
      'the ConfigMap holds the page',
      async () => {
        const c = await client.get<ConfigMap>(CONFIG_MAP, 'home-page', { namespace: 'web' }).catch(() => undefined);
        return c?.data?.['index.html'] === '<h1>v1</h1>' ? c : undefined;
      },
      { timeoutMs: 60_000 },
    ).catch((err: unknown) => assert.fail(`${String(err)}\noperator output:\n${output}`));
    const site = await eventually('status is current', async () => {
      const w = await client.get<Website>(WEBSITE, 'home', { namespace: 'web' });
      return w.status?.observedGeneration === w.metadata.generation && ready(w)?.status === 'True' ? w : undefined;
    });
    assert.deepEqual(site.metadata.finalizers, ['example.com/unpublish']);
    assert.equal(ready(site)?.reason, 'Published');
    const owner = cm.metadata?.ownerReferences?.[0];
    assert.equal(owner?.kind, 'Website');
    assert.equal(owner?.controller, true);
  });

  it('follows a spec change: the ConfigMap is patched and observedGeneration moves to the new generation', async () => {
    const changed = await client.patch<Website>(
      WEBSITE,
      'home',
      { spec: { html: '<h1>v2</h1>' } },
      { type: 'merge', namespace: 'web' },
    );
    await eventually(
      'the ConfigMap holds the new page',
      async () =>
        (await client.get<ConfigMap>(CONFIG_MAP, 'home-page', { namespace: 'web' })).data?.['index.html'] ===
        '<h1>v2</h1>',
    );
    await eventually(
      'observedGeneration is the new generation',
      async () =>
        (await client.get<Website>(WEBSITE, 'home', { namespace: 'web' })).status?.observedGeneration ===
        changed.metadata.generation,
    );
  });

  it('on delete, runs its cleanup and releases the finalizer, so the Website goes away', async () => {
    await client.delete(WEBSITE, 'home', { namespace: 'web' });
    await eventually('the Website is gone', async () => {
      try {
        await client.get(WEBSITE, 'home', { namespace: 'web' });
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    });
    await eventually('the cleanup logged', () => output.includes('unpublished'));
  });

  it('exits 0 on SIGTERM', async () => {
    operator.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  });
});
