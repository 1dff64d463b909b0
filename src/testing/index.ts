/**
 * operator-runtime/testing: the local control plane (TestEnv, its binaries and the envtest
 * downloader, an existing cluster) and the tools tests around it use (fake clock, seeded random,
 * recording logger, eventually, kubectl, manifests, PodSimulator). The other test tools have one
 * entry each: `operator-runtime/testing/fake-client` (FakeClient), `…/testing/conformance`,
 * `…/testing/simulation` (simulate()), `…/testing/chaos` (fault proxy, consistency audit, etcd
 * faults) and `…/testing/fleet` (TestFleet).
 */
export { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
export { seededRandom } from '../core/seeded-random.js';
export { recordingLogger } from '../logging/recording-logger.js';
export type { RecordingLogger, RecordedEntry, RecordedLevel } from '../logging/recording-logger.js';
export { TestEnv, TestEnvError, DEFAULT_START_TIMEOUT_MS, TEST_ENV_LABEL } from './control-plane/test-env.js';
export { TestEnvUnavailableError, USE_EXISTING_CLUSTER_ENV } from './control-plane/existing-cluster.js';
export type { ExistingClusterOptions } from './control-plane/existing-cluster.js';
export { DEFAULT_ETCD_MEMBERS } from './control-plane/etcd-cluster.js';
export type {
  TestEnvOptions,
  ControlPlaneComponent,
  KubeconfigObject,
  TestEnvServer,
} from './control-plane/test-env.js';
export {
  resolveBinaries,
  defaultAssetsDir,
  BinariesNotFoundError,
  ControllerManagerMissingError,
  CONTROL_PLANE_VERSION,
  resolveModernBinaries,
  defaultModernAssetsDir,
} from './control-plane/binaries.js';
export type {
  ControlPlaneBinaries,
  ModernServerBinaries,
  BinariesSource,
  ResolveBinariesOptions,
} from './control-plane/binaries.js';
export { installEnvtest, listEnvtest, useEnvtest, cleanupEnvtest } from './control-plane/envtest/envtest.js';
export type {
  EnvtestOptions,
  UseEnvtestOptions,
  UsedEnvtest,
  EnvtestListing,
} from './control-plane/envtest/envtest.js';
export { EnvtestError } from './control-plane/envtest/envtest-error.js';
export { DEFAULT_ENVTEST_INDEX_URL } from './control-plane/envtest/release-index.js';
export type { EnvtestArchive, EnvtestRelease } from './control-plane/envtest/release-index.js';
export type { InstalledEnvtest, EnvtestStoreKind } from './control-plane/envtest/store.js';
export type { EnvtestPlatform } from './control-plane/envtest/platform.js';
export type { ProgressStream } from './control-plane/envtest/progress-bar.js';
export { ComponentError } from './control-plane/managed-process.js';
export { kubectl } from './control-plane/kubectl.js';
export { readManifests } from './control-plane/manifests.js';
export { PodSimulator, DEFAULT_POD_READY_DELAY_MS, SIMULATED_NODE_NAME } from './control-plane/pod-simulator.js';
export type { PodSimulatorOptions } from './control-plane/pod-simulator.js';
export { freePort } from './control-plane/free-port.js';
export {
  eventually,
  EventuallyTimeoutError,
  DEFAULT_EVENTUALLY_TIMEOUT_MS,
  DEFAULT_EVENTUALLY_INTERVAL_MS,
} from './control-plane/eventually.js';
export type { EventuallyOptions } from './control-plane/eventually.js';
export { webhookServingCertificate } from './control-plane/webhook-certificate.js';
export type {
  WebhookServingCertificate,
  WebhookServingCertificateOptions,
} from './control-plane/webhook-certificate.js';
