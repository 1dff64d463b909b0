/**
 * Opt-in secure serving of /metrics: HTTPS (a certificate from files, or a self-signed one made at
 * start) and only for callers whose bearer token may `get` the path (TokenReview +
 * SubjectAccessReview), as kubebuilder's scaffold serves metrics on :8443. Also the default bind
 * address: every interface inside a pod, loopback elsewhere (a laptop, a CI runner). A certificate
 * from files is reloaded as it rotates, by the webhook server's reloader.
 */
import type { Creator } from '../client/contracts.js';
import type { Clock } from '../core/clock.js';
import { InvalidOptionError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { CertificateReloader } from '../webhook/certificate-reloader.js';
import type { EndpointServerOptions, TlsSource } from './http-server.js';
import { createSelfSignedCertificate } from '../webhook/self-signed-certificate.js';
import { TokenReviewAuthorizer } from './token-review-authorizer.js';

/** kubebuilder's secure metrics port. @defaultValue 8443 */
export const DEFAULT_SECURE_METRICS_PORT = 8443;

export interface SecureMetricsOptions {
  /**
   * PEM certificate file; with `keyFile`. Re-read when the files change (and every
   * `certPollIntervalMs`), as the webhook server does; new connections get the new pair. Without
   * both, a self-signed certificate is made at start.
   */
  readonly certFile?: string;
  readonly keyFile?: string;
  /** How often the certificate files are re-read besides watching them. @defaultValue DEFAULT_CERT_POLL_INTERVAL_MS (10 s) */
  readonly certPollIntervalMs?: number;
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
  if (Boolean(options.certFile) !== Boolean(options.keyFile))
    throw new InvalidOptionError('secureMetrics', 'certFile and keyFile go together');
  if (
    options.certPollIntervalMs !== undefined &&
    !(Number.isFinite(options.certPollIntervalMs) && options.certPollIntervalMs > 0)
  ) {
    throw new InvalidOptionError('secureMetrics.certPollIntervalMs', 'must be a positive number of milliseconds');
  }
}

/** The metrics server's TLS material and authorization check. */
export async function secureEndpointOptions(
  options: SecureMetricsOptions,
  deps: { readonly client: Creator; readonly clock: Clock; readonly logger: Logger },
): Promise<EndpointServerOptions> {
  validateSecureMetricsOptions(options);
  const { certFile, keyFile } = options;
  // Read once at start, this used to serve the first certificate until a restart (issue 24).
  const tlsSource =
    certFile && keyFile ? reloadingCertificate(certFile, keyFile, options.certPollIntervalMs, deps) : undefined;
  const tls = tlsSource ? undefined : createSelfSignedCertificate(omitUndefined({ hosts: options.selfSignedHosts }));
  const authorizer = new TokenReviewAuthorizer({
    client: deps.client,
    clock: deps.clock,
    logger: deps.logger,
    ...omitUndefined({ cacheTtlMs: options.authCacheTtlMs }),
  });
  return {
    ...omitUndefined({ tls, tlsSource }),
    authorize: (req, path) => authorizer.authorize(req.headers.authorization, path),
  };
}

function reloadingCertificate(
  certFile: string,
  keyFile: string,
  pollIntervalMs: number | undefined,
  deps: { readonly clock: Clock; readonly logger: Logger },
): TlsSource {
  let reloader: CertificateReloader | undefined;
  return {
    start(onChange) {
      reloader = new CertificateReloader({
        certFile,
        keyFile,
        clock: deps.clock,
        logger: deps.logger,
        onChange,
        ...omitUndefined({ pollIntervalMs }),
      });
      return reloader.start();
    },
    stop() {
      reloader?.stop();
    },
  };
}
