/**
 * operator-runtime/codegen: the project config (`defineConfig`) read by `operator-runtime generate`,
 * and the generators themselves as functions (config in, file contents out) for scripts and tests.
 */
export { defineConfig, DEFAULT_WEBHOOK_CERT_DIR } from './config.js';
export type { OperatorProjectConfig, DeploymentConfig, GeneratedFileComments, LintConfig } from './config.js';
export type { KindConventionAllowance, KindConventionCheck } from '../crd/kind-conventions.js';
export {
  generateCrds,
  generateRbac,
  generateManifests,
  validateProjectConfig,
  CRD_FILE,
  RBAC_FILE,
  DEPLOYMENT_FILE,
  KUSTOMIZATION_FILE,
  WEBHOOKS_FILE,
  SHARDING_FILE,
  REGENERATE_COMMAND,
} from './generate.js';
export type { GeneratedFile } from './generate.js';
export {
  operatorManifests,
  NONROOT_UID,
  DEFAULT_RESOURCES,
  DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
  DEFAULT_REPLICAS,
  METRICS_NAMESPACE_LABEL,
} from './operator-manifests.js';
export type { OperatorFeatures } from './operator-manifests.js';

export {
  fluxHealthCheckExpr,
  fluxHealthChecks,
  argoCdHealthLua,
  argoCdHealthKey,
  argoCdHealthConfigMap,
  hasSuspendField,
  FLUX_HEALTH_CHECKS_FILE,
  ARGOCD_HEALTH_CHECKS_FILE,
} from './health-checks.js';
export type { FluxHealthCheckExpr } from './health-checks.js';
export { WEBHOOK_SERVICE_PORT, DEFAULT_WEBHOOK_INGRESS_FROM } from './webhook-serving-manifests.js';
export {
  generateBundle,
  BUNDLE_REGENERATE_COMMAND,
  ANNOTATIONS_FILE,
  BUNDLE_DOCKERFILE,
} from './bundle/generate-bundle.js';
export type { GenerateBundleOptions, GeneratedBundle } from './bundle/generate-bundle.js';
export {
  DEFAULT_BUNDLE_CHANNELS,
  DEFAULT_MIN_KUBE_VERSION,
  DEFAULT_BUNDLE_DIR,
  DEFAULT_SAMPLES_FILE,
} from './bundle/bundle-config.js';
export type { BundleConfig } from './bundle/bundle-config.js';
export { validateBundle, formatProblem, MAX_BUNDLE_COMPRESSED_BYTES } from './bundle/validate-bundle.js';
export type { BundleProblem, BundleValidation, ValidateBundleOptions } from './bundle/validate-bundle.js';
export {
  REMOVED_APIS,
  DEPRECATED_APIS,
  checkApiVersion,
  parseKubernetesVersion,
  formatKubernetesVersion,
} from './bundle/removed-apis.js';
export type {
  RemovedApi,
  DeprecatedApi,
  KubernetesVersion,
  ApiVersionFinding,
  TypedObject,
} from './bundle/removed-apis.js';
export { CSV_API_VERSION } from './bundle/cluster-service-version.js';
export type {
  ClusterServiceVersion,
  InstallMode,
  InstallModeType,
  OwnedCrd,
  Descriptor,
  WebhookDefinition,
  StrategyPermissions,
} from './bundle/cluster-service-version.js';
