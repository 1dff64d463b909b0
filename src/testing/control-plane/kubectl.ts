import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { OperatorRuntimeError } from '../../core/errors.js';

const run = promisify(execFile);

/** kubectl exited non-zero; the message carries its stderr. */
export class KubectlError extends OperatorRuntimeError {
  declare readonly code: 'ERR_KUBECTL';

  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_KUBECTL', message, options);
  }
}

/**
 * Runs the machine's kubectl against a kubeconfig — a real client independent of ours, for tests.
 * Rejects with kubectl's stderr in the message when it exits non-zero.
 */
export async function kubectl(kubeconfigPath: string, args: readonly string[], input?: string): Promise<string> {
  const child = run('kubectl', [`--kubeconfig=${kubeconfigPath}`, ...args], {
    env: { ...process.env, KUBECONFIG: kubeconfigPath },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    void stderr;
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new KubectlError(`kubectl ${args.join(' ')} failed: ${(e.stderr ?? e.message).trim()}`, { cause: err });
  }
}
