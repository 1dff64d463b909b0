/**
 * The HTTP client of the envtest download: undici through `EnvHttpProxyAgent`, so `HTTPS_PROXY`,
 * `HTTP_PROXY` and `NO_PROXY` (either case) apply as they do for curl and Go's setup-envtest.
 */
import { EnvHttpProxyAgent, interceptors, type Dispatcher } from 'undici';
import { omitUndefined } from '../../core/omit-undefined.js';

/** An agent honouring the proxy variables of `env` (not of `process.env`, so tests can pass their own). */
export function proxyAwareAgent(env: NodeJS.ProcessEnv): Dispatcher {
  const pick = (name: string): string | undefined => env[name] ?? env[name.toLowerCase()] ?? undefined;
  const httpProxy = pick('HTTP_PROXY');
  const httpsProxy = pick('HTTPS_PROXY');
  const noProxy = pick('NO_PROXY');
  // GitHub release links redirect to their storage host.
  // An empty variable counts as unset.
  return new EnvHttpProxyAgent(
    omitUndefined({
      httpProxy: httpProxy || undefined,
      httpsProxy: httpsProxy || undefined,
      noProxy: noProxy || undefined,
    }),
  ).compose(interceptors.redirect({ maxRedirections: 5 }));
}

/** Loopback hosts, where plain http cannot be tampered with on the way. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
