/**
 * A control plane in another process, for tests of TestEnv's existing-cluster mode: the child
 * runs a normal TestEnv (with kube-controller-manager, so namespaces are really deleted), prints
 * its admin kubeconfig path and waits; the test hands that kubeconfig to `TestEnv.start` as an
 * "existing" cluster, as a user hands over kind's. Closing the child's stdin (or the parent dying)
 * stops it.
 *
 * Run as a script: `node --import tsx control-plane-process.ts` prints one JSON line
 * `{"kubeconfigPath":…,"server":…}` once ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ControlPlaneProcess {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly pid: number;
  /** Stops the child's TestEnv and waits for the child to exit. */
  stop(): Promise<void>;
}

const SELF = fileURLToPath(import.meta.url);

/** Starts the child and resolves once its control plane is ready. */
export async function startControlPlaneProcess(
  options: { readonly timeoutMs?: number } = {},
): Promise<ControlPlaneProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SELF], {
    env: {
      ...process.env,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --conditions=operator-runtime-source`.trim(),
      OPERATOR_RUNTIME_USE_EXISTING_CLUSTER: 'false',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await new Promise<{ kubeconfigPath: string; server: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the control-plane process did not become ready')),
      options.timeoutMs ?? 120_000,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line) as { kubeconfigPath: string; server: string });
      } catch {
        reject(new Error(`the control-plane process printed ${line}`));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the control-plane process exited (${child.exitCode ?? child.signalCode})`));
    });
  });
  return {
    ...ready,
    pid: child.pid!,
    stop: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}

if (process.argv[1] === SELF) {
  const { TestEnv } = await import('../test-env.js');
  const env = await TestEnv.start({ controllerManager: true, existingCluster: false });
  process.stdout.write(`${JSON.stringify({ kubeconfigPath: env.kubeconfigPath, server: env.server })}\n`);
  const stop = (): void => void env.stop().then(() => process.exit(0));
  process.stdin.on('end', stop);
  process.stdin.resume();
  process.once('SIGTERM', stop);
}
