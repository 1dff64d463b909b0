/**
 * What a test sees of each request the fake client serves: a record for counting ("a no-op
 * reconcile made zero writes") and the argument of interceptors, which can fail a request with any
 * error (usually an ApiError shaped like the server's) or delay it by returning a promise.
 */
import type { PatchType } from '../../client/client-options.js';
import { ApiError } from '../../client/api-error.js';
import { omitUndefined } from '../../core/omit-undefined.js';

export type FakeVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export interface FakeRequest {
  readonly verb: FakeVerb;
  readonly apiVersion: string;
  readonly kind: string;
  /** API group ('' for core). */
  readonly group: string;
  /** Plural resource name, e.g. `configmaps`. */
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly subresource?: string;
  readonly patchType?: PatchType;
  readonly dryRun: boolean;
  /** The object (create, update, apply) or patch document (patch) as sent; do not mutate. */
  readonly body?: unknown;
}

/**
 * Runs before the fake serves a request. Return (or resolve to) an Error to fail the request with
 * it, or undefined to let it through; an async interceptor delays the request until it settles.
 */
export type Interceptor = (req: FakeRequest) => Error | undefined | void | Promise<Error | undefined | void>;

/** A predicate over requests, or a partial request every listed field of which must match. */
export type RequestFilter = ((req: FakeRequest) => boolean) | Partial<Omit<FakeRequest, 'body'>>;

const WRITE_VERBS: ReadonlySet<FakeVerb> = new Set(['create', 'update', 'patch', 'delete']);

/** create, update, patch (apply included) and delete: the verbs that change state. */
export function isWrite(req: FakeRequest): boolean {
  return WRITE_VERBS.has(req.verb);
}

/** A write to the `/status` subresource. */
export function isStatusWrite(req: FakeRequest): boolean {
  return isWrite(req) && req.subresource === 'status';
}

export function matchesFilter(req: FakeRequest, filter: RequestFilter | undefined): boolean {
  if (!filter) return true;
  if (typeof filter === 'function') return filter(req);
  return Object.entries(filter).every(
    ([k, v]) => v === undefined || (req as unknown as Record<string, unknown>)[k] === v,
  );
}

/**
 * An interceptor that fails every `n`th request matching `filter` (the n-th, 2n-th, …) with the
 * error `makeError` builds, e.g. `everyNth(3, isStatusWrite, conflictFor)`.
 */
export function everyNth(n: number, filter: RequestFilter, makeError: (req: FakeRequest) => Error): Interceptor {
  let seen = 0;
  return (req) => {
    if (!matchesFilter(req, filter)) return undefined;
    seen++;
    return seen % n === 0 ? makeError(req) : undefined;
  };
}

function named(req: FakeRequest): string {
  return req.group ? `${req.resource}.${req.group}` : req.resource;
}

function details(req: FakeRequest): { name?: string; group?: string; kind: string } {
  // The core group is '': no group in the details, as the server answers.
  return { ...omitUndefined({ name: req.name || undefined, group: req.group || undefined }), kind: req.resource };
}

/** The 409 Conflict the server answers a stale write with, for this request. */
export function conflictFor(req: FakeRequest): ApiError {
  return new ApiError({
    status: 409,
    reason: 'Conflict',
    message: `Operation cannot be fulfilled on ${named(req)} "${req.name ?? ''}": the object has been modified; please apply your changes to the latest version and try again`,
    details: details(req),
  });
}

/** A 500 InternalError, for "the server failed" paths. */
export function internalErrorFor(req: FakeRequest): ApiError {
  return new ApiError({
    status: 500,
    reason: 'InternalError',
    message: `injected failure on ${req.verb} ${named(req)}`,
    details: details(req),
  });
}

/** A 429 with Retry-After, as API priority and fairness answers under load. */
export function tooManyRequestsFor(req: FakeRequest, retryAfterSeconds = 1): ApiError {
  return new ApiError({
    status: 429,
    reason: 'TooManyRequests',
    message: 'too many requests, please try again later',
    details: { ...details(req), retryAfterSeconds },
  });
}
