/**
 * A client that reports every write it makes as an {@link ObjectWrite} (verb, object, and the
 * fields changed as a JSON merge patch, Secret values redacted) and, in plan mode, sends every
 * write as a server-side dry run (`dryRun=All`) so nothing is persisted. Reads pass through
 * untouched. The manager wraps its `client` and `apiClient` with it when the console's per-object
 * history or plan mode is on: that is where reconcilers write.
 */
import { applyArguments } from '../client/apply-configuration.js';
import type { Client } from '../client/contracts.js';
import type { ObjectLike } from '../client/client-options.js';
import type { ResourceType } from '../client/discovery.js';
import { REDACTED } from '../core/redact-text.js';
import { createMergePatch, isPlainObject } from '../helpers/merge-patch.js';
import { describeError } from '../console/redact-message.js';
import type { ObjectWrite } from '../console/reconcile-writes.js';

export interface ObservedWritesOptions {
  /** Send every write with `dryRun=All` (plan mode). */
  readonly dryRun: boolean;
  /** Told of every write once it returned or failed; must not throw. */
  readonly onWrite: (write: ObjectWrite) => void;
  /** The object as the cache holds it now, if it does (never a request): the "before" of a diff. */
  readonly before?: (type: ResourceType, namespace: string | undefined, name: string) => unknown;
}

type Verb = ObjectWrite['verb'];

export function observedWritesClient(client: Client, options: ObservedWritesOptions): Client {
  const { dryRun, onWrite } = options;
  const before = options.before ?? (() => undefined);
  const dry = <O extends object | undefined>(opts: O): O => (dryRun ? ({ ...opts, dryRun: true } as O) : opts);

  /** Runs one write and reports it, whether it returned or threw. */
  async function observe<T>(
    verb: Verb,
    status: boolean,
    target: { type: ResourceType; namespace: string | undefined; name: string },
    asked: unknown,
    send: () => Promise<T>,
  ): Promise<T> {
    const previous = verb === 'create' ? undefined : before(target.type, target.namespace, target.name);
    const base = {
      verb,
      ...(status ? { subresource: 'status' as const } : {}),
      apiVersion: target.type.apiVersion,
      kind: target.type.kind,
      ...(target.namespace !== undefined ? { namespace: target.namespace } : {}),
      name: target.name,
      dryRun,
    };
    try {
      const response = await send();
      const after = verb === 'delete' ? undefined : response;
      onWrite({ ...base, diff: writeDiff(target.type, verb, previous, after, asked) });
      return response;
    } catch (err) {
      onWrite({ ...base, diff: writeDiff(target.type, verb, undefined, undefined, asked), error: describeError(err) });
      throw err;
    }
  }

  const of = (obj: ObjectLike, namespace: string | undefined) => ({
    type: { apiVersion: obj.apiVersion ?? '', kind: obj.kind ?? '' },
    namespace: obj.metadata?.namespace ?? namespace,
    name: obj.metadata?.name ?? obj.metadata?.generateName ?? '',
  });

  return {
    get mapper() {
      return client.mapper;
    },
    get watchList() {
      return client.watchList;
    },
    get: (...args) => client.get(...args),
    listPage: (...args) => client.listPage(...args),
    listPages: (...args) => client.listPages(...args),
    list: (...args) => client.list(...args),
    watch: (...args) => client.watch(...args),
    create: (obj, opts) => observe('create', false, of(obj, opts?.namespace), obj, () => client.create(obj, dry(opts))),
    update: (obj, opts) =>
      observe('update', opts?.subresource === 'status', of(obj, opts?.namespace), obj, () =>
        client.update(obj, dry(opts)),
      ),
    updateStatus: (obj, opts) =>
      observe('update', true, of(obj, opts?.namespace), obj, () => client.updateStatus(obj, dry(opts))),
    patch: (type, name, patch, opts) =>
      observe('patch', opts.subresource === 'status', { type, namespace: opts.namespace, name }, patch, () =>
        client.patch(type, name, patch, dry(opts)),
      ),
    patchStatus: (type, name, patch, opts) =>
      observe('patch', true, { type, namespace: opts?.namespace, name }, patch, () =>
        client.patchStatus(type, name, patch, dry(opts)),
      ),
    // Both forms of apply (an object, or a kind and its apply configuration) as the object they send.
    apply: ((first: object, second: object, third?: object) => {
      const { obj, opts } = applyArguments(first, second, third);
      return observe('apply', opts.subresource === 'status', of(obj, opts.namespace), obj, () =>
        client.apply(obj, dry(opts)),
      );
    }) as Client['apply'],
    applyStatus: ((first: object, second: object, third?: object) => {
      const { obj, opts } = applyArguments(first, second, third);
      return observe('apply', true, of(obj, opts.namespace), obj, () => client.applyStatus(obj, dry(opts)));
    }) as Client['applyStatus'],
    delete: (type, name, opts) =>
      observe('delete', false, { type, namespace: opts?.namespace, name }, null, () =>
        client.delete(type, name, dry(opts)),
      ),
  } as Client;
}

/** Metadata the server keeps, which says nothing about what the writer changed. */
const SERVER_METADATA = ['resourceVersion', 'managedFields', 'uid', 'creationTimestamp', 'generation', 'selfLink'];

/**
 * The fields a write changed: a merge patch from `before` to `after` when both are known; else the
 * whole object for a create, null for a delete, and what was asked (the patch, the object sent)
 * otherwise. Secret values redacted.
 */
export function writeDiff(type: ResourceType, verb: Verb, before: unknown, after: unknown, asked: unknown): unknown {
  let diff: unknown;
  if (verb === 'delete') diff = null;
  else if (before !== undefined && after !== undefined)
    diff = createMergePatch(comparable(before), comparable(after)) ?? {};
  else if (verb === 'create' && after !== undefined) diff = comparable(after);
  else diff = isPlainObject(asked) ? comparable(asked) : asked;
  return isSecret(type) ? redactSecretValues(diff) : diff;
}

function comparable(obj: unknown): unknown {
  if (!isPlainObject(obj) || !isPlainObject(obj.metadata)) return obj;
  const metadata: Record<string, unknown> = { ...obj.metadata };
  for (const field of SERVER_METADATA) delete metadata[field];
  return { ...obj, metadata };
}

function isSecret(type: ResourceType): boolean {
  return type.kind === 'Secret' && type.apiVersion === 'v1';
}

/** Every value under `data` / `stringData` (and every value a JSON patch sets) becomes `[Redacted]`; keys stay. */
function redactSecretValues(diff: unknown): unknown {
  if (Array.isArray(diff))
    return diff.map((op: unknown) => (isPlainObject(op) && 'value' in op ? { ...op, value: REDACTED } : op));
  if (!isPlainObject(diff)) return diff === null ? null : REDACTED;
  const out: Record<string, unknown> = { ...diff };
  for (const field of ['data', 'stringData']) {
    const values = out[field];
    if (isPlainObject(values))
      out[field] = Object.fromEntries(Object.keys(values).map((k) => [k, values[k] === null ? null : REDACTED]));
    else if (values !== undefined && values !== null) out[field] = REDACTED;
  }
  return out;
}
