/**
 * The few pieces of undici the runtime uses, loaded from their own files instead of undici's index.
 * The index also loads fetch, WebSocket, EventSource, the cache stores, the mocks and every
 * interceptor: ~7 MiB of resident memory the operator never uses (scripts/packaging/import-cost.bench.ts,
 * docs/footprint.md). undici's package.json has no `exports` map, so its files are importable; the
 * classes are the very ones the index exports (undici-parts.test.ts holds that to the pinned
 * version). `require`, not `import`: loading stays synchronous and on first use, and skips Node's
 * ESM-to-CommonJS translation.
 */
import { createRequire } from 'node:module';
import type { Dispatcher, Pool as UndiciPool, Agent as UndiciAgent, ProxyAgent as UndiciProxyAgent } from 'undici';

const require = createRequire(import.meta.url);

/** undici's `Pool` (one origin, keep-alive connections). */
export const Pool: typeof UndiciPool = require('undici/lib/dispatcher/pool.js');

/** undici's `Agent` (a pool per origin). */
export const Agent: typeof UndiciAgent = require('undici/lib/dispatcher/agent.js');

/**
 * undici's `ProxyAgent`, loaded when a client first needs a proxy. From the index: the agent
 * tunnels with `dispatcher.connect()`, a method only the index adds to `Dispatcher.prototype`.
 */
export function proxyAgentClass(): typeof UndiciProxyAgent {
  const undici: typeof import('undici') = require('undici');
  return undici.ProxyAgent;
}

type RequestMethod = (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

/**
 * `dispatcher.request(options)` for any dispatcher, including one built from these files: undici's
 * index is what adds `request` to `Dispatcher.prototype`, so without it the method is called as
 * the index itself does (`api.request` with the dispatcher as `this`).
 */
const requestMethod: RequestMethod = require('undici/lib/api/api-request.js');

export function dispatcherRequest(
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> {
  return requestMethod.call(dispatcher, options);
}

const { parseURL }: { parseURL(url: string | URL): URL } = require('undici/lib/core/util.js');

/**
 * undici's top-level `request(url, { dispatcher, ... })` for an absolute URL, as its index builds
 * it: the URL checked by undici (protocol, port), then origin and path handed to the dispatcher.
 */
export function requestUrl(
  url: string | URL,
  options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { readonly dispatcher: Dispatcher },
): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = options;
  const parsed = parseURL(url);
  return dispatcherRequest(dispatcher, {
    ...rest,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
  });
}
