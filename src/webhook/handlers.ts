/**
 * The typed handler shapes: a validator allows or denies (with warnings), a mutator returns the
 * object as it should be stored (the server turns the difference into a JSONPatch), and a
 * conversion names a hub version and spokes that convert to and from it.
 */
import type { Kind } from '../client/kind.js';
import type { KubeObject } from '../core/object-key.js';
import type { AdmissionRequest } from './review-types.js';
import type { LabelSelectorObject } from '../cache/label-selector.js';

/** The admission request a handler sees, with a signal that aborts when the server's per-request timeout runs out. */
export interface WebhookRequest extends AdmissionRequest {
  readonly signal: AbortSignal;
}

export type ValidationResult =
  | { readonly allowed: true; readonly warnings?: readonly string[] }
  | {
      readonly allowed: false;
      /** What kubectl prints after "admission webhook … denied the request:". */
      readonly message: string;
      /** HTTP status code in the answer. @defaultValue 403 */
      readonly code?: number;
      readonly reason?: string;
      readonly warnings?: readonly string[];
    };

/** Allows the request, with warnings kubectl prints (`Warning: …`). */
export function allow(...warnings: string[]): ValidationResult {
  return warnings.length ? { allowed: true, warnings } : { allowed: true };
}

/** Denies the request with `message` (shown to the user as the reason). */
export function deny(
  message: string,
  options: { readonly code?: number; readonly reason?: string; readonly warnings?: readonly string[] } = {},
): ValidationResult {
  return { allowed: false, message, ...options };
}

/**
 * Decides on a write. On CREATE `oldObj` is undefined; on UPDATE it is the stored object; on
 * DELETE `obj` is the object being deleted and `oldObj` is the same. Returning nothing allows.
 * A throw denies with the error's message; running past the timeout denies too, or allows with a
 * warning under `failurePolicy: Ignore`. The objects are the review's own, not copies (a review
 * may be megabytes): read them, and keep no reference after answering. A number beyond 2^53
 * arrives as a lossless-json `LosslessNumber`.
 */
export type ValidateFunction<T> = (
  obj: T,
  oldObj: T | undefined,
  req: WebhookRequest,
) => ValidationResult | void | Promise<ValidationResult | void>;

/**
 * Returns the object as it should be stored. It receives a copy, so changing it in place and
 * returning it is fine. A throw (or running past the timeout) denies the write.
 */
export type MutateFunction<T> = (obj: T, req: WebhookRequest) => T | Promise<T>;

/** A write a handler is asked about. */
export type AdmissionWebhookOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** What the cluster does when the webhook cannot be reached or times out. */
export type FailurePolicy = 'Fail' | 'Ignore';

/** Per-webhook settings; the manifest options give defaults for the ones left out. */
export interface AdmissionWebhookOptions {
  /** URL path the server answers on. @defaultValue `/validate-<group with dashes>-<version>-<kind lower case>` (`/mutate-…` for a mutator), as kubebuilder names them */
  readonly path?: string;
  /** The webhook's name in its configuration (must look like a domain name). @defaultValue `v<kind lower case>.<group>` (`m…` for a mutator; `.k8s.io` for the core group) */
  readonly name?: string;
  /** @defaultValue ['CREATE', 'UPDATE'] */
  readonly operations?: readonly AdmissionWebhookOperation[];
  /** @defaultValue the manifest option, else 'Fail' */
  readonly failurePolicy?: FailurePolicy;
  /** @defaultValue the manifest option, else {@link DEFAULT_WEBHOOK_TIMEOUT_SECONDS} */
  readonly timeoutSeconds?: number;
  /** @defaultValue the manifest option, else every namespace */
  readonly namespaceSelector?: LabelSelectorObject;
  readonly objectSelector?: LabelSelectorObject;
  /** Plural resource name for the rule. @defaultValue the kind's `plural`, else guessed from its name */
  readonly resource?: string;
}

/** kube-apiserver's default and maximum is 10 and 30 s. @defaultValue 10 */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;

/** Converts between the hub version and one spoke version; the pair must round-trip. */
export interface Spoke<H, S extends KubeObject = KubeObject> {
  /** The spoke version's kind (same group and kind as the hub, another version). */
  readonly kind: Kind<S>;
  toHub(obj: S): H;
  fromHub(hub: H): S;
}

/** Types a spoke from its kind: `spoke(DATABASE_V1ALPHA1, { toHub, fromHub })`. */
export function spoke<H, S extends KubeObject>(
  kind: Kind<S>,
  conversion: { toHub(obj: S): H; fromHub(hub: H): S },
): Spoke<H, S> {
  return { kind, toHub: (obj) => conversion.toHub(obj), fromHub: (hub) => conversion.fromHub(hub) };
}

/**
 * Hub-and-spoke conversion, as controller-runtime's: every version converts to and from the hub
 * (usually the storage version), so n versions need n − 1 pairs, not n².
 */
export interface ConversionOptions<H> {
  /** The hub version's kind (the one objects of `hub`'s type are). */
  readonly hub: Kind<H>;
  readonly spokes: readonly Spoke<H>[];
}
