/**
 * webhook: admission (validating, mutating) and conversion webhooks served by the manager over
 * HTTPS, with typed handlers on kinds and the cluster configuration generated from them.
 * Register on `manager.webhooks`, give the manager `webhook: { port, certDir }`, and install
 * `webhookManifests(manager, …)` (and `webhookConversion(manager, kind, …)` in the CRD).
 */
export { Webhooks, CONVERSION_PATH } from './webhooks.js';
export type { AdmissionRegistration, ConversionRegistration } from './webhooks.js';
export { allow, deny, spoke, DEFAULT_WEBHOOK_TIMEOUT_SECONDS } from './handlers.js';
export type {
  ValidationResult,
  ValidateFunction,
  MutateFunction,
  WebhookRequest,
  AdmissionWebhookOptions,
  AdmissionWebhookOperation,
  FailurePolicy,
  Spoke,
  ConversionOptions,
} from './handlers.js';
export {
  WebhookServer,
  DEFAULT_WEBHOOK_PORT,
  DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS,
  DEFAULT_WEBHOOK_MAX_REQUEST_BYTES,
  DEFAULT_WEBHOOK_DRAIN_MS,
  DEFAULT_WEBHOOK_MAX_CONNECTIONS,
  DEFAULT_WEBHOOK_MAX_CONCURRENT_REVIEWS,
  DEFAULT_WEBHOOK_MAX_IN_FLIGHT_BYTES,
  WEBHOOK_MAX_REVIEW_DEPTH,
} from './webhook-server.js';
export { DEFAULT_WEBHOOK_TIMEOUT_MARGIN_MS } from './admission.js';
export type { WebhookServerOptions, WebhookServerDeps } from './webhook-server.js';
export type { KindResource } from './kind-resource.js';
export { DEFAULT_CERT_POLL_INTERVAL_MS } from './certificate-reloader.js';
export { webhookManifests, webhookConversion, CERT_MANAGER_INJECT_CA_ANNOTATION } from './webhook-manifests.js';
export type {
  WebhookManifestOptions,
  WebhookClientOptions,
  WebhookServiceReference,
  WebhookSource,
  WebhookConfiguration,
  WebhookRule,
  GeneratedValidatingWebhook,
  GeneratedMutatingWebhook,
  GeneratedValidatingWebhookConfiguration,
  GeneratedMutatingWebhookConfiguration,
} from './webhook-manifests.js';
export { convertObject } from './conversion.js';
export { WebhookRegistrationError, WebhookTimeoutError, InvalidReviewError } from './errors.js';
export type {
  AdmissionReview,
  AdmissionRequest,
  AdmissionResponse,
  ConversionReview,
  ConversionRequest,
  ConversionResponse,
  AdmissionOperation,
  GroupVersionKind,
  GroupVersionResource,
} from './review-types.js';
