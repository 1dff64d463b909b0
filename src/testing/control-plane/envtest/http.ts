/**
 * The HTTP client of the envtest download: undici through `EnvHttpProxyAgent`, so `HTTPS_PROXY`,
 * `HTTP_PROXY` and `NO_PROXY` (either case) apply as they do for curl and Go's setup-envtest.
 * Redirects are followed here, not by undici, so that every hop is held to the https-or-loopback
 * rule before it is requested.
 */
import { EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
import { omitUndefined } from '../../../core/omit-undefined.js';
import type { EnvtestError } from './envtest-error.js';

/** How many redirects a download follows (GitHub release links take one, to their storage host). */
export const MAX_REDIRECTIONS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** An agent honouring the proxy variables of `env` (not of `process.env`, so tests can pass their own). */
export function proxyAwareAgent(env: NodeJS.ProcessEnv): Dispatcher {
  const pick = (name: string): string | undefined => env[name] ?? env[name.toLowerCase()] ?? undefined;
  const httpProxy = pick('HTTP_PROXY');
  const httpsProxy = pick('HTTPS_PROXY');
  const noProxy = pick('NO_PROXY');
  // An empty variable counts as unset.
  return new EnvHttpProxyAgent(
    omitUndefined({
      httpProxy: httpProxy || undefined,
      httpsProxy: httpsProxy || undefined,
      noProxy: noProxy || undefined,
    }),
  );
}

/** Loopback hosts, where plain http cannot be tampered with on the way. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * A URL as messages show it: scheme, host and path. Never its userinfo, query or fragment: a mirror's
 * or a storage host's URL may carry a token there.
 */
export function displayUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return String(url)
      .replace(/[?#][^]*$/, '')
      .replace(/\/\/[^/]*@/, '//');
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** The rule for every URL of the envtest download, as messages state it. */
export const DOWNLOAD_URL_RULE = 'https only, plain http on loopback only';

/**
 * Whether `url` may be fetched for the envtest download: https, or plain http on loopback. The index
 * carries the checksums, and the archives the binaries that get run.
 */
export function isAllowedDownloadUrl(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

export interface CheckedRequestOptions {
  readonly dispatcher: Dispatcher;
  readonly signal?: AbortSignal;
  readonly headersTimeout: number;
  readonly bodyTimeout: number;
  /** The error for a URL, or redirect, the rule refuses; `reason` names it by scheme, host and path. */
  readonly refused: (reason: string) => EnvtestError;
}

/**
 * GETs `url`, following up to {@link MAX_REDIRECTIONS} redirects, each `Location` checked by
 * {@link isAllowedDownloadUrl} before anything connects to it. The answer is the first that is not a
 * redirect; network failures are undici's errors, refusals `refused`'s.
 */
export async function checkedRequest(url: URL, options: CheckedRequestOptions): Promise<Dispatcher.ResponseData> {
  if (!isAllowedDownloadUrl(url)) throw options.refused(`${displayUrl(url)} is not allowed (${DOWNLOAD_URL_RULE})`);
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const res = await request(current, {
      dispatcher: options.dispatcher,
      headersTimeout: options.headersTimeout,
      bodyTimeout: options.bodyTimeout,
      ...omitUndefined({ signal: options.signal }),
    });
    const location = res.headers.location;
    if (!REDIRECT_STATUSES.has(res.statusCode) || typeof location !== 'string') return res;
    await res.body.dump();
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw options.refused(`${displayUrl(current)} redirected to a Location that is not a URL`);
    }
    if (!isAllowedDownloadUrl(next))
      throw options.refused(
        `${displayUrl(current)} redirected to ${displayUrl(next)}, which is not allowed (${DOWNLOAD_URL_RULE}); nothing connected to it`,
      );
    if (redirects >= MAX_REDIRECTIONS)
      throw options.refused(`more than ${MAX_REDIRECTIONS} redirects, the last to ${displayUrl(next)}`);
    current = next;
  }
}
