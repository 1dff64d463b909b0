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
  DEFAULT_METRICS_PORT,
  DEFAULT_HEALTH_PORT,
  DEFAULT_WEBHOOK_PORT,
  METRICS_NAMESPACE_LABEL,
} from './operator-manifests.js';
export { WEBHOOK_SERVICE_PORT, DEFAULT_WEBHOOK_INGRESS_FROM } from './webhook-serving-manifests.js';
