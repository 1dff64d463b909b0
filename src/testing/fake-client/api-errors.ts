/**
 * The API server's error answers, built with the same status, reason, message and details shape
 * the real server sends (checked against kube-apiserver v1.20), so code that branches on
 * `isNotFound` / `isConflict` / `details.causes` behaves the same against the fake.
 */
import { ApiError, type StatusDetails } from '../../client/api-error.js';
import type { KindInfo } from './kind-registry.js';
import type { Cause } from './schema-validation.js';

/** Where a request went, for the `(METHOD path)` suffix the real client puts on its messages. */
export interface RequestWhere {
  readonly method: string;
  readonly path: string;
}

/** `widgets.example.com` / `configmaps`: how the server names a resource in messages. */
export function qualifiedResource(kind: KindInfo): string {
  return kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
}

/** `Widget.example.com` / `ConfigMap`: how validation errors name a kind. */
export function qualifiedKind(kind: KindInfo): string {
  return kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
}

function resourceDetails(kind: KindInfo, name: string): StatusDetails {
  const details: StatusDetails = { name };
  if (kind.group) details.group = kind.group;
  details.kind = kind.plural;
  return details;
}

function kindDetails(kind: KindInfo, name: string): StatusDetails {
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (kind.group) details.group = kind.group;
  details.kind = kind.kind;
  return details;
}

export function notFound(kind: KindInfo, name: string, where: RequestWhere): ApiError {
  return new ApiError({
    status: 404,
    reason: 'NotFound',
    message: `${qualifiedResource(kind)} "${name}" not found`,
    details: resourceDetails(kind, name),
    ...where,
  });
}

/** A path the server does not serve (e.g. `/status` of a kind without that subresource). */
export function noSuchRoute(where: RequestWhere): ApiError {
  return new ApiError({
    status: 404,
    reason: 'NotFound',
    message: 'the server could not find the requested resource',
    details: {},
    ...where,
  });
}

export function namespaceNotFound(namespace: string, where: RequestWhere): ApiError {
  return new ApiError({
    status: 404,
    reason: 'NotFound',
    message: `namespaces "${namespace}" not found`,
    details: { name: namespace, kind: 'namespaces' },
    ...where,
  });
}

export function namespaceTerminating(namespace: string, where: RequestWhere): ApiError {
  return new ApiError({
    status: 403,
    reason: 'Forbidden',
    message: `unable to create new content in namespace ${namespace} because it is being terminated`,
    details: { name: namespace, kind: 'namespaces' },
    ...where,
  });
}

export function alreadyExists(kind: KindInfo, name: string, where: RequestWhere): ApiError {
  return new ApiError({
    status: 409,
    reason: 'AlreadyExists',
    message: `${qualifiedResource(kind)} "${name}" already exists`,
    details: resourceDetails(kind, name),
    ...where,
  });
}

/** 409 for a resourceVersion precondition that no longer holds (update, patch, status). */
export function conflict(kind: KindInfo, name: string, where: RequestWhere): ApiError {
  return new ApiError({
    status: 409,
    reason: 'Conflict',
    message: `Operation cannot be fulfilled on ${qualifiedResource(kind)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    details: resourceDetails(kind, name),
    ...where,
  });
}

/** 409 for a failed delete precondition; the server names the kind here, not the resource. */
export function preconditionFailed(
  kind: KindInfo,
  name: string,
  what: 'UID' | 'ResourceVersion',
  wanted: string,
  actual: string,
  where: RequestWhere,
): ApiError {
  const tail =
    what === 'UID' ? 'The object might have been deleted and then recreated' : 'The object might have been modified';
  return new ApiError({
    status: 409,
    reason: 'Conflict',
    message: `Operation cannot be fulfilled on ${qualifiedKind(kind)} "${name}": the ${what} in the precondition (${wanted}) does not match the ${what} in record (${actual}). ${tail}`,
    details: kindDetails(kind, name),
    ...where,
  });
}

// Defined beside schema validation, which produces most causes (and so imports nothing from here).
export type { Cause };

/**
 * 422 Invalid. `named: 'resource'` is how the generic update path names the object (the missing
 * resourceVersion check); validation of the object itself names the kind.
 */
export function invalid(
  kind: KindInfo,
  name: string,
  causes: readonly Cause[],
  where: RequestWhere,
  named: 'kind' | 'resource' = 'kind',
): ApiError {
  const lines = causes.map((c) => `${c.field}: ${c.message}`);
  const what = named === 'kind' ? qualifiedKind(kind) : qualifiedResource(kind);
  const message = `${what} "${name}" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`}`;
  const details = named === 'kind' ? kindDetails(kind, name) : resourceDetails(kind, name);
  details.causes = causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field }));
  return new ApiError({ status: 422, reason: 'Invalid', message, details, ...where });
}

/** What the server answers when a JSON patch cannot be applied (a failed `test` included). */
export function patchRejected(where: RequestWhere): ApiError {
  return new ApiError({
    status: 422,
    reason: 'Invalid',
    message: 'the server rejected our request due to an error in our request',
    details: {},
    ...where,
  });
}

export function badRequest(message: string, where: RequestWhere): ApiError {
  return new ApiError({ status: 400, reason: 'BadRequest', message, ...where });
}

export function unsupportedMediaType(where: RequestWhere): ApiError {
  return new ApiError({
    status: 415,
    reason: 'UnsupportedMediaType',
    message:
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    ...where,
  });
}

export function internalError(message: string, where: RequestWhere): ApiError {
  return new ApiError({ status: 500, reason: 'InternalError', message, ...where });
}

/** 410 for a watch or exact list from a resourceVersion the fake no longer keeps history for. */
export function tooOldResourceVersion(requested: string, oldest: string, where: RequestWhere): ApiError {
  return new ApiError({
    status: 410,
    reason: 'Expired',
    message: `too old resource version: ${requested} (${oldest})`,
    ...where,
  });
}

export function continueExpired(where: RequestWhere): ApiError {
  return new ApiError({
    status: 410,
    reason: 'Expired',
    message:
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    ...where,
  });
}

/**
 * Server-side apply conflicts. Managers that wrote with an update are named with their apiVersion,
 * as the server does.
 */
export function applyConflict(
  conflicts: readonly { manager: string; operation: string; apiVersion: string; path: string }[],
  where: RequestWhere,
): ApiError {
  const who = (c: (typeof conflicts)[number]): string =>
    c.operation === 'Apply' ? `conflict with "${c.manager}"` : `conflict with "${c.manager}" using ${c.apiVersion}`;
  const message =
    conflicts.length === 1
      ? `Apply failed with 1 conflict: ${who(conflicts[0]!)}: ${conflicts[0]!.path}`
      : `Apply failed with ${conflicts.length} conflicts: ${conflicts.map((c) => `${who(c)}: ${c.path}`).join(', ')}`;
  return new ApiError({
    status: 409,
    reason: 'Conflict',
    message,
    details: { causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: who(c), field: c.path })) },
    ...where,
  });
}

/**
 * The server's answer to a watch whose `sendInitialEvents` and `resourceVersionMatch` do not go
 * together (validation of ListOptions: 422 Invalid naming the ListOptions kind).
 */
export function invalidWatchList(where: RequestWhere): ApiError {
  return new ApiError({
    status: 422,
    reason: 'Invalid',
    message:
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    details: {
      group: 'meta.k8s.io',
      kind: 'ListOptions',
      causes: [
        {
          reason: 'FieldValueForbidden',
          field: 'resourceVersionMatch',
          message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        },
      ],
    },
    ...where,
  });
}
