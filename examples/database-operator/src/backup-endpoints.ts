/**
 * Which backup endpoints the operator may call. A Database is written by a tenant, so its
 * `spec.backup.endpoint` is untrusted: the operator only POSTs to its own configured endpoint or
 * to one on the allow-list its administrator set (server-side request forgery otherwise), and
 * what a backup service answers never reaches status or Events (tenants read those).
 */
import { OperatorRuntimeError } from 'operator-runtime';
import { HttpRequestError } from 'operator-runtime/helpers';
import type { Database } from './database.js';

export interface BackupEndpointPolicy {
  /** The operator's own backup service (configuration, not tenant input). */
  readonly defaultEndpoint: string;
  /** Other endpoints a Database may name; compared by origin (scheme, host, port). @defaultValue none */
  readonly allowedEndpoints?: readonly string[];
}

export type EndpointResolution =
  { readonly allowed: true; readonly endpoint: string } | { readonly allowed: false; readonly message: string };

/** Origins the policy allows, for the HTTP client's bounded `host` label and for matching. */
export function allowedOrigins(policy: BackupEndpointPolicy): URL[] {
  return [policy.defaultEndpoint, ...(policy.allowedEndpoints ?? [])].map((e) => new URL(e));
}

/** The endpoint to call for this Database, or why it may not be called (a message safe for status). */
export function resolveBackupEndpoint(db: Database, policy: BackupEndpointPolicy): EndpointResolution {
  const asked = db.spec.backup?.endpoint;
  if (!asked) return { allowed: true, endpoint: policy.defaultEndpoint };
  let url: URL | undefined;
  try {
    url = new URL(asked);
  } catch {
    url = undefined;
  }
  // Credentials in the URL would be sent to the allowed host on the tenant's behalf: refused too.
  if (url && !url.username && !url.password && allowedOrigins(policy).some((o) => o.origin === url.origin)) {
    return { allowed: true, endpoint: url.href };
  }
  // The tenant's own input is not echoed back either (it may be huge or hold a credential).
  return {
    allowed: false,
    message:
      "spec.backup.endpoint is not on the operator's allow-list of backup endpoints; remove it to use the default, or ask the operator's administrator to allow it",
  };
}

/** The backup service answered with a status the operator does not accept; only the code is kept. */
export class BackupServiceError extends OperatorRuntimeError {
  declare readonly code: 'ERR_BACKUP_SERVICE';

  /** `malformed`: the status was fine but the body was not a backup state. */
  constructor(
    readonly status: number,
    readonly malformed = false,
  ) {
    super('ERR_BACKUP_SERVICE', `backup service answered HTTP ${status}${malformed ? ' with an unreadable body' : ''}`);
  }
}

/**
 * A failure as tenants may see it (status condition, Event): status codes and error codes only,
 * never a response body, a URL or an exception's free text.
 */
export function describeBackupFailure(err: unknown): string {
  if (err instanceof BackupServiceError) return err.message;
  if (err instanceof HttpRequestError) {
    const last = err.attempts.at(-1);
    const outcome = last?.status !== undefined ? `HTTP ${last.status}` : (last?.error ?? 'no response');
    return `backup request failed (${err.reason}) after ${err.attempts.length} attempt(s), last: ${outcome}`;
  }
  return 'backup request failed';
}
