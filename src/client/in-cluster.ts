/**
 * In-cluster configuration: the service account's token (re-read as the kubelet rotates it), CA and
 * namespace, and the API server address from KUBERNETES_SERVICE_HOST/PORT (IPv6 hosts bracketed).
 */
import { readFile } from 'node:fs/promises';
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import { TokenFileCredential } from './credentials.js';
import { KubeconfigError, type ClusterConfig } from './kubeconfig.js';
import { makeTlsConfig } from './tls-config.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterOptions {
  /** Folder holding `token`, `ca.crt` and `namespace`. @defaultValue SERVICE_ACCOUNT_DIR */
  readonly serviceAccountDir?: string;
  /** @defaultValue process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly clock?: Clock;
  /** How often the token file is re-read. @defaultValue DEFAULT_TOKEN_FILE_REFRESH_MS */
  readonly tokenRefreshMs?: number;
}

/** True when the process looks like it runs in a pod (service env vars present). */
export function isInCluster(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return Boolean(env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT);
}

export async function inClusterConfig(options: InClusterOptions = {}): Promise<ClusterConfig> {
  const env = options.env ?? process.env;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port)
    throw new KubeconfigError(
      'not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set',
    );
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const credential = new TokenFileCredential(`${dir}/token`, {
    clock: options.clock ?? realClock,
    refreshMs: options.tokenRefreshMs,
  });
  // Fail at start, not at the first request, when the token is not mounted.
  await credential.get();
  let ca: string;
  try {
    ca = await readFile(`${dir}/ca.crt`, 'utf8');
  } catch (err) {
    throw new KubeconfigError(
      `cannot read service account CA ${dir}/ca.crt: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      { cause: err },
    );
  }
  // An empty CA would otherwise mean "trust the public roots" for the cluster's own API server.
  if (ca.trim() === '')
    throw new KubeconfigError(
      `service account CA ${dir}/ca.crt is empty: refusing to fall back to the system's public roots`,
    );
  let namespace = 'default';
  try {
    namespace = (await readFile(`${dir}/namespace`, 'utf8')).trim() || 'default';
  } catch {
    // Older or customised pods may not mount it; client-go falls back to "default" too.
  }
  const hostPart = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    tls: makeTlsConfig({ ca, rejectUnauthorized: true }),
    credential,
    namespace,
  };
}
