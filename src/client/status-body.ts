/**
 * A `metav1.Status` as received: from an error answer or a watch ERROR event, i.e. from a server or
 * proxy we do not control. Only fields of the right type are kept, so a body like
 * `{"kind":"Status","reason":{"toString":1}}` yields a plain ApiError instead of a TypeError thrown
 * while building its message.
 */
import type { StatusBody, StatusDetails } from './api-error.js';

type Cause = NonNullable<StatusDetails['causes']>[number];

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The well-typed fields of `v` as a StatusBody (empty when `v` is not an object). */
export function sanitizeStatus(v: unknown): StatusBody {
  const out: StatusBody = {};
  if (!isObject(v)) return out;
  if (v.kind === 'Status') out.kind = 'Status';
  if (str(v.apiVersion) !== undefined) out.apiVersion = v.apiVersion as string;
  if (v.status === 'Success' || v.status === 'Failure') out.status = v.status;
  if (str(v.message) !== undefined) out.message = v.message as string;
  if (str(v.reason) !== undefined) out.reason = v.reason as string;
  if (typeof v.code === 'number' && Number.isInteger(v.code) && v.code >= 100 && v.code <= 999) out.code = v.code;
  if (isObject(v.details)) out.details = sanitizeDetails(v.details);
  return out;
}

/** The Status in an error answer's JSON, or undefined when it is not one. */
export function statusBodyOf(json: unknown): StatusBody | undefined {
  return isObject(json) && json.kind === 'Status' ? sanitizeStatus(json) : undefined;
}

function sanitizeDetails(d: Record<string, unknown>): StatusDetails {
  const out: StatusDetails = {};
  for (const k of ['name', 'group', 'kind', 'uid'] as const) if (str(d[k]) !== undefined) out[k] = d[k] as string;
  if (typeof d.retryAfterSeconds === 'number' && Number.isFinite(d.retryAfterSeconds) && d.retryAfterSeconds >= 0) out.retryAfterSeconds = d.retryAfterSeconds;
  if (Array.isArray(d.causes)) {
    out.causes = d.causes.filter(isObject).map((c) => {
      const cause: Cause = {};
      for (const k of ['reason', 'message', 'field'] as const) if (str(c[k]) !== undefined) cause[k] = c[k] as string;
      return cause;
    });
  }
  return out;
}
