/**
 * Where the generated files come from: `customResourceDefinition` (operator-runtime/crd) per kind,
 * `rbacManifests` (src/rbac) from the manager's declarations, `webhookManifests`/`webhookConversion`
 * (operator-runtime/webhook) from its registered webhooks, and the shared YAML writer of
 * operator-runtime/crd, so every generated file has the same header and formatting.
 */
export { customResourceDefinition } from '../crd/custom-resource-definition.js';
export { manifestYaml } from '../crd/manifest-yaml.js';
export { rbacManifests } from '../rbac/rbac-manifests.js';
export {
  webhookManifests,
  webhookConversion,
  CERT_MANAGER_INJECT_CA_ANNOTATION,
} from '../webhook/webhook-manifests.js';
