/**
 * The operator's image, without Docker: lay out the runtime files with the script the Dockerfile
 * runs (compiled JS + production dependencies, operator-runtime from its packed tarball), then run
 * `node dist/main.js` as uid 65532 with the whole filesystem read-only and no writable /tmp — a
 * private mount namespace where / and /dev/shm are remounted read-only — against a TestEnv. It must
 * become ready and reconcile a Database. The runtime files' SBOM (`operator-runtime sbom --image`)
 * lists the packages the lockfile's production SBOM does. Needs root (unshare, mount, setpriv), as the chaos tests do.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, copyFile, link, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { KubeClient, type Kubeconfig } from 'operator-runtime';
import { TestEnv, eventually, freePort, readManifests } from 'operator-runtime/testing';
import { REPO, userEnv, withDist } from '../../scripts/packaging/dist.js';
import { runCli } from '../../src/cli/program.js';
import type { Database } from './src/database.js';
import { DATABASE } from './src/database.js';

const run = promisify(execFile);
const UID = 65532;
const NS = 'default';
const canSandbox = process.getuid?.() === 0 && process.platform === 'linux';

/**
 * argv that runs `command` as uid/gid 65532 in a private mount namespace where / (and so /tmp, the
 * app and everything on the root filesystem) and /dev/shm are read-only, as a container with
 * readOnlyRootFilesystem and no emptyDir would be.
 */
function sandboxed(command: readonly string[]): string[] {
  const script = [
    'mount --bind / /',
    'mount -o remount,bind,ro /',
    'mount -o remount,bind,ro /dev/shm',
    `exec setpriv --reuid ${UID} --regid ${UID} --clear-groups --pdeathsig SIGKILL -- "$@"`,
  ].join(' && ');
  return ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sandbox', ...command];
}

describe(
  'the operator image runtime files, as uid 65532 on a read-only filesystem',
  { skip: !canSandbox && 'needs root on Linux (unshare, mount, setpriv)', timeout: 600_000 },
  () => {
    let dir: string;
    let app: string;
    let node: string;
    let env: TestEnv;
    let client: KubeClient;
    let operator: ChildProcess | undefined;
    let output = '';

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'operator-runtime-image-'));
      await chmod(dir, 0o755); // the non-root user must reach the app and its kubeconfig
      app = join(dir, 'app');
      await withDist(() =>
        run(join(REPO, 'scripts/layout-runtime.sh'), [app], { env: userEnv(), maxBuffer: 64 << 20 }),
      );
      // The node running this test may live where uid 65532 cannot reach (/root/.cache for Node 24).
      node = join(dir, 'node');
      await link(process.execPath, node).catch(() => copyFile(process.execPath, node));
      await chmod(node, 0o755);
      env = await TestEnv.start({
        crds: await readManifests(new URL('./config/crd.yaml', import.meta.url)),
        controllerManager: true,
        simulatePods: { readyDelayMs: 100 },
      });
      client = await KubeClient.fromKubeconfig({ kubeconfig: env.kubeconfig as unknown as Kubeconfig });
    });

    after(async () => {
      if (operator && operator.exitCode === null && operator.signalCode === null) operator.kill('SIGKILL');
      await client?.close();
      await env?.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    test('the runtime files are the compiled operator and production dependencies only', async () => {
      const top = (await readdir(app)).sort();
      assert.deepEqual(top, ['dist', 'node_modules', 'package.json']);
      assert.deepEqual(
        (await readdir(join(app, 'dist'))).filter((f) => !f.endsWith('.js') && !f.endsWith('.js.map')),
        [],
      );
      const modules = await readdir(join(app, 'node_modules'));
      for (const dev of ['typescript', 'tsx', 'eslint', 'esbuild', '@types', 'fast-check', '@kubernetes'])
        assert.ok(!modules.includes(dev), `${dev} is not in the runtime`);
      // The package's sources and test scripts are left out of the image (scripts/layout-runtime.sh).
      assert.deepEqual((await readdir(join(app, 'node_modules/operator-runtime'))).sort(), [
        'LICENSE',
        'README.md',
        'dist',
        'package.json',
      ]);
    });

    test("the image's SBOM (sbom --image) lists the packages the lockfile's production SBOM lists, and the operator's own files", async () => {
      const sbom = async (args: string[]) => {
        const out = join(dir, `${args.includes('--image') ? 'image' : 'lockfile'}.cdx.json`);
        let stderr = '';
        const code = await runCli([...args, '--out', out], {
          cwd: REPO,
          stdout: () => undefined,
          stderr: (t) => void (stderr += t),
        });
        assert.equal(code, 0, stderr);
        return JSON.parse(await readFile(out, 'utf8')) as {
          components: { type: string; name: string; group?: string; hashes?: { alg: string }[] }[];
        };
      };
      const names = (bom: Awaited<ReturnType<typeof sbom>>, type: string) =>
        bom.components
          .filter((c) => c.type === type)
          .map((c) => (c.group ? `${c.group}/${c.name}` : c.name))
          .sort();
      const image = await sbom(['sbom', '--image', app]);
      const lockfile = await sbom(['sbom', '--project', 'examples/database-operator']);
      // Names, not versions: the layout installs from ranges, the lockfile pins.
      assert.deepEqual(names(image, 'library'), names(lockfile, 'library'));
      const files = names(image, 'file');
      assert.ok(files.includes('dist/main.js') && files.includes('package.json'), files.join(', '));
      assert.ok(image.components.filter((c) => c.type === 'file').every((c) => c.hashes?.[0]?.alg === 'SHA-256'));
    });

    test('the sandbox lets uid 65532 write nowhere: not /tmp, not the app, not /dev/shm', async () => {
      const probe = `id -u; for d in /tmp ${app} /dev/shm /var/tmp; do if touch "$d/probe-$$" 2>/dev/null; then echo "writable: $d"; rm -f "$d/probe-$$"; fi; done`;
      const { stdout } = await run(sandboxed(['sh', '-c', probe])[0]!, sandboxed(['sh', '-c', probe]).slice(1));
      assert.equal(stdout.trim(), String(UID));
    });

    test('node dist/main.js becomes ready and reconciles a Database', async (t) => {
      const kubeconfigPath = join(dir, 'kubeconfig.yaml');
      await writeFile(kubeconfigPath, stringify(env.kubeconfig), { mode: 0o644 });
      const [healthPort, metricsPort] = [await freePort(), await freePort()];
      const argv = sandboxed([node, 'dist/main.js']);
      const started = performance.now();
      operator = spawn(argv[0]!, argv.slice(1), {
        cwd: app,
        // No HOME: uid 65532 has no passwd entry here, the strictest case for the runtime's ~/.kube lookup.
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          NODE_ENV: 'production',
          KUBECONFIG: kubeconfigPath,
          BACKUP_SERVICE_URL: 'http://127.0.0.1:9', // creating a Database never calls it
          HEALTH_PORT: String(healthPort),
          METRICS_PORT: String(metricsPort),
          BIND_HOST: '127.0.0.1',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => operator!.once('exit', (code) => resolve(code)));
      operator.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      operator.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

      await eventually(
        'the operator reports ready',
        async () => {
          if (operator!.exitCode !== null)
            throw new Error(`the operator exited with ${operator!.exitCode}:\n${output}`);
          const response = await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined);
          return response?.status === 200 ? true : undefined;
        },
        { timeoutMs: 120_000 },
      );
      t.diagnostic(
        `ready ${Math.round(performance.now() - started)} ms after spawn (node ${process.versions.node}, compiled JS)`,
      );

      await client.create({
        apiVersion: 'example.com/v1',
        kind: 'Database',
        metadata: { name: 'image', namespace: NS },
        spec: { engine: 'postgres', version: '16', replicas: 1, storage: '1Gi' },
      });
      const db = await eventually(
        'the Database is Ready',
        async () => {
          if (operator!.exitCode !== null)
            throw new Error(`the operator exited with ${operator!.exitCode}:\n${output}`);
          const current = await client.get<Database>(DATABASE, 'image', { namespace: NS });
          return current.status?.phase === 'Ready' && current.status.observedGeneration === current.metadata.generation
            ? current
            : undefined;
        },
        { timeoutMs: 120_000 },
      );
      assert.equal(db.status?.readyReplicas, 1);

      operator.kill('SIGTERM');
      assert.equal(await exited, 0, output);
      assert.doesNotMatch(output, /EROFS|EACCES|read-only file system/i);
    });
  },
);
