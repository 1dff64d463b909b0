/**
 * The registry+v1 bundle layout, as operator-registry defines it (pkg/lib/bundle/generate.go):
 * `manifests/` and `metadata/` folders, the annotation keys of `metadata/annotations.yaml`, and the
 * kinds a registry+v1 bundle may carry (pkg/lib/bundle/supported_resources.go).
 */
export const REGISTRY_V1_MEDIA_TYPE = 'registry+v1';
export const MANIFESTS_DIR = 'manifests/';
export const METADATA_DIR = 'metadata/';

export const BUNDLE_ANNOTATIONS = {
  mediaType: 'operators.operatorframework.io.bundle.mediatype.v1',
  manifests: 'operators.operatorframework.io.bundle.manifests.v1',
  metadata: 'operators.operatorframework.io.bundle.metadata.v1',
  package: 'operators.operatorframework.io.bundle.package.v1',
  channels: 'operators.operatorframework.io.bundle.channels.v1',
  defaultChannel: 'operators.operatorframework.io.bundle.channel.default.v1',
} as const;

/** operator-registry's supportedResources: the kinds OLM applies from a registry+v1 bundle. */
export const SUPPORTED_KINDS: ReadonlySet<string> = new Set([
  'ClusterServiceVersion',
  'CustomResourceDefinition',
  'Secret',
  'ClusterRole',
  'ClusterRoleBinding',
  'ConfigMap',
  'ServiceAccount',
  'Service',
  'Role',
  'RoleBinding',
  'PrometheusRule',
  'ServiceMonitor',
  'PodDisruptionBudget',
  'PriorityClass',
  'VerticalPodAutoscaler',
  'ConsoleYAMLSample',
  'ConsoleQuickStart',
  'ConsoleCLIDownload',
  'ConsoleLink',
  'ConsolePlugin',
  'NetworkPolicy',
  'PodMonitor',
]);
