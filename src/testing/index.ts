/** operator-runtime/testing: the local control plane, the fake clock and test helpers. */
export { FakeClock, flushMicrotasks } from '../core/fake-clock.js';
export { TestEnv, TestEnvError, DEFAULT_START_TIMEOUT_MS } from './test-env.js';
export type { TestEnvOptions, ControlPlaneComponent, KubeconfigObject } from './test-env.js';
export { resolveBinaries, defaultAssetsDir, BinariesNotFoundError, CONTROL_PLANE_VERSION } from './binaries.js';
export type { ControlPlaneBinaries } from './binaries.js';
export { ComponentError } from './managed-process.js';
export { kubectl } from './kubectl.js';
export { readManifests } from './manifests.js';
export { PodSimulator, DEFAULT_POD_READY_DELAY_MS, SIMULATED_NODE_NAME } from './pod-simulator.js';
export type { PodSimulatorOptions } from './pod-simulator.js';
export { freePort } from './free-port.js';
export * from './fake-client/index.js';
