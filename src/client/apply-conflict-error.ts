/**
 * `ApplyConflictError`: a server-side apply refused (409) because fields it sets are owned by
 * another field manager. The server's answer lists each field in `details.causes`
 * (`FieldManagerConflict`, e.g. field `.spec.replicas`, message `conflict with "kubectl"`), the
 * manager taken from the object's `managedFields`; this error reads them back into a list of
 * (field, owner) pairs and a message that names each one and the two ways out.
 */
import { ApiError, type StatusDetails } from './api-error.js';

/** One field another manager owns. */
export interface ApplyConflict {
  /** The field path as the server writes it, e.g. `.spec.replicas` or `.spec.containers[name="app"].image`. */
  readonly field: string;
  /** The field manager that owns it, e.g. `kubectl` or `kubectl-client-side-apply`. */
  readonly manager: string;
  /** `Apply` when the owner set it by server-side apply, `Update` by a create, update or patch. */
  readonly operation: 'Apply' | 'Update';
  /** The apiVersion the owner wrote through (an `Update` owner only). */
  readonly apiVersion?: string;
  /** The subresource the owner wrote through, e.g. `status`. */
  readonly subresource?: string;
  /** When the owner last wrote it (an `Update` owner only), RFC 3339. */
  readonly time?: string;
}

/** The reason of each cause of an apply conflict in the server's 409 answer. */
export const FIELD_MANAGER_CONFLICT = 'FieldManagerConflict';

/** What was being applied, for the message. */
export interface AppliedTarget {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  /** The manager that tried to apply. */
  readonly fieldManager: string;
  readonly subresource?: string;
}

/**
 * A server-side apply conflict, field by field. It is an `ApiError` (status 409, reason
 * `Conflict`, code `ERR_API`, the server's `details` kept), so `isConflict` and every check of an
 * API error's status still hold; `isApplyConflict` tells it apart.
 */
export class ApplyConflictError extends ApiError {
  /** Each conflicting field and the manager that owns it, in the server's order. */
  readonly conflicts: readonly ApplyConflict[];
  readonly target: AppliedTarget;

  constructor(init: {
    conflicts: readonly ApplyConflict[];
    target: AppliedTarget;
    details?: StatusDetails;
    method?: string;
    path?: string;
    cause?: unknown;
  }) {
    super({
      status: 409,
      reason: 'Conflict',
      message: describeApplyConflict(init.target, init.conflicts),
      details: init.details,
      method: init.method,
      path: init.path,
      cause: init.cause,
    });
    this.conflicts = init.conflicts;
    this.target = init.target;
  }

  /**
   * The apply conflict in `err`, or undefined when `err` is not a 409 with `FieldManagerConflict`
   * causes (an ordinary conflict, or another error, which the caller rethrows as it is).
   */
  static from(err: unknown, target: AppliedTarget): ApplyConflictError | undefined {
    if (err instanceof ApplyConflictError || !(err instanceof ApiError) || err.status !== 409) return undefined;
    const conflicts = parseApplyConflicts(err.details);
    if (conflicts.length === 0) return undefined;
    return new ApplyConflictError({
      conflicts,
      target,
      ...(err.details ? { details: err.details } : {}),
      ...(err.method ? { method: err.method } : {}),
      ...(err.path ? { path: err.path } : {}),
      cause: err,
    });
  }
}

/** True for an `ApplyConflictError`, also one from another copy of the package. */
export function isApplyConflict(err: unknown): err is ApplyConflictError {
  return (
    err instanceof ApplyConflictError ||
    (typeof err === 'object' &&
      err !== null &&
      (err as { code?: unknown }).code === 'ERR_API' &&
      Array.isArray((err as { conflicts?: unknown }).conflicts))
  );
}

// The server writes each cause's message with apimachinery's printManager:
// `conflict with "<manager>"[ with subresource "<sub>"][ using <apiVersion>[ at <RFC 3339 time>]]`.
const CAUSE_MESSAGE =
  /^conflict with "((?:[^"\\]|\\.)*)"(?: with subresource "((?:[^"\\]|\\.)*)")?(?: using (\S+)(?: at (\S+))?)?/;

/** The conflicts listed in a 409's `details.causes`; a cause whose message has another form names its manager as given. */
export function parseApplyConflicts(details: StatusDetails | undefined): ApplyConflict[] {
  const out: ApplyConflict[] = [];
  for (const cause of details?.causes ?? []) {
    if (cause.reason !== FIELD_MANAGER_CONFLICT) continue;
    const field = cause.field ?? '';
    const m = CAUSE_MESSAGE.exec(cause.message ?? '');
    if (!m) {
      out.push({ field, manager: cause.message ?? 'an unnamed manager', operation: 'Update' });
      continue;
    }
    const [, manager, subresource, apiVersion, time] = m;
    out.push({
      field,
      manager: unquote(manager!),
      operation: apiVersion ? 'Update' : 'Apply',
      ...(apiVersion ? { apiVersion } : {}),
      ...(subresource ? { subresource: unquote(subresource) } : {}),
      ...(time ? { time } : {}),
    });
  }
  return out;
}

function unquote(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/**
 * One line naming every field, its owner and how the owner wrote it, then the two ways out, e.g.
 * `apply of Deployment ns/web as "web-operator" conflicts with 1 field another manager owns:
 * .spec.replicas (owned by "kubectl", by apply). Either stop applying it …, or apply with force: true …`.
 */
export function describeApplyConflict(target: AppliedTarget, conflicts: readonly ApplyConflict[]): string {
  const object = `${target.kind} ${target.namespace ? `${target.namespace}/` : ''}${target.name}`;
  const where = target.subresource ? ` (${target.subresource})` : '';
  const n = conflicts.length;
  const fields = conflicts.map((c) => `${c.field} (owned by ${owner(c)})`).join(', ');
  const them = n === 1 ? 'it' : 'them';
  return (
    `apply of ${object}${where} as "${target.fieldManager}" conflicts with ${n} field${n === 1 ? '' : 's'} ` +
    `another manager owns: ${fields}. Either stop applying ${them} (leave ${n === 1 ? 'the field' : 'these fields'} ` +
    `out of what "${target.fieldManager}" applies, so the owner keeps ${them}), or apply with force: true ` +
    `to take ${them} over`
  );
}

function owner(c: ApplyConflict): string {
  const sub = c.subresource ? ` on ${c.subresource}` : '';
  if (c.operation === 'Apply') return `"${c.manager}"${sub}, by apply`;
  const at = c.time ? ` at ${c.time}` : '';
  return `"${c.manager}"${sub}, by an update through ${c.apiVersion ?? 'the API'}${at}`;
}
