/**
 * TLS material for one cluster connection. The private key is a non-enumerable property so that
 * logging or JSON-serialising a config never prints it.
 */
import { InvalidOptionError } from '../core/errors.js';

export interface TlsConfig {
  /** PEM CA bundle to trust instead of the system roots. */
  readonly ca?: string;
  /** PEM client certificate. */
  readonly cert?: string;
  /** PEM client key (non-enumerable: invisible to `console.log` and `JSON.stringify`). */
  readonly key?: string;
  /** False only when the kubeconfig says `insecure-skip-tls-verify: true`. */
  readonly rejectUnauthorized: boolean;
  /** SNI / verification name (`tls-server-name`). */
  readonly servername?: string;
}

export function makeTlsConfig(init: {
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  rejectUnauthorized: boolean;
  servername?: string | undefined;
}): TlsConfig {
  // A CA that was given but is blank used to be dropped, so the system's public roots were trusted.
  if (init.ca !== undefined && init.ca.trim() === '')
    throw new InvalidOptionError(
      'ca',
      'is empty (a CA bundle was given but holds no certificate); leave it out to use the system roots',
    );
  const tls: { -readonly [K in keyof TlsConfig]: TlsConfig[K] } = { rejectUnauthorized: init.rejectUnauthorized };
  if (init.ca) tls.ca = init.ca;
  if (init.cert) tls.cert = init.cert;
  if (init.servername) tls.servername = init.servername;
  if (init.key) Object.defineProperty(tls, 'key', { value: init.key, enumerable: false });
  return Object.freeze(tls);
}
