/**
 * helpers: the golden-standard operator practices as small functions — finalizers, status and
 * conditions, conflict retry, owner references, create-or-patch, spec hash and server-side apply,
 * action chains and resilient HTTP for external calls. Each takes the client role it uses
 * (`Getter & Patcher` for finalizers, `StatusWriter` for status, `Applier` for `applyOwned`), which
 * any `Client`, real or fake, has.
 */
export {
  InvalidFinalizerNameError,
  InvalidConditionError,
  CrossNamespaceOwnerError,
  AlreadyOwnedError,
  IncompleteObjectError,
} from './errors.js';
export type { MetaObject, MetadataLike } from './meta-object.js';
export { canonicalJson, jsonEqual } from './canonical-json.js';
export { createMergePatch } from './merge-patch.js';
export { retryOnConflict, isResourceVersionConflict, DEFAULT_RETRY } from './retry-on-conflict.js';
export type { RetryOnConflictOptions } from './retry-on-conflict.js';
export { addFinalizer, removeFinalizer, hasFinalizer, validateFinalizerName } from './finalizers.js';
export type { FinalizerWriteOptions } from './finalizers.js';
export { handleFinalizer } from './finalizer-flow.js';
export type { HandleFinalizerOptions, FinalizerStep } from './finalizer-flow.js';
export {
  setCondition,
  getCondition,
  isConditionTrue,
  isConditionFalse,
  removeCondition,
  validateCondition,
  formatConditionTime,
} from './conditions.js';
export type { Condition, ConditionInput, ConditionStatus, SetConditionOptions } from './conditions.js';
export { setKstatusConditions } from './kstatus.js';
export type { KstatusProgress, KstatusConditionOptions } from './kstatus.js';
export { computeKstatus, READY_CONDITION, RECONCILING_CONDITION, STALLED_CONDITION } from '../core/kstatus-rules.js';
export type { KstatusObject, KstatusResult, KstatusRule, KstatusStatus } from '../core/kstatus-rules.js';
export { patchStatus, updateStatus, desiredStatus } from './status.js';
export type { StatusObject, StatusWriteOptions, StatusWriteResult } from './status.js';
export { writeStatus } from './write-status.js';
export type { WriteStatusOptions, WriteStatusResult } from './write-status.js';
export {
  setControllerReference,
  setOwnerReference,
  removeOwnerReference,
  getControllerOf,
  isControlledBy,
} from './owner-references.js';
export type { OwnerReferenceOptions } from './owner-references.js';
export { createOrPatch } from './create-or-patch.js';
export type { CreateOrPatchOptions, CreateOrPatchResult, OperationResult } from './create-or-patch.js';
export { specHash, withSpecHash, specHashMatches, SPEC_HASH_ANNOTATION } from './spec-hash.js';
export { applyOwned, DEFAULT_APPLY_FORCE, APPLY_CONFLICT_EVENT_REASON } from './apply-owned.js';
export type { ApplyOwnedOptions, ApplyOwnedResult, ApplyConflictEvents } from './apply-owned.js';
export { runActions, ACTION_DURATION_METRIC, ACTION_DURATION_BUCKETS } from './actions.js';
export type { Action, ActionRecord, ActionsReport, ActionOutcomeLabel, RunActionsOptions } from './actions.js';
export {
  createHttpClient,
  HttpRequestError,
  isRetryableHttpStatus,
  DEFAULT_HTTP_BACKOFF,
  DEFAULT_HTTP_ATTEMPT_TIMEOUT_MS,
  DEFAULT_HTTP_MAX_RETRY_AFTER_MS,
  DEFAULT_HTTP_MAX_RESPONSE_BYTES,
  DEFAULT_HTTP_MAX_METRIC_HOSTS,
  OTHER_HOST_LABEL,
  HTTP_REQUESTS_METRIC,
  HTTP_DURATION_METRIC,
} from './http-client.js';
export type {
  HttpClient,
  HttpClientOptions,
  HttpRequestOptions,
  HttpResponse,
  HttpAttempt,
  HttpFailureReason,
} from './http-client.js';
export {
  dependentsOf,
  Dependents,
  DependentsBuilder,
  DEFAULT_NOT_READY_REQUEUE_MS,
  DEFAULT_DELETION_REQUEUE_MS,
} from './dependents/dependents.js';
export type {
  DependentsOptions,
  ReconcileDependentsOptions,
  CleanupDependentsOptions,
  DependentsOutcome,
  DependentWrite,
  StatusOf,
} from './dependents/dependents.js';
export type {
  DependentSpec,
  DependentsClient,
  DeletePolicy,
  ReadyCheck,
  WriteOperation,
  WriteOutcome,
  WriteStrategy,
  DependentWriteArgs,
  DesiredContext,
} from './dependents/dependent.js';
export type { DependentState, DependentsReport } from './dependents/dependent-state.js';
export { dependentConditions } from './dependents/dependent-conditions.js';
export type { DependentConditionsOptions } from './dependents/dependent-conditions.js';
export { InvalidDependentsError } from './dependents/invalid-dependents-error.js';
