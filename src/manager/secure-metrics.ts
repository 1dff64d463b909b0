/**
 * Opt-in secure serving of /metrics: HTTPS (a certificate from files, or a self-signed one made at
 * start) and only for callers whose bearer token may `get` the path (TokenReview +
 * SubjectAccessReview), as kubebuilder's scaffold serves metrics on :8443. Also the default bind
 * address: every interface inside a pod, loopback elsewhere (a laptop, a CI runner).
 */
import { readFile } from 'node:fs/promises';
import type { Client } from '../client/client.js';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { EndpointServerOptions } from './http-server.js';
import { createSelfSignedCertificate } from './self-signed-certificate.js';
import { TokenReviewAuthorizer } from './token-review-authorizer.js';

/** kubebuilder's secure metrics port. @defaultValue 8443 */
export const DEFAULT_SECURE_METRICS_PORT = 8443;

export interface SecureMetricsOptions {
  /** PEM certificate file; with `keyFile`. Without both, a self-signed certificate is made at start. */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** Names for the self-signed certificate. @defaultValue ['localhost', '127.0.0.1', '::1'] */
  readonly selfSignedHosts?: readonly string[];
  /** How long a token's review is reused. @defaultValue DEFAULT_AUTH_CACHE_TTL_MS */
  readonly authCacheTtlMs?: number;
}

/** '0.0.0.0' in a pod (KUBERNETES_SERVICE_HOST is set there), '127.0.0.1' anywhere else. */
export function defaultBindHost(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.KUBERNETES_SERVICE_HOST ? '0.0.0.0' : '127.0.0.1';
}

export function validateSecureMetricsOptions(options: SecureMetricsOptions): void {
  if (Boolean(options.certFile) !== Boolean(options.keyFile)) throw new InvalidOptionError('secureMetrics', 'certFile and keyFile go together');
}

/** The metrics server's TLS material and authorization check. */
export async function secureEndpointOptions(
  options: SecureMetricsOptions,
  deps: { readonly client: Pick<Client, 'create'>; readonly clock: Clock; readonly logger: Logger },
): Promise<EndpointServerOptions> {
  validateSecureMetricsOptions(options);
  const tls = options.certFile && options.keyFile
    ? { cert: await readFile(options.certFile), key: await readFile(options.keyFile) }
    : createSelfSignedCertificate(options.selfSignedHosts ? { hosts: options.selfSignedHosts } : {});
  const authorizer = new TokenReviewAuthorizer({
    client: deps.client,
    clock: deps.clock,
    logger: deps.logger,
    ...(options.authCacheTtlMs !== undefined ? { cacheTtlMs: options.authCacheTtlMs } : {}),
  });
  return { tls, authorize: (req, path) => authorizer.authorize(req.headers.authorization, path) };
}
