/**
 * Answers a ConversionReview: each object goes to the hub through its version's spoke, then from
 * the hub to the desired version's spoke. The result keeps the input's metadata (kube-apiserver
 * refuses a conversion that changes anything there but labels and annotations), so a converter
 * can only stash data in annotations, the usual way to round-trip a field one version lacks.
 * Any failure fails the whole review with a message; the API server then fails the request.
 */
import type { Clock } from '../core/clock.js';
import type { KubeObject, ObjectMeta } from '../core/object-key.js';
import { redactCredentialText } from '../core/redact-text.js';
import { InvalidReviewError, WebhookTimeoutError } from './errors.js';
import { splitApiVersion } from './kind-resource.js';
import type { ConversionRequest, ConversionResponse } from './review-types.js';
import type { Webhooks } from './webhooks.js';
import { withTimeout } from './admission.js';
import { cloneJson } from './json-values.js';

/** Converts one object to `desiredAPIVersion` with the registered conversion of its kind. */
export function convertObject(webhooks: Webhooks, obj: KubeObject, desiredAPIVersion: string): KubeObject {
  if (!obj || typeof obj !== 'object' || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
    throw new InvalidReviewError('an object to convert has no apiVersion or kind');
  }
  const from = splitApiVersion(obj.apiVersion);
  const to = splitApiVersion(desiredAPIVersion);
  if (from.group !== to.group)
    throw new InvalidReviewError(`cannot convert ${obj.apiVersion} to ${desiredAPIVersion}: another group`);
  const reg = webhooks.conversionFor(from.group, obj.kind);
  if (!reg) throw new InvalidReviewError(`no conversion is registered for ${obj.kind}.${from.group}`);
  if (from.version === to.version) return obj;
  const known = (v: string): boolean => v === reg.hubVersion || reg.spokes.has(v);
  for (const v of [from.version, to.version]) {
    if (!known(v))
      throw new InvalidReviewError(
        `the conversion of ${obj.kind}.${from.group} knows versions ${[reg.hubVersion, ...reg.spokes.keys()].join(', ')}, not ${v}`,
      );
  }
  // Not structuredClone: it would turn a big number (LosslessNumber) into a plain object.
  const input = cloneJson(obj);
  const hub = from.version === reg.hubVersion ? input : reg.spokes.get(from.version)!.toHub(input);
  const out = to.version === reg.hubVersion ? hub : reg.spokes.get(to.version)!.fromHub(hub);
  if (!out || typeof out !== 'object')
    throw new InvalidReviewError(`the conversion of ${obj.kind}.${from.group} to ${to.version} returned no object`);
  return { ...out, apiVersion: desiredAPIVersion, kind: obj.kind, metadata: keptMetadata(obj.metadata, out.metadata) };
}

/** The input's metadata with the converter's labels and annotations (the input's when it returned no metadata). */
function keptMetadata(input: ObjectMeta | undefined, output: ObjectMeta | undefined): ObjectMeta {
  const meta: ObjectMeta = { ...cloneJson(input ?? {}) };
  delete meta.labels;
  delete meta.annotations;
  const source = output ?? input;
  const labels = source?.labels;
  const annotations = source?.annotations;
  if (labels) meta.labels = { ...labels };
  if (annotations) meta.annotations = { ...annotations };
  return meta;
}

/** The ConversionResponse for `request`; a failure of any object fails the review. */
export async function reviewConversion(
  webhooks: Webhooks,
  request: ConversionRequest,
  deps: {
    readonly clock: Clock;
    readonly timeoutMs: number;
    readonly signal: AbortSignal;
    readonly path: string;
    /** When the review arrived (decoding counts). @defaultValue now */ readonly startedAtMs?: number;
  },
): Promise<ConversionResponse> {
  const uid = request.uid;
  const deadline = (deps.startedAtMs ?? deps.clock.monotonicNow()) + deps.timeoutMs;
  const checkDeadline = (): void => {
    if (deps.clock.monotonicNow() >= deadline) throw new WebhookTimeoutError(deps.path, deps.timeoutMs);
  };
  try {
    if (typeof request.desiredAPIVersion !== 'string' || !Array.isArray(request.objects))
      throw new InvalidReviewError('the ConversionReview has no desiredAPIVersion or objects');
    checkDeadline();
    // Converters are synchronous: the deadline is checked between objects, and the timer catches the rest.
    const convertedObjects = await withTimeout(
      deps.clock,
      deps.path,
      deadline - deps.clock.monotonicNow(),
      deps.signal,
      () =>
        request.objects.map((o) => {
          checkDeadline();
          return convertObject(webhooks, o, request.desiredAPIVersion);
        }),
    );
    return { uid, convertedObjects, result: { status: 'Success' } };
  } catch (err) {
    const reason =
      err instanceof WebhookTimeoutError || err instanceof InvalidReviewError
        ? err.message
        : `conversion failed: ${err instanceof Error ? err.message : String(err)}`;
    return { uid, convertedObjects: [], result: { status: 'Failure', message: redactCredentialText(reason) } };
  }
}
