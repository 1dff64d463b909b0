/**
 * Consistency audit: replays etcd's own history of a key prefix and reports lost updates and
 * out-of-order status writes — the etcd revision check turned into a tool.
 *
 * Reading the history (`readEtcdHistory`): etcd 3.4's JSON gateway (`POST /v3/watch`, the same RPC
 * as `etcdctl watch --rev=<start> --prefix --prev-kv`), so no etcdctl binary is needed. A watch
 * never ends by itself and sends nothing once caught up, so the reader first writes a sentinel key
 * just past the prefix (`<prefix without its last byte><last byte + 1>`, e.g.
 * `/registry/example.com/widgets0` — outside every resource the API server watches) and watches the
 * range [prefix, sentinel]: events of one watch arrive in revision order, so seeing the sentinel's
 * PUT means every earlier event of the prefix was delivered. The sentinel is then deleted. The
 * audit therefore writes two revisions to the etcd it reads; a compacted start revision is an
 * error (`ERR_CONSISTENCY_AUDIT`), not a silent partial history.
 *
 * What is checked (`analyzeHistory`), per key, along the chain of revisions of one object (a
 * DELETE ends the chain; a PUT with etcd `version` 1 starts a new one). The previous revision of
 * the first event comes from the watch's prev_kv, when etcd still has it.
 *
 * Lost updates — a stored value that was not derived from the revision before it:
 * - `uid-replaced`: a PUT on a live key carries another `metadata.uid` (an object overwrote one it
 *   had not seen, instead of create failing with AlreadyExists).
 * - `generation-decreased` / `generation-skipped`: `metadata.generation` went down, or up by more
 *   than one. The API server computes generation from the stored object (+1 on a spec change), so
 *   either means the value did not come from the previous revision.
 * - `write-not-conditioned-on-read` (with `writes`): a write the client recorded as "read revision
 *   r, wrote revision w" whose PUT at w replaced a revision other than r — the client overwrote a
 *   revision it had not seen (a request without resourceVersion, e.g. a plain merge patch).
 * - `recorded-write-missing` (with `writes`): no PUT of that key at the recorded revision.
 *   A recorded write answered with the revision it read was a no-op on the server and is skipped.
 *
 * Out-of-order status writes — status written for a generation older than one already recorded:
 * - `observed-generation-decreased`: `status.observedGeneration` went down (or was removed).
 * - `condition-observed-generation-decreased`: the same for one `status.conditions[type]`.
 * - `observed-generation-ahead`: `status.observedGeneration` above `metadata.generation`.
 *
 * History integrity (neither, but the audit is void): `history-gap` — etcd's per-key `version`
 * did not rise by one, or a create (version 1) follows a live value with no DELETE between, so
 * events are missing from the input.
 *
 * Only JSON values are analysed (custom resources). Built-in kinds are stored as protobuf
 * (`k8s\0` prefix): they are counted as `opaqueValues` and get the etcd-level checks only.
 * `notConverged` lists live objects whose final `status.observedGeneration` differs from their
 * final `metadata.generation` (the final status does not reflect the final spec).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { OperatorRuntimeError } from '../../core/errors.js';
import { omitUndefined } from '../../core/omit-undefined.js';
import { decodeHistoryKv } from './history-values.js';

/** One key-value as etcd stores it. Keys are decoded as UTF-8 (Kubernetes keys are ASCII). */
export interface HistoryKv {
  readonly key: string;
  readonly createRevision: number;
  readonly modRevision: number;
  /** Per-key write count since creation: 1 on create, +1 per PUT. */
  readonly version: number;
  readonly value: Uint8Array;
}

/** One event of a key's history; for a DELETE, `kv.modRevision` is the delete's revision. */
export interface HistoryEvent {
  readonly type: 'PUT' | 'DELETE';
  readonly kv: HistoryKv;
  /** The key's value before this event, when etcd still had it. */
  readonly prev?: HistoryKv;
}

/** A write a client made, as it recorded it: the revision it read and the one it wrote. */
export interface RecordedWrite {
  /** etcd key, e.g. `registryKey('/registry/example.com/widgets/', 'default', 'w1')`. */
  readonly key: string;
  /** `metadata.resourceVersion` the write carried as its precondition (what the client read). */
  readonly readRevision: number | string;
  /** `metadata.resourceVersion` of the API server's answer. */
  readonly writtenRevision: number | string;
  /** Who wrote (replica, controller), carried into findings. */
  readonly writer?: string;
}

export type LostUpdateKind =
  | 'uid-replaced'
  | 'generation-decreased'
  | 'generation-skipped'
  | 'write-not-conditioned-on-read'
  | 'recorded-write-missing';
export type OutOfOrderKind =
  'observed-generation-decreased' | 'condition-observed-generation-decreased' | 'observed-generation-ahead';
export type FindingKind = LostUpdateKind | OutOfOrderKind | 'history-gap';

export interface AuditFinding {
  readonly kind: FindingKind;
  readonly key: string;
  /** Revision of the offending write. */
  readonly revision: number;
  /** Revision it replaced, when known. */
  readonly previousRevision?: number;
  readonly detail: string;
}

export interface AuditReport {
  readonly prefix: string;
  readonly startRevision: number;
  /** Last revision covered (the sentinel's revision − 1 when read from etcd). */
  readonly endRevision: number;
  readonly keys: number;
  readonly puts: number;
  readonly deletes: number;
  /** PUTs whose value is not JSON (protobuf built-ins): etcd-level checks only. */
  readonly opaqueValues: number;
  readonly lostUpdates: number;
  readonly outOfOrderStatusWrites: number;
  readonly historyGaps: number;
  readonly findings: readonly AuditFinding[];
  readonly notConverged: readonly {
    readonly key: string;
    readonly generation?: number;
    readonly observedGeneration?: number;
  }[];
}

export interface AnalyzeHistoryOptions {
  readonly prefix?: string;
  readonly startRevision?: number;
  readonly endRevision?: number;
  readonly writes?: readonly RecordedWrite[];
}

export interface ReadEtcdHistoryOptions {
  /** Client URL(s); the first that follows a leader is used. A TestEnv's `etcdEndpoints` fit. */
  readonly endpoints: string | readonly string[];
  /** Key prefix, e.g. `/registry/example.com/widgets/` (a trailing `/` keeps `widgetsets` out). */
  readonly prefix: string;
  /** First revision to replay (inclusive). */
  readonly startRevision: number;
  /** Gives up after this long. @defaultValue {@link DEFAULT_AUDIT_TIMEOUT_MS} */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface ConsistencyAuditOptions extends Omit<ReadEtcdHistoryOptions, 'endpoints'> {
  /** etcd client URL(s), or anything with `etcdEndpoints` (a TestEnv). */
  readonly etcd: string | readonly string[] | { readonly etcdEndpoints: readonly string[] };
  readonly writes?: readonly RecordedWrite[];
}

export const DEFAULT_AUDIT_TIMEOUT_MS = 60_000;

export class ConsistencyAuditError extends OperatorRuntimeError {
  declare readonly code: 'ERR_CONSISTENCY_AUDIT';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_CONSISTENCY_AUDIT', message, options);
  }
}

const LOST_UPDATE_KINDS: ReadonlySet<FindingKind> = new Set<LostUpdateKind>([
  'uid-replaced',
  'generation-decreased',
  'generation-skipped',
  'write-not-conditioned-on-read',
  'recorded-write-missing',
]);
const OUT_OF_ORDER_KINDS: ReadonlySet<FindingKind> = new Set<OutOfOrderKind>([
  'observed-generation-decreased',
  'condition-observed-generation-decreased',
  'observed-generation-ahead',
]);

/** Reads the history from etcd and analyses it. */
export async function auditConsistency(options: ConsistencyAuditOptions): Promise<AuditReport> {
  const endpoints =
    typeof options.etcd === 'string' || Array.isArray(options.etcd)
      ? (options.etcd as string | readonly string[])
      : (options.etcd as { etcdEndpoints: readonly string[] }).etcdEndpoints;
  const history = await readEtcdHistory({ ...options, endpoints });
  return analyzeHistory(history.events, {
    prefix: options.prefix,
    startRevision: options.startRevision,
    endRevision: history.endRevision,
    ...omitUndefined({ writes: options.writes }),
  });
}

/** The etcd key of a namespaced object under a resource prefix (`/registry/<group>/<plural>/`). */
export function registryKey(prefix: string, namespace: string, name: string): string {
  return `${prefix.endsWith('/') ? prefix : `${prefix}/`}${namespace}/${name}`;
}

interface ObjectState {
  readonly modRevision: number;
  readonly version: number;
  readonly json: boolean;
  readonly uid?: string;
  readonly generation?: number;
  readonly observedGeneration?: number;
  readonly conditions: ReadonlyMap<string, number>;
}

/** Pure analysis of a history (events in revision order); see the module comment for the checks. */
export function analyzeHistory(events: readonly HistoryEvent[], options: AnalyzeHistoryOptions = {}): AuditReport {
  const findings: AuditFinding[] = [];
  const live = new Map<string, ObjectState>();
  /** key → revision of a PUT → revision it replaced. */
  const replaced = new Map<string, Map<number, number | 'create' | 'unknown'>>();
  const keys = new Set<string>();
  let puts = 0;
  let deletes = 0;
  let opaqueValues = 0;
  let maxRevision = 0;

  for (const event of [...events].sort((a, b) => a.kv.modRevision - b.kv.modRevision)) {
    const { key } = event.kv;
    const revision = event.kv.modRevision;
    maxRevision = Math.max(maxRevision, revision);
    keys.add(key);
    if (!live.has(key) && event.prev) live.set(key, stateOf(event.prev));
    const last = live.get(key);
    if (event.type === 'DELETE') {
      deletes++;
      live.delete(key);
      continue;
    }
    puts++;
    const next = stateOf(event.kv);
    if (!next.json) opaqueValues++;
    const byRevision = replaced.get(key) ?? new Map<number, number | 'create' | 'unknown'>();
    replaced.set(key, byRevision);
    const add = (kind: FindingKind, detail: string): void => {
      findings.push({ kind, key, revision, ...(last ? { previousRevision: last.modRevision } : {}), detail });
    };

    if (event.kv.version === 1 || !last) {
      // A create (or the first sight of a key whose previous value etcd no longer has).
      byRevision.set(revision, event.kv.version === 1 ? 'create' : 'unknown');
      // etcd cannot do this (a PUT on a live key raises its version): the delete is missing.
      if (last && event.kv.version === 1)
        add('history-gap', 'a create replaced a live key without a delete between them');
      checkStatusAgainstSpec(next, add);
      live.set(key, next);
      continue;
    }
    byRevision.set(revision, last.modRevision);
    if (event.kv.version !== last.version + 1) {
      add('history-gap', `etcd version went from ${last.version} to ${event.kv.version}: events are missing`);
    }
    if (next.json && last.json) {
      if (last.uid !== undefined && next.uid !== last.uid)
        add('uid-replaced', `metadata.uid changed from ${last.uid} to ${String(next.uid)}`);
      if (last.generation !== undefined && next.generation !== undefined) {
        if (next.generation < last.generation)
          add('generation-decreased', `metadata.generation went from ${last.generation} to ${next.generation}`);
        else if (next.generation > last.generation + 1)
          add('generation-skipped', `metadata.generation went from ${last.generation} to ${next.generation}`);
      }
      if (
        last.observedGeneration !== undefined &&
        (next.observedGeneration === undefined || next.observedGeneration < last.observedGeneration)
      ) {
        add(
          'observed-generation-decreased',
          `status.observedGeneration went from ${last.observedGeneration} to ${String(next.observedGeneration)}`,
        );
      }
      for (const [type, before] of last.conditions) {
        const after = next.conditions.get(type);
        if (after !== undefined && after < before) {
          add(
            'condition-observed-generation-decreased',
            `condition ${type} observedGeneration went from ${before} to ${after}`,
          );
        }
      }
      checkStatusAgainstSpec(next, add);
    }
    live.set(key, next);
  }

  for (const w of options.writes ?? []) {
    const written = Number(w.writtenRevision);
    const read = Number(w.readRevision);
    const who = w.writer ? ` by ${w.writer}` : '';
    // The API server answers an update that changes nothing with the object as it was, without
    // writing: such a "write" answered with the revision it read left nothing in etcd to check.
    if (written === read) continue;
    const byRevision = replaced.get(w.key);
    if (!byRevision?.has(written)) {
      // Outside the replayed window: not evidence either way.
      if (options.endRevision !== undefined && written > options.endRevision) continue;
      if (options.startRevision !== undefined && written < options.startRevision) continue;
      findings.push({
        kind: 'recorded-write-missing',
        key: w.key,
        revision: written,
        detail: `a write${who} answered with revision ${written} is not in etcd's history`,
      });
      continue;
    }
    const previous = byRevision.get(written);
    if (previous === 'unknown') continue;
    const conditioned = previous === 'create' ? !(read > 0) : previous === read;
    if (!conditioned) {
      findings.push({
        kind: 'write-not-conditioned-on-read',
        key: w.key,
        revision: written,
        ...(typeof previous === 'number' ? { previousRevision: previous } : {}),
        detail: `a write${who} read revision ${read} but replaced ${previous === 'create' ? 'nothing (it created the key)' : `revision ${String(previous)}`}`,
      });
    }
  }

  const notConverged = [...live]
    .filter(([, s]) => s.json && s.generation !== undefined && s.observedGeneration !== s.generation)
    .map(([key, s]) => ({
      key,
      ...omitUndefined({ generation: s.generation, observedGeneration: s.observedGeneration }),
    }));

  return {
    prefix: options.prefix ?? '',
    startRevision: options.startRevision ?? 0,
    endRevision: options.endRevision ?? maxRevision,
    keys: keys.size,
    puts,
    deletes,
    opaqueValues,
    lostUpdates: findings.filter((f) => LOST_UPDATE_KINDS.has(f.kind)).length,
    outOfOrderStatusWrites: findings.filter((f) => OUT_OF_ORDER_KINDS.has(f.kind)).length,
    historyGaps: findings.filter((f) => f.kind === 'history-gap').length,
    findings,
    notConverged,
  };
}

function checkStatusAgainstSpec(s: ObjectState, add: (kind: FindingKind, detail: string) => void): void {
  if (s.observedGeneration !== undefined && s.generation !== undefined && s.observedGeneration > s.generation) {
    add(
      'observed-generation-ahead',
      `status.observedGeneration ${s.observedGeneration} is above metadata.generation ${s.generation}`,
    );
  }
}

function stateOf(kv: HistoryKv): ObjectState {
  const base = { modRevision: kv.modRevision, version: kv.version };
  const obj = decodeHistoryKv(kv);
  if (!obj) return { ...base, json: false, conditions: new Map() };
  const metadata = record(obj.metadata);
  const status = record(obj.status);
  const conditions = new Map<string, number>();
  if (Array.isArray(status?.conditions)) {
    for (const c of status.conditions as unknown[]) {
      const cond = record(c);
      if (typeof cond?.type === 'string' && typeof cond.observedGeneration === 'number')
        conditions.set(cond.type, cond.observedGeneration);
    }
  }
  return {
    ...base,
    json: true,
    ...(typeof metadata?.uid === 'string' ? { uid: metadata.uid } : {}),
    ...(typeof metadata?.generation === 'number' ? { generation: metadata.generation } : {}),
    ...(typeof status?.observedGeneration === 'number' ? { observedGeneration: status.observedGeneration } : {}),
    conditions,
  };
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

// ---- reading etcd ----------------------------------------------------------------------------

interface GatewayKv {
  key?: string;
  create_revision?: string;
  mod_revision?: string;
  version?: string;
  value?: string;
}

interface GatewayWatchResult {
  result?: {
    header?: { revision?: string };
    created?: boolean;
    canceled?: boolean;
    compact_revision?: string;
    cancel_reason?: string;
    events?: { type?: 'PUT' | 'DELETE'; kv?: GatewayKv; prev_kv?: GatewayKv }[];
  };
  error?: { message?: string };
}

/**
 * Replays every event of `prefix` from `startRevision` up to now (see the module comment for how
 * the end is found). Returns the events in revision order and the last revision covered.
 */
export async function readEtcdHistory(
  options: ReadEtcdHistoryOptions,
): Promise<{ events: HistoryEvent[]; endRevision: number }> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_AUDIT_TIMEOUT_MS;
  const signal = options.signal
    ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)])
    : AbortSignal.timeout(timeoutMs);
  const endpoint = await pickEndpoint(
    typeof options.endpoints === 'string' ? [options.endpoints] : options.endpoints,
    signal,
  );
  const prefix = Buffer.from(options.prefix, 'utf8');
  if (prefix.length === 0 || prefix[prefix.length - 1] === 0xff)
    throw new ConsistencyAuditError(`unsupported prefix ${JSON.stringify(options.prefix)}`);
  const sentinel = Buffer.from(prefix);
  sentinel[sentinel.length - 1]! += 1;
  const sentinelValue = `operator-runtime consistency audit ${randomBytes(8).toString('hex')}`;
  const put = (await gateway(
    endpoint,
    '/v3/kv/put',
    { key: b64(sentinel), value: b64(Buffer.from(sentinelValue)) },
    signal,
  )) as { header?: { revision?: string } };
  const sentinelRevision = Number(put.header?.revision);
  if (!Number.isInteger(sentinelRevision))
    throw new ConsistencyAuditError('etcd put of the sentinel returned no revision');
  try {
    const events = await watchUntil(endpoint, prefix, sentinel, options.startRevision, sentinelRevision, signal);
    return { events, endRevision: sentinelRevision - 1 };
  } finally {
    await gateway(endpoint, '/v3/kv/deleterange', { key: b64(sentinel) }, AbortSignal.timeout(5000)).catch(
      () => undefined,
    );
  }
}

async function watchUntil(
  endpoint: string,
  prefix: Buffer,
  sentinel: Buffer,
  startRevision: number,
  sentinelRevision: number,
  signal: AbortSignal,
): Promise<HistoryEvent[]> {
  const rangeEnd = Buffer.concat([sentinel, Buffer.from([0])]); // [prefix, sentinel] inclusive
  const ac = new AbortController();
  const onAbort = (): void => ac.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const events: HistoryEvent[] = [];
  try {
    const res = await request(`${endpoint}/v3/watch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        create_request: {
          key: b64(prefix),
          range_end: b64(rangeEnd),
          start_revision: String(startRevision),
          prev_kv: true,
        },
      }),
      signal: ac.signal,
      bodyTimeout: 0,
    });
    if (res.statusCode !== 200)
      throw new ConsistencyAuditError(`etcd watch answered ${res.statusCode}: ${await res.body.text()}`);
    let buffered = '';
    for await (const chunk of res.body) {
      buffered += (chunk as Buffer).toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line) continue;
        const message = JSON.parse(line) as GatewayWatchResult;
        if (message.error) throw new ConsistencyAuditError(`etcd watch failed: ${message.error.message ?? line}`);
        const result = message.result;
        if (result?.canceled || (result?.compact_revision && result.compact_revision !== '0')) {
          throw new ConsistencyAuditError(
            `etcd history from revision ${startRevision} is not available (compacted at ${result.compact_revision ?? '?'}): ${result.cancel_reason ?? 'watch canceled'}`,
          );
        }
        for (const e of result?.events ?? []) {
          if (!e.kv) continue;
          const kv = toKv(e.kv);
          const key = Buffer.from(e.kv.key ?? '', 'base64');
          if (key.equals(sentinel)) {
            if (kv.modRevision >= sentinelRevision) return events;
            continue;
          }
          if (!startsWith(key, prefix)) continue;
          events.push({
            type: e.type === 'DELETE' ? 'DELETE' : 'PUT',
            kv,
            ...(e.prev_kv ? { prev: toKv(e.prev_kv) } : {}),
          });
        }
      }
    }
    throw new ConsistencyAuditError('etcd watch ended before the sentinel was seen');
  } catch (err) {
    if (signal.aborted && !(err instanceof ConsistencyAuditError))
      throw new ConsistencyAuditError('reading etcd history timed out or was aborted', { cause: err });
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    ac.abort();
  }
}

/** The first endpoint that answers a status request and follows a leader (not a cut-off member). */
async function pickEndpoint(endpoints: readonly string[], signal: AbortSignal): Promise<string> {
  let lastError: unknown;
  for (const endpoint of endpoints) {
    try {
      const status = (await gateway(
        endpoint,
        '/v3/maintenance/status',
        {},
        AbortSignal.any([signal, AbortSignal.timeout(1000)]),
      )) as { leader?: string };
      if (status.leader && status.leader !== '0') return endpoint;
    } catch (err) {
      lastError = err;
    }
  }
  throw new ConsistencyAuditError(`no etcd endpoint with a leader among ${endpoints.join(', ')}`, { cause: lastError });
}

async function gateway(endpoint: string, path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
  const res = await request(`${endpoint}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new ConsistencyAuditError(`etcd ${path} answered ${res.statusCode}: ${text}`);
  return JSON.parse(text) as unknown;
}

function toKv(kv: GatewayKv): HistoryKv {
  return {
    key: Buffer.from(kv.key ?? '', 'base64').toString('utf8'),
    createRevision: Number(kv.create_revision ?? 0),
    modRevision: Number(kv.mod_revision ?? 0),
    version: Number(kv.version ?? 0),
    value: Buffer.from(kv.value ?? '', 'base64'),
  };
}

function startsWith(key: Buffer, prefix: Buffer): boolean {
  return key.length >= prefix.length && key.subarray(0, prefix.length).equals(prefix);
}

function b64(b: Buffer): string {
  return b.toString('base64');
}

/** One line per finding kind with counts, then the findings themselves (for test failure messages). */
export function formatAuditReport(report: AuditReport): string {
  const head =
    `audit ${report.prefix} revisions ${report.startRevision}..${report.endRevision}: ${report.keys} keys, ${report.puts} puts, ${report.deletes} deletes; ` +
    `lost updates ${report.lostUpdates}, out-of-order status writes ${report.outOfOrderStatusWrites}, history gaps ${report.historyGaps}, not converged ${report.notConverged.length}`;
  return [
    head,
    ...report.findings.map(
      (f) =>
        `  ${f.kind} ${f.key} @${f.revision}${f.previousRevision !== undefined ? ` (replaced ${f.previousRevision})` : ''}: ${f.detail}`,
    ),
  ].join('\n');
}
