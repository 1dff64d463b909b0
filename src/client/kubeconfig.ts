/**
 * kubeconfig files: parsing, merging several (`KUBECONFIG=a:b`) the way kubectl does, and resolving
 * one context into what the transport needs (server, TLS material, a credential). Relative file
 * paths inside a file are relative to that file, as in client-go.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { OperatorRuntimeError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import { realClock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import {
  BasicAuthCredential,
  NO_CREDENTIAL,
  StaticTokenCredential,
  TokenFileCredential,
  describeReadError,
  readLocalFile,
  type Credential,
} from './credentials.js';
import { ExecCredentialPlugin, type ExecConfig } from './exec-credential.js';
import { makeTlsConfig, type TlsConfig } from './tls-config.js';
import {
  KubeconfigLimitError,
  LOCAL_KUBECONFIG_LIMITS,
  checkKubeconfigText,
  type KubeconfigLimits,
} from './kubeconfig-limits.js';

export {
  DEFAULT_MAX_KUBECONFIG_ALIASES,
  DEFAULT_MAX_KUBECONFIG_BYTES,
  DEFAULT_MAX_KUBECONFIG_DEPTH,
  DEFAULT_MAX_KUBECONFIG_NODES,
  KubeconfigLimitError,
  LOCAL_KUBECONFIG_LIMITS,
  checkKubeconfigSize,
  type KubeconfigLimitName,
  type KubeconfigLimits,
} from './kubeconfig-limits.js';

export interface KubeconfigCluster {
  server: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
  [key: string]: unknown;
}

export interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  exec?: ExecConfig;
  'auth-provider'?: { name: string; config?: Record<string, string> };
  as?: string;
  'as-uid'?: string;
  'as-groups'?: string[];
  [key: string]: unknown;
}

export interface KubeconfigContext {
  cluster: string;
  user?: string;
  namespace?: string;
  [key: string]: unknown;
}

/** A kubeconfig as plain data (the YAML file's shape). */
export interface Kubeconfig {
  apiVersion?: string;
  kind?: string;
  'current-context'?: string;
  clusters?: { name: string; cluster: KubeconfigCluster }[];
  users?: { name: string; user: KubeconfigUser }[];
  contexts?: { name: string; context: KubeconfigContext }[];
  [key: string]: unknown;
}

/** A kubeconfig that cannot be used. Messages name fields and files, never credential values. */
export class KubeconfigError extends OperatorRuntimeError {
  declare readonly code: 'ERR_KUBECONFIG';
  /** Path of the offending field, e.g. `users[0].user.token`, when one field is at fault. */
  readonly field: string | undefined;
  constructor(message: string, options?: { cause?: unknown; field?: string }) {
    super('ERR_KUBECONFIG', message, options);
    this.field = options?.field;
  }
}

/** Impersonation headers requested by the kubeconfig user (`as`, `as-groups`, `as-uid`). */
export interface Impersonation {
  readonly user: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
}

/** Everything needed to talk to one cluster as one identity. */
export interface ClusterConfig {
  /** Base URL of the API server, e.g. `https://127.0.0.1:6443` (may carry a path prefix). */
  readonly server: string;
  readonly tls: TlsConfig;
  readonly credential: Credential;
  /** Default namespace of the context (`default` if it names none). */
  readonly namespace: string;
  readonly impersonate?: Impersonation;
  /** Name of the context this came from, if any. */
  readonly contextName?: string;
  /** HTTP(S) proxy to tunnel through (`proxy-url`); non-enumerable, as it may carry a password. */
  readonly proxyUrl?: string;
}

export interface ResolveKubeconfigOptions {
  /** Context to use instead of `current-context`. */
  readonly context?: string;
  /** Clock for token-file refresh and exec credential expiry. @defaultValue realClock */
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Environment visible to exec plugins. @defaultValue process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const require = createRequire(import.meta.url);

/**
 * yaml, loaded the first time a kubeconfig is parsed: an operator in a pod reads its service
 * account and never parses YAML, and the module costs ~3 MiB resident (docs/footprint.md).
 */
function parseYaml(text: string): unknown {
  const yaml: typeof import('yaml') = require('yaml');
  // uniqueKeys false: yaml's own duplicate check compares every key of a mapping with every other
  // (quadratic); the Set below does it in one pass. logLevel 'error': warnings (an unknown tag,
  // say) would go to process warnings quoting the source.
  const lineCounter = new yaml.LineCounter();
  const doc = yaml.parseDocument(text, { logLevel: 'error', uniqueKeys: false, lineCounter });
  if (doc.errors.length > 0) throw doc.errors[0];
  let problem: string | undefined;
  yaml.visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = pair.key;
        const line = (node: unknown): number | string =>
          yaml.isNode(node) && node.range ? lineCounter.linePos(node.range[0]).line : '?';
        // Keys are named by line only: a key may be anything, a credential included.
        if (key !== null && !yaml.isScalar(key)) {
          problem = `has a mapping key that is not a plain value (line ${line(key)})`;
          return yaml.visit.BREAK;
        }
        const name = key === null ? '' : String(key.value);
        if (seen.has(name)) {
          problem = `repeats a key in one mapping (line ${line(key)})`;
          return yaml.visit.BREAK;
        }
        seen.add(name);
      }
      return undefined;
    },
  });
  if (problem) throw new KubeconfigError(`kubeconfig ${problem}`);
  // maxAliasCount: yaml's bound on how far aliases expand, behind the count of aliases already checked.
  return doc.toJS({ maxAliasCount: 100 });
}

/**
 * Parses kubeconfig YAML (or JSON). File paths inside are made absolute against `baseDir` (the
 * file's folder). The text is checked against `limits` before the YAML parser sees it (the parser's
 * cost is not linear in the text): size, nesting depth, nodes and aliases, each with a default
 * (see {@link KubeconfigLimits}); crossing one throws {@link KubeconfigLimitError}. A mapping that
 * repeats a key is refused, as before.
 */
export function parseKubeconfig(text: string, baseDir = process.cwd(), limits: KubeconfigLimits = {}): Kubeconfig {
  // Untyped callers: the limits below measure a string.
  if (typeof text !== 'string') throw new KubeconfigError(`kubeconfig must be text, not ${typeof text}`);
  checkKubeconfigText(text, limits);
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    if (err instanceof KubeconfigError) throw err;
    // The YAML error quotes the source, which may hold a token: keep only its kind.
    throw new KubeconfigError(`kubeconfig is not valid YAML (${(err as Error).name})`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isMapping(doc)) throw new KubeconfigError('kubeconfig is not a YAML mapping');
  return makePathsAbsolute(validateKubeconfig(doc), baseDir);
}

/**
 * Checks that a plain object has the kubeconfig shape, field by field, before use: a wrong type is a
 * `KubeconfigError` naming the field's path (`users[0].user.token`), never its value.
 */
export function asKubeconfig(obj: object): Kubeconfig {
  if (!isMapping(obj)) throw new KubeconfigError('kubeconfig must be an object');
  return validateKubeconfig(obj);
}

/**
 * Reads and parses one of the operator's own kubeconfig files, within `limits` (see
 * {@link parseKubeconfig}). @defaultValue limits: {@link LOCAL_KUBECONFIG_LIMITS}
 */
export async function loadKubeconfigFile(
  file: string,
  limits: KubeconfigLimits = LOCAL_KUBECONFIG_LIMITS,
): Promise<Kubeconfig> {
  let text: string;
  try {
    text = await readLocalFile(file);
  } catch (err) {
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${describeReadError(err)}`, { cause: err });
  }
  try {
    return parseKubeconfig(text, path.dirname(path.resolve(file)), limits);
  } catch (err) {
    // With KUBECONFIG=a:b the user needs to know which file to fix.
    if (err instanceof KubeconfigError) throw new KubeconfigError(`${err.message} (in ${file})`, { field: err.field });
    if (err instanceof KubeconfigLimitError)
      throw new KubeconfigLimitError(err.limit, err.max, err.actual, {
        ...(err.line !== undefined ? { line: err.line } : {}),
        file,
      });
    throw err;
  }
}

/**
 * Merges kubeconfigs as kubectl does for `KUBECONFIG=a:b`: the first file to define a cluster,
 * user or context name wins, and the first non-empty `current-context` wins.
 */
export function mergeKubeconfigs(configs: readonly Kubeconfig[]): Kubeconfig {
  const out: Required<Pick<Kubeconfig, 'clusters' | 'users' | 'contexts'>> & Kubeconfig = {
    clusters: [],
    users: [],
    contexts: [],
  };
  const seen = { clusters: new Set<string>(), users: new Set<string>(), contexts: new Set<string>() };
  for (const kc of configs) {
    if (!out['current-context'] && kc['current-context']) out['current-context'] = kc['current-context'];
    for (const key of ['clusters', 'users', 'contexts'] as const) {
      for (const entry of kc[key] ?? []) {
        if (seen[key].has(entry.name)) continue;
        seen[key].add(entry.name);
        (out[key] as { name: string }[]).push(entry);
      }
    }
  }
  return out;
}

/** The files kubectl would read: `KUBECONFIG` (path-list, empties skipped) or `~/.kube/config`. */
export function defaultKubeconfigPaths(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home = homedir(),
): string[] {
  const list = env.KUBECONFIG;
  if (list) return list.split(path.delimiter).filter((p) => p.length > 0);
  return [path.join(home, '.kube', 'config')];
}

/**
 * Loads and merges the default kubeconfig files; files that do not exist are skipped, as kubectl
 * does. Returns undefined when none exists.
 */
export async function loadDefaultKubeconfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home = homedir(),
): Promise<Kubeconfig | undefined> {
  const files = defaultKubeconfigPaths(env, home).filter((f) => existsSync(f));
  if (files.length === 0) return undefined;
  const configs: Kubeconfig[] = [];
  for (const f of files) configs.push(await loadKubeconfigFile(f));
  return mergeKubeconfigs(configs);
}

/** Resolves one context of a kubeconfig into a `ClusterConfig`, reading referenced files. */
export async function resolveKubeconfig(
  kc: Kubeconfig,
  options: ResolveKubeconfigOptions = {},
): Promise<ClusterConfig> {
  // Typed callers can still hand over anything at run time (parsed JSON, a cast).
  if (!isMapping(kc)) throw new KubeconfigError('kubeconfig must be an object');
  validateKubeconfig(kc);
  const contextName = options.context ?? kc['current-context'];
  if (!contextName) throw new KubeconfigError('kubeconfig has no current-context and no context was given');
  const context = kc.contexts?.find((c) => c.name === contextName)?.context;
  if (!context) throw new KubeconfigError(`context "${contextName}" not found in kubeconfig`);
  if (!context.cluster) throw new KubeconfigError(`context "${contextName}" names no cluster`);
  const clusterIndex = kc.clusters?.findIndex((c) => c.name === context.cluster) ?? -1;
  const cluster = clusterIndex >= 0 ? kc.clusters![clusterIndex]!.cluster : undefined;
  if (!cluster)
    throw new KubeconfigError(`cluster "${context.cluster}" of context "${contextName}" not found in kubeconfig`);
  const userEntry = context.user ? kc.users?.find((u) => u.name === context.user) : undefined;
  if (context.user && !userEntry) missingUser(context.user);
  const user: KubeconfigUser = userEntry?.user ?? {};
  if (
    cluster['insecure-skip-tls-verify'] === true &&
    (cluster['certificate-authority-data'] || cluster['certificate-authority'])
  ) {
    const field = `clusters[${clusterIndex}].cluster.insecure-skip-tls-verify`;
    throw new KubeconfigError(
      `kubeconfig ${field}: a CA may not be given with insecure-skip-tls-verify (client-go refuses it too)`,
      { field },
    );
  }

  const server = validateServer(cluster.server, context.cluster);
  const proxyUrl = validateProxyUrl(cluster['proxy-url'], context.cluster);
  const ca = await dataOrFile(
    cluster['certificate-authority-data'],
    cluster['certificate-authority'],
    'certificate-authority',
  );
  const cert = await dataOrFile(user['client-certificate-data'], user['client-certificate'], 'client-certificate');
  const key = await dataOrFile(user['client-key-data'], user['client-key'], 'client-key');
  if (Boolean(cert) !== Boolean(key))
    throw new KubeconfigError(
      `user "${context.user}" has a client certificate without a key or a key without a certificate`,
    );
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  const tls = makeTlsConfig({
    ca,
    cert,
    key,
    // Verification stays on unless the kubeconfig says so in as many words.
    rejectUnauthorized: !insecure,
    servername: cluster['tls-server-name'],
  });

  const clock = options.clock ?? realClock;
  const credential = makeCredential(user, context.user ?? '', {
    clock,
    logger: options.logger,
    env: options.env,
    cluster: {
      server,
      'certificate-authority-data': ca,
      'insecure-skip-tls-verify': insecure,
      'tls-server-name': cluster['tls-server-name'],
    },
  });
  const impersonate: Impersonation | undefined = user.as
    ? { user: user.as, uid: user['as-uid'], groups: user['as-groups'] }
    : undefined;
  const config: ClusterConfig = {
    server,
    tls,
    credential,
    namespace: context.namespace || 'default',
    impersonate,
    contextName,
  };
  // Non-enumerable: a proxy URL may carry the proxy's password.
  if (proxyUrl) Object.defineProperty(config, 'proxyUrl', { value: proxyUrl, enumerable: false });
  return config;
}

function validateProxyUrl(proxy: unknown, clusterName: string): string | undefined {
  if (proxy === undefined || proxy === null || proxy === '') return undefined;
  let url: URL;
  try {
    url = new URL(String(proxy));
  } catch {
    throw new KubeconfigError(`cluster "${clusterName}" has an invalid proxy-url`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new KubeconfigError(
      `cluster "${clusterName}" proxy-url scheme ${url.protocol} is not supported (http and https are)`,
    );
  }
  return url.href;
}

function missingUser(name: string): never {
  throw new KubeconfigError(`user "${name}" not found in kubeconfig`);
}

function validateServer(server: unknown, clusterName: string): string {
  if (typeof server !== 'string' || !server) throw new KubeconfigError(`cluster "${clusterName}" has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`cluster "${clusterName}" has an invalid server URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new KubeconfigError(`cluster "${clusterName}" server must be http(s)`);
  // Userinfo in a URL ends up in logs and error messages; credentials belong in the user entry.
  if (url.username || url.password)
    throw new KubeconfigError(`cluster "${clusterName}" server URL must not contain credentials`);
  return server.replace(/\/+$/, '');
}

async function dataOrFile(
  data: string | undefined,
  file: string | undefined,
  field: string,
): Promise<string | undefined> {
  // As in client-go, inline data wins over a file reference.
  // Already checked to be base64 by validateKubeconfig.
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  if (!file) return undefined;
  let text: string;
  try {
    text = await readLocalFile(file);
  } catch (err) {
    throw new KubeconfigError(`cannot read ${field} file ${file}: ${describeReadError(err)}`, { cause: err });
  }
  // An empty CA file would otherwise mean "trust the system's public roots".
  if (field === 'certificate-authority' && text.trim() === '')
    throw new KubeconfigError(`${field} file ${file} is empty: refusing to fall back to the system's public roots`);
  return text;
}

function makeCredential(
  user: KubeconfigUser,
  userName: string,
  deps: {
    clock: Clock;
    logger?: Logger;
    env?: Readonly<Record<string, string | undefined>>;
    cluster: Record<string, unknown>;
  },
): Credential {
  const methods = [
    user.token || user.tokenFile ? 'token' : undefined,
    user.username !== undefined || user.password !== undefined ? 'basic' : undefined,
    user.exec ? 'exec' : undefined,
    user['auth-provider'] ? 'auth-provider' : undefined,
  ].filter((m) => m !== undefined);
  if (methods.length > 1)
    throw new KubeconfigError(`user "${userName}" has more than one authentication method (${methods.join(', ')})`);
  if (user['auth-provider']) {
    throw new KubeconfigError(
      `user "${userName}" uses auth-provider "${user['auth-provider'].name}", which is not supported; use an exec plugin`,
    );
  }
  // A token file is re-read so a rotated token is picked up; an inline token only seeds it.
  if (user.tokenFile) return new TokenFileCredential(user.tokenFile, { clock: deps.clock, initialToken: user.token });
  if (user.token) return new StaticTokenCredential(user.token);
  if (user.username !== undefined || user.password !== undefined)
    return new BasicAuthCredential(user.username ?? '', user.password ?? '');
  if (user.exec)
    return new ExecCredentialPlugin(user.exec, {
      clock: deps.clock,
      logger: deps.logger,
      env: deps.env,
      cluster: deps.cluster,
    });
  return NO_CREDENTIAL;
}

function makePathsAbsolute(kc: Kubeconfig, baseDir: string): Kubeconfig {
  const abs = (p: unknown): unknown =>
    typeof p === 'string' && p && !path.isAbsolute(p) ? path.resolve(baseDir, p) : p;
  for (const c of kc.clusters ?? []) {
    if (c?.cluster?.['certificate-authority'])
      c.cluster['certificate-authority'] = abs(c.cluster['certificate-authority']) as string;
  }
  for (const u of kc.users ?? []) {
    if (!u?.user) continue;
    for (const field of ['client-certificate', 'client-key', 'tokenFile'] as const) {
      if (u.user[field]) u.user[field] = abs(u.user[field]) as string;
    }
    // client-go resolves a relative exec command only when it names a path, not a bare program.
    const cmd = u.user.exec?.command;
    if (u.user.exec && cmd && cmd.includes(path.sep) && !path.isAbsolute(cmd))
      u.user.exec.command = path.resolve(baseDir, cmd);
  }
  return kc;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const INTERACTIVE_MODES = new Set(['Never', 'IfAvailable', 'Always']);
// Standard base64 as Go's encoding/json decodes []byte (padding required; line breaks ignored).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Field-by-field shape check of a kubeconfig, in the types client-go's `clientcmd/api/v1` declares.
 * Unknown fields are ignored, as client-go ignores them. Errors name the path, never the value: the
 * value may be a credential.
 */
function validateKubeconfig(doc: Record<string, unknown>): Kubeconfig {
  const fail = (field: string, what: string): never => {
    throw new KubeconfigError(`kubeconfig ${field} ${what}`, { field });
  };
  const optional = (v: unknown): boolean => v === undefined || v === null;
  const str = (obj: Record<string, unknown>, key: string, at: string): void => {
    if (!optional(obj[key]) && typeof obj[key] !== 'string') fail(`${at}.${key}`, 'must be a string');
  };
  const bool = (obj: Record<string, unknown>, key: string, at: string): void => {
    if (!optional(obj[key]) && typeof obj[key] !== 'boolean') fail(`${at}.${key}`, 'must be true or false');
  };
  const base64 = (obj: Record<string, unknown>, key: string, at: string): void => {
    str(obj, key, at);
    const v = obj[key];
    if (typeof v === 'string' && !BASE64.test(v.replace(/[\r\n]/g, ''))) fail(`${at}.${key}`, 'must be base64-encoded');
  };
  const mapping = (v: unknown, at: string): Record<string, unknown> | undefined => {
    if (optional(v)) return undefined;
    if (!isMapping(v)) fail(at, 'must be a mapping');
    return v as Record<string, unknown>;
  };
  const stringList = (v: unknown, at: string): void => {
    if (optional(v)) return;
    if (!Array.isArray(v)) fail(at, 'must be a list of strings');
    // Index loops: a sparse list's holes are entries too.
    const list = v as unknown[];
    for (let i = 0; i < list.length; i++) if (typeof list[i] !== 'string') fail(`${at}[${i}]`, 'must be a string');
  };
  const namedList = (
    key: 'clusters' | 'users' | 'contexts',
    inner: 'cluster' | 'user' | 'context',
    check: (body: Record<string, unknown>, at: string) => void,
  ): void => {
    const list = doc[key];
    if (optional(list)) return;
    if (!Array.isArray(list)) fail(key, 'must be a list of named entries');
    const entries = list as unknown[];
    for (let i = 0; i < entries.length; i++) {
      const at = `${key}[${i}]`;
      if (!isMapping(entries[i])) fail(at, 'must be a mapping');
      const e = entries[i] as Record<string, unknown>;
      if (typeof e.name !== 'string') fail(`${at}.name`, 'must be a string');
      const body = mapping(e[inner], `${at}.${inner}`);
      if (body) check(body, `${at}.${inner}`);
    }
  };

  for (const key of ['apiVersion', 'kind'])
    if (!optional(doc[key]) && typeof doc[key] !== 'string') fail(key, 'must be a string');
  if (!optional(doc['current-context']) && typeof doc['current-context'] !== 'string')
    fail('current-context', 'must be a string');

  namedList('clusters', 'cluster', (c, at) => {
    for (const k of ['server', 'certificate-authority', 'tls-server-name', 'proxy-url']) str(c, k, at);
    base64(c, 'certificate-authority-data', at);
    bool(c, 'insecure-skip-tls-verify', at);
    bool(c, 'disable-compression', at);
  });

  namedList('users', 'user', (u, at) => {
    for (const k of ['token', 'tokenFile', 'username', 'password', 'client-certificate', 'client-key', 'as', 'as-uid'])
      str(u, k, at);
    base64(u, 'client-certificate-data', at);
    base64(u, 'client-key-data', at);
    stringList(u['as-groups'], `${at}.as-groups`);
    const extra = mapping(u['as-user-extra'], `${at}.as-user-extra`);
    for (const [k, v] of Object.entries(extra ?? {})) stringList(v, `${at}.as-user-extra.${k}`);
    const provider = mapping(u['auth-provider'], `${at}.auth-provider`);
    if (provider) {
      str(provider, 'name', `${at}.auth-provider`);
      const cfg = mapping(provider.config, `${at}.auth-provider.config`);
      for (const k of Object.keys(cfg ?? {})) str(cfg!, k, `${at}.auth-provider.config`);
    }
    const exec = mapping(u.exec, `${at}.exec`);
    if (exec) {
      const eat = `${at}.exec`;
      if (typeof exec.command !== 'string' || exec.command === '') fail(`${eat}.command`, 'must be a non-empty string');
      if (typeof exec.apiVersion !== 'string') fail(`${eat}.apiVersion`, 'must be a string');
      stringList(exec.args, `${eat}.args`);
      str(exec, 'installHint', eat);
      bool(exec, 'provideClusterInfo', eat);
      if (!optional(exec.interactiveMode) && !INTERACTIVE_MODES.has(exec.interactiveMode as string)) {
        fail(`${eat}.interactiveMode`, 'must be Never, IfAvailable or Always');
      }
      if (!optional(exec.env)) {
        if (!Array.isArray(exec.env)) fail(`${eat}.env`, 'must be a list of {name, value}');
        const env = exec.env as unknown[];
        for (let i = 0; i < env.length; i++) {
          if (!isMapping(env[i])) fail(`${eat}.env[${i}]`, 'must be a mapping');
          const e = env[i] as Record<string, unknown>;
          if (typeof e.name !== 'string') fail(`${eat}.env[${i}].name`, 'must be a string');
          if (typeof e.value !== 'string') fail(`${eat}.env[${i}].value`, 'must be a string');
        }
      }
    }
  });

  namedList('contexts', 'context', (c, at) => {
    for (const k of ['cluster', 'user', 'namespace']) str(c, k, at);
  });
  return doc as Kubeconfig;
}
