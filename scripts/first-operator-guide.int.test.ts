/**
 * docs/your-first-operator.md's operator is not only type-checked (doc-samples.test.ts): it is run,
 * as it stands, as a process against a TestEnv, and must do what the guide says — give a CronTask
 * its ServiceAccount, ConfigMap and Job, report RunReady=False until the Job succeeds, then Ready
 * with status.lastRun, delete its dependents before its finalizer goes, and exit 0 on SIGTERM.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { KubeClient, isNotFound, kinds, type Condition } from 'operator-runtime';
import { TestEnv, eventually } from 'operator-runtime/testing';
import { REPO_ROOT, extractSamples } from './doc-samples.js';

const GUIDE = 'docs/your-first-operator.md';
const CRON_TASK = { apiVersion: 'example.com/v1', kind: 'CronTask' };
interface CronTask {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid?: string; finalizers?: string[] };
  spec: { everyMinutes: number; image: string; script: string };
  status?: { observedGeneration?: number; conditions?: Condition[]; lastRun?: string };
}

/** The guide's CRD, generated from its own `defineCustomKind`. */
async function guideCrd(sample: string, dir: string): Promise<Record<string, unknown>> {
  const definition = /^const CRON_TASK = defineCustomKind\(\{\n[\s\S]*?^\}\);$/m.exec(sample)?.[0];
  if (!definition) assert.fail('the guide defines CRON_TASK with defineCustomKind');
  const file = join(dir, 'crontask-crd.ts');
  writeFileSync(
    file,
    `import { Type, customResourceDefinition, defineCustomKind, k8s } from 'operator-runtime/crd';\n${definition}\nexport default customResourceDefinition(CRON_TASK);\n`,
  );
  return ((await import(pathToFileURL(file).href)) as { default: Record<string, unknown> }).default;
}

/** The first ts sample after the guide's "## The whole operator" heading. */
function guideSample(): string {
  const guide = readFileSync(join(REPO_ROOT, GUIDE), 'utf8');
  const heading = guide.split('\n').indexOf('## The whole operator');
  assert.ok(heading >= 0, 'the guide has a "The whole operator" section');
  const sample = extractSamples(guide, GUIDE).find((s) => s.line > heading + 1);
  if (!sample?.code.includes('runUntilSignal')) assert.fail('the section starts with the operator');
  return sample.code;
}

describe("the guide's CronTask operator, run against a TestEnv", () => {
  let env: TestEnv;
  let client: KubeClient;
  let dir: string;
  let operator: ChildProcess;
  let output = '';
  let exited: Promise<number | null>;
  let jobName = '';

  before(async () => {
    mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
    dir = mkdtempSync(join(REPO_ROOT, '.tmp', 'first-operator-'));
    const sample = guideSample();
    writeFileSync(join(dir, 'operator.ts'), sample);
    env = await TestEnv.start({ crds: [await guideCrd(sample, dir)] });
    client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig });
    operator = spawn(
      process.execPath,
      ['--conditions=operator-runtime-source', '--import', 'tsx', join(dir, 'operator.ts')],
      { cwd: REPO_ROOT, env: { ...process.env, KUBECONFIG: env.kubeconfigPath }, stdio: ['ignore', 'pipe', 'pipe'] },
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

  const read = () => client.get<CronTask>(CRON_TASK, 'hello', { namespace: 'default' });
  const condition = (t: CronTask, type: string) => t.status?.conditions?.find((c) => c.type === type);
  const gone = (p: Promise<unknown>) =>
    p.then(
      () => false,
      (err: unknown) => isNotFound(err),
    );

  it('gives a CronTask its ServiceAccount, ConfigMap and Job, and reports the run not ready yet', async () => {
    // A day-long window: the run's name cannot change while the test runs (but at midnight UTC).
    await client.create<CronTask>({
      ...CRON_TASK,
      metadata: { name: 'hello', namespace: 'default' },
      spec: { everyMinutes: 1440, image: 'busybox:1.36', script: 'echo hello' },
    });
    const task = await eventually(
      'the CronTask reports its run',
      async () => {
        const t = await read();
        return condition(t, 'RunReady')?.reason === 'NotReady' ? t : undefined;
      },
      { timeoutMs: 60_000 },
    ).catch((err: unknown) => assert.fail(`${String(err)}\noperator output:\n${output}`));
    assert.equal(condition(task, 'RunnerReady')?.status, 'True');
    assert.equal(condition(task, 'ScriptReady')?.status, 'True');
    assert.equal(condition(task, 'Ready')?.status, 'False');
    assert.deepEqual(task.metadata.finalizers, ['example.com/crontask']);
    const script = await client.get(kinds.ConfigMap, 'hello-script', { namespace: 'default' });
    assert.equal(script.data?.['run.sh'], 'echo hello');
    assert.equal(script.metadata?.ownerReferences?.[0]?.uid, task.metadata.uid);
    const jobs = await client.list(kinds.Job, { namespace: 'default', labelSelector: 'example.com/crontask=hello' });
    assert.equal(jobs.items.length, 1);
    const job = jobs.items[0]!;
    jobName = job.metadata!.name!;
    assert.equal(job.spec?.template.spec?.serviceAccountName, 'hello-runner');
    assert.equal(job.spec?.template.spec?.volumes?.[0]?.configMap?.name, 'hello-script');
  });

  it('turns Ready with status.lastRun once the Job succeeded', async () => {
    await client.patchStatus(kinds.Job, jobName, { status: { succeeded: 1 } }, { type: 'merge', namespace: 'default' });
    const task = await eventually('the CronTask is Ready', async () => {
      const t = await read();
      return condition(t, 'Ready')?.status === 'True' ? t : undefined;
    });
    assert.equal(task.status?.lastRun, jobName);
    assert.equal(condition(task, 'RunReady')?.message, '1 succeeded, 0 failed');
  });

  it('on delete, deletes the Job, ServiceAccount and ConfigMap, then lets the CronTask go', async () => {
    await client.delete(CRON_TASK, 'hello', { namespace: 'default' });
    await eventually('the CronTask and its dependents are gone', async () => {
      const all = await Promise.all([
        gone(read()),
        gone(client.get(kinds.Job, jobName, { namespace: 'default' })),
        gone(client.get(kinds.ServiceAccount, 'hello-runner', { namespace: 'default' })),
        gone(client.get(kinds.ConfigMap, 'hello-script', { namespace: 'default' })),
      ]);
      return all.every(Boolean);
    });
  });

  it('exits 0 on SIGTERM', async () => {
    operator.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  });
});
