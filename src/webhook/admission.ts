/**
 * Answers one AdmissionReview with one registered handler: checks the request is for the
 * handler's kind, runs it under the review's deadline, and turns a mutator's returned object
 * into a JSONPatch (linear, and under the same deadline). A handler that throws yields a denial
 * naming why; one that runs too long a denial under `failurePolicy: Fail` and an allow with a
 * warning under `Ignore` (what the API server itself would have done had the call timed out).
 * Neither reaches the HTTP layer as an error.
 */
import type { Clock } from '../core/clock.js';
import { omitUndefined } from '../core/omit-undefined.js';
import { redactCredentialText } from '../core/redact-text.js';
import { InvalidReviewError, WebhookTimeoutError } from './errors.js';
import { DEFAULT_WEBHOOK_TIMEOUT_SECONDS, type ValidationResult, type WebhookRequest } from './handlers.js';
import { createJsonPatch } from './json-patch-diff.js';
import { cloneJson } from './json-values.js';
import { encodeJson } from './review-json.js';
import type { AdmissionRequest, AdmissionResponse } from './review-types.js';
import type { AdmissionRegistration } from './webhooks.js';

/** What a handler failure looks like to the writer: HTTP 500 in the status, the error's message (credentials redacted). */
function failed(uid: string, path: string, err: unknown): AdmissionResponse {
  const timedOut = err instanceof WebhookTimeoutError;
  const message = timedOut
    ? err.message
    : `webhook ${path} failed: ${redactCredentialText(err instanceof Error ? err.message : String(err))}`;
  return {
    uid,
    allowed: false,
    status: { code: timedOut ? 504 : 500, message, reason: timedOut ? 'Timeout' : 'InternalError' },
  };
}

/**
 * Runs `work` with a signal that aborts after `timeoutMs`; rejects with `WebhookTimeoutError`
 * then, even if `work` ignores the signal (its result is dropped).
 */
export async function withTimeout<T>(
  clock: Clock,
  path: string,
  timeoutMs: number,
  parent: AbortSignal,
  work: (signal: AbortSignal) => Promise<T> | T,
): Promise<T> {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', onParentAbort, { once: true });
  let timer: { cancel(): void } | undefined;
  try {
    return await new Promise<T>((resolve, reject) => {
      timer = clock.setTimer(timeoutMs, () => {
        const err = new WebhookTimeoutError(path, timeoutMs);
        controller.abort(err);
        reject(err);
      });
      if (parent.aborted) controller.abort(parent.reason);
      Promise.resolve()
        .then(() => work(controller.signal))
        .then(resolve, reject);
    });
  } finally {
    timer?.cancel();
    parent.removeEventListener('abort', onParentAbort);
  }
}

function sameKind(reg: AdmissionRegistration, request: AdmissionRequest): boolean {
  const { group, version, kind } = request.kind ?? {};
  return group === reg.target.group && version === reg.target.version && kind === reg.target.kind;
}

/**
 * Time kept back from a webhook's `timeoutSeconds` for the network and for encoding the answer,
 * so the API server reads the handler's answer rather than its own timeout: 1 s, or a fifth of a
 * timeout under 5 s. @defaultValue 1,000 ms
 */
export const DEFAULT_WEBHOOK_TIMEOUT_MARGIN_MS = 1_000;

/** How long the server gives a review for `reg`: its `timeoutSeconds` less the margin, capped by `capMs`. */
export function admissionTimeoutMs(reg: AdmissionRegistration, capMs?: number): number {
  const seconds = reg.options.timeoutSeconds ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS;
  const own = seconds * 1000 - Math.min(DEFAULT_WEBHOOK_TIMEOUT_MARGIN_MS, seconds * 200);
  return capMs === undefined ? own : Math.min(own, capMs);
}

export interface AdmissionReviewDeps {
  readonly clock: Clock;
  /** The whole review's time, from `startedAtMs`. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** `clock.monotonicNow()` when the review arrived (decoding counts). @defaultValue now */
  readonly startedAtMs?: number;
  /** The body held numbers beyond 2^53: encode the patch losslessly. */
  readonly lossless?: boolean;
}

/** The AdmissionResponse for `request` from `reg`'s handler (never throws for a handler's failure). */
export async function reviewAdmission(
  reg: AdmissionRegistration,
  request: AdmissionRequest,
  deps: AdmissionReviewDeps,
): Promise<AdmissionResponse> {
  const uid = request.uid;
  if (!sameKind(reg, request)) {
    const got = request.kind ? `${request.kind.group}/${request.kind.version}/${request.kind.kind}` : 'no kind';
    return badRequest(
      uid,
      `webhook ${reg.path} serves ${reg.target.group}/${reg.target.version}/${reg.target.kind}, not ${got}`,
    );
  }
  const obj = request.operation === 'DELETE' ? request.oldObject : request.object;
  if (!obj || typeof obj !== 'object')
    return badRequest(uid, `webhook ${reg.path}: the ${request.operation} request carries no object`);
  const old =
    request.operation === 'UPDATE' || request.operation === 'DELETE' ? (request.oldObject ?? undefined) : undefined;
  const deadline = (deps.startedAtMs ?? deps.clock.monotonicNow()) + deps.timeoutMs;
  const checkDeadline = (): void => {
    if (deps.clock.monotonicNow() >= deadline) throw new WebhookTimeoutError(reg.path, deps.timeoutMs);
  };
  try {
    checkDeadline();
    const remaining = deadline - deps.clock.monotonicNow();
    if (reg.validate) {
      const validate = reg.validate;
      // The decoded review is this review's own: nothing reads it after the validator, so it is not copied.
      const result = await withTimeout(deps.clock, reg.path, remaining, deps.signal, (signal) =>
        validate(obj, old, { ...request, signal } satisfies WebhookRequest),
      );
      return toResponse(uid, result ?? { allowed: true });
    }
    const mutate = reg.mutate!;
    // The mutator changes a copy; the original is what the patch is computed against.
    const mutated = await withTimeout(deps.clock, reg.path, remaining, deps.signal, (signal) =>
      mutate(cloneJson(obj), { ...request, signal }),
    );
    if (!mutated || typeof mutated !== 'object')
      throw new InvalidReviewError(`the mutator returned ${mutated === null ? 'null' : typeof mutated}, not an object`);
    const patch = createJsonPatch(obj, mutated, checkDeadline);
    if (patch.length === 0) return { uid, allowed: true };
    const encoded = Buffer.from(encodeJson(patch, deps.lossless ?? false)).toString('base64');
    checkDeadline();
    return { uid, allowed: true, patchType: 'JSONPatch', patch: encoded };
  } catch (err) {
    if (err instanceof WebhookTimeoutError && reg.options.failurePolicy === 'Ignore') {
      // The API server would ignore a call that timed out; answering a denial here would override that.
      return {
        uid,
        allowed: true,
        warnings: [`${err.message}; allowed unchecked because its failurePolicy is Ignore`],
      };
    }
    return failed(uid, reg.path, err);
  }
}

/** A request this handler cannot judge (a misconfigured rule sent another kind): denied, saying so. */
function badRequest(uid: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code: 400, message, reason: 'BadRequest' } };
}

function toResponse(uid: string, result: ValidationResult): AdmissionResponse {
  const warnings = result.warnings?.length ? { warnings: result.warnings } : {};
  if (result.allowed) return { uid, allowed: true, ...warnings };
  return {
    uid,
    allowed: false,
    status: {
      code: result.code ?? 403,
      message: result.message,
      ...omitUndefined({ reason: result.reason || undefined }),
    },
    ...warnings,
  };
}
