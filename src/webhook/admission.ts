/**
 * Answers one AdmissionReview with one registered handler: checks the request is for the
 * handler's kind, runs it under the per-request timeout, and turns a mutator's returned object
 * into a JSONPatch. A handler that throws or runs too long yields a denial naming why; it never
 * reaches the HTTP layer as an error.
 */
import { createPatch } from 'rfc6902';
import type { Clock } from '../core/clock.js';
import { redactCredentialText } from '../core/redact-text.js';
import { InvalidReviewError, WebhookTimeoutError } from './errors.js';
import type { ValidationResult, WebhookRequest } from './handlers.js';
import type { AdmissionRequest, AdmissionResponse } from './review-types.js';
import type { AdmissionRegistration } from './webhooks.js';

/** What a handler failure looks like to the writer: HTTP 500 in the status, the error's message (credentials redacted). */
function failed(uid: string, path: string, err: unknown): AdmissionResponse {
  const timedOut = err instanceof WebhookTimeoutError;
  const message = timedOut ? err.message : `webhook ${path} failed: ${redactCredentialText(err instanceof Error ? err.message : String(err))}`;
  return { uid, allowed: false, status: { code: timedOut ? 504 : 500, message, reason: timedOut ? 'Timeout' : 'InternalError' } };
}

/**
 * Runs `work` with a signal that aborts after `timeoutMs`; rejects with `WebhookTimeoutError`
 * then, even if `work` ignores the signal (its result is dropped).
 */
export async function withTimeout<T>(clock: Clock, path: string, timeoutMs: number, parent: AbortSignal, work: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
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
      Promise.resolve().then(() => work(controller.signal)).then(resolve, reject);
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

/** The AdmissionResponse for `request` from `reg`'s handler (never throws for a handler's failure). */
export async function reviewAdmission(reg: AdmissionRegistration, request: AdmissionRequest, deps: { readonly clock: Clock; readonly timeoutMs: number; readonly signal: AbortSignal }): Promise<AdmissionResponse> {
  const uid = request.uid;
  if (!sameKind(reg, request)) {
    const got = request.kind ? `${request.kind.group}/${request.kind.version}/${request.kind.kind}` : 'no kind';
    return badRequest(uid, `webhook ${reg.path} serves ${reg.target.group}/${reg.target.version}/${reg.target.kind}, not ${got}`);
  }
  const obj = request.operation === 'DELETE' ? request.oldObject : request.object;
  if (!obj || typeof obj !== 'object') return badRequest(uid, `webhook ${reg.path}: the ${request.operation} request carries no object`);
  const old = request.operation === 'UPDATE' || request.operation === 'DELETE' ? (request.oldObject ?? undefined) : undefined;
  try {
    if (reg.validate) {
      const validate = reg.validate;
      // Copies: a validator that changes its arguments must not change what a later step sees.
      const result = await withTimeout(deps.clock, reg.path, deps.timeoutMs, deps.signal, (signal) =>
        validate(structuredClone(obj), old ? structuredClone(old) : undefined, { ...request, signal } satisfies WebhookRequest));
      return toResponse(uid, result ?? { allowed: true });
    }
    const mutate = reg.mutate!;
    const mutated = await withTimeout(deps.clock, reg.path, deps.timeoutMs, deps.signal, (signal) => mutate(structuredClone(obj), { ...request, signal }));
    if (!mutated || typeof mutated !== 'object') throw new InvalidReviewError(`the mutator returned ${mutated === null ? 'null' : typeof mutated}, not an object`);
    const patch = createPatch(obj, mutated);
    if (patch.length === 0) return { uid, allowed: true };
    return { uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
  } catch (err) {
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
  return { uid, allowed: false, status: { code: result.code ?? 403, message: result.message, ...(result.reason ? { reason: result.reason } : {}) }, ...warnings };
}
