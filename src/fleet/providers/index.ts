/**
 * Cluster providers: where a fleet's member clusters come from (`ClusterProvider` in
 * ../cluster-provider.ts). For the `operator-runtime/fleet` entry to re-export.
 */
export { staticClusters, type StaticCluster, type StaticClustersOptions } from './static-clusters.js';
export {
  kubeconfigDirectory,
  DEFAULT_KUBECONFIG_DIRECTORY_DEBOUNCE_MS,
  DEFAULT_KUBECONFIG_DIRECTORY_RESCAN_PERIOD_MS,
  KUBECONFIG_FILE_EXTENSIONS,
  type KubeconfigDirectoryOptions,
} from './kubeconfig-directory.js';
export {
  kubeconfigSecrets,
  CLUSTER_NAME_ANNOTATION,
  DEFAULT_KUBECONFIG_SECRET_KEY,
  DEFAULT_KUBECONFIG_SECRET_SELECTOR,
  type KubeconfigSecretsOptions,
} from './kubeconfig-secrets.js';
export {
  ClusterKubeconfigError,
  checkKubeconfig,
  kubeconfigMember,
  kubeconfigRevision,
  type CheckKubeconfigOptions,
  type KubeconfigMemberOptions,
} from './kubeconfig-member.js';
