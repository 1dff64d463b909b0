/**
 * client: the only code that speaks HTTP to the API server — kubeconfig/in-cluster auth, undici
 * transport, discovery/REST mapping, CRUD/patch/apply/subresources, paged list, watch, ApiError.
 */
export type {
  Client,
  Reader,
  Getter,
  PageLister,
  Writer,
  Creator,
  Updater,
  Patcher,
  Applier,
  Deleter,
  StatusWriter,
  StatusPatchOptions,
  ObjectWatcher,
  WatchListCapable,
  ListWatchClient,
  RestMapper,
} from './client.js';
export { KubeClient, DEFAULT_LIST_PAGE_SIZE, DEFAULT_MAX_LIST_RESTARTS } from './kube-client.js';
export type {
  KubeClientOptions,
  FromKubeconfigOptions,
  ObjectLike,
  GetOptions,
  ListPageOptions,
  ListPage,
  ListOptions,
  PagedListPage,
  WatchOptions,
  WriteOptions,
  UpdateOptions,
  PatchType,
  PatchOptions,
  ApplyOptions,
  DeleteOptions,
  FieldValidation,
  Scale,
} from './kube-client.js';
export type { ReadFreshness, SignalOption } from './client-options.js';
export {
  ApiError,
  apiErrorStatus,
  isNotFound,
  isConflict,
  isAlreadyExists,
  isGone,
  isInvalid,
  isForbidden,
  isUnauthorized,
  isTooManyRequests,
  ignoreNotFound,
} from './api-error.js';
export type { StatusBody, StatusDetails } from './api-error.js';
export {
  ApplyConflictError,
  isApplyConflict,
  parseApplyConflicts,
  describeApplyConflict,
  FIELD_MANAGER_CONFLICT,
} from './apply-conflict-error.js';
export type { ApplyConflict, AppliedTarget } from './apply-conflict-error.js';
export type {
  ApplyConfiguration,
  StatusApplyConfiguration,
  ApplyMetadata,
  DeepPartial,
} from './apply-configuration.js';
export { DiscoveryRestMapper, NoKindMatchError, isNoKindMatch } from './discovery.js';
export { kind } from './kind.js';
export type { Kind, ObjectOf } from './kind.js';
export { kinds } from './kinds.js';
export type { ResourceType, ResourceMapping } from './discovery.js';
// The `shardSelector` list/watch option's wire format (KEP-5866 hash ranges); the rest of its helpers are internal.
export {
  formatShardSelector,
  parseShardSelector,
  splitHashSpace,
  objectInRange,
  InvalidShardSelectorError,
} from './shard-selector.js';
export type { HashRange, ShardKeyField, ShardSelector } from './shard-selector.js';
export { WatchDecodeError, DEFAULT_MAX_WATCH_LINE_BYTES } from './watch-decoder.js';
export type { WatchEvent } from './watch-decoder.js';
export {
  KubeconfigError,
  asKubeconfig,
  parseKubeconfig,
  loadKubeconfigFile,
  loadDefaultKubeconfig,
  mergeKubeconfigs,
  defaultKubeconfigPaths,
  resolveKubeconfig,
} from './kubeconfig.js';
export {
  KubeconfigLimitError,
  LOCAL_KUBECONFIG_LIMITS,
  DEFAULT_MAX_KUBECONFIG_BYTES,
  DEFAULT_MAX_KUBECONFIG_DEPTH,
  DEFAULT_MAX_KUBECONFIG_NODES,
  DEFAULT_MAX_KUBECONFIG_ALIASES,
  type KubeconfigLimits,
  type KubeconfigLimitName,
} from './kubeconfig-limits.js';
export type {
  Kubeconfig,
  KubeconfigCluster,
  KubeconfigUser,
  KubeconfigContext,
  ClusterConfig,
  Impersonation,
  ResolveKubeconfigOptions,
} from './kubeconfig.js';
export { inClusterConfig, isInCluster, SERVICE_ACCOUNT_DIR } from './in-cluster.js';
export type { InClusterOptions } from './in-cluster.js';
export {
  CredentialError,
  NO_CREDENTIAL,
  StaticTokenCredential,
  BasicAuthCredential,
  TokenFileCredential,
  RedactedCredential,
  DEFAULT_TOKEN_FILE_REFRESH_MS,
} from './credentials.js';
export type { Credential, CredentialValue, ClientCertificate, TokenFileCredentialOptions } from './credentials.js';
export {
  ExecCredentialPlugin,
  DEFAULT_EXEC_TIMEOUT_MS,
  DEFAULT_EXEC_GRACE_MS,
  DEFAULT_EXEC_DRAIN_MS,
} from './exec-credential.js';
export type { ExecConfig, ExecCredentialPluginOptions } from './exec-credential.js';
export { makeTlsConfig } from './tls-config.js';
export type { TlsConfig } from './tls-config.js';
// The transport, the watch decoder and the retry policy are internal; their errors and limits are not.
export {
  TransportError,
  RequestTimeoutError,
  DEFAULT_REQUEST_DEADLINE_MS,
  DEFAULT_TRANSPORT_BACKOFF,
  DEFAULT_MAX_RETRY_AFTER_MS,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_CONNECTIONS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  MAX_ERROR_BODY_BYTES,
  WATCH_BODY_TIMEOUT_SLACK_MS,
} from './transport.js';
export type { TransportOptions } from './transport.js';
export { ResponseTooLargeError } from './body-limit.js';
export { METADATA_ONLY_ACCEPT } from './partial-object-metadata.js';
// Renamed: the workqueue has its own (per-item) TokenBucketRateLimiter.
export { TokenBucketRateLimiter as ClientTokenBucketRateLimiter } from './rate-limiter.js';
export type { RateLimiterOptions as ClientRateLimiterOptions } from './rate-limiter.js';
export { promClientMetrics, REQUEST_DURATION_BUCKETS } from './client-metrics.js';
export type { ClientMetrics, RequestSample } from './client-metrics.js';
