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
export { FaultProxy, FaultProxyError } from './fault-proxy.js';
export type { FaultRule, FaultMatch, FaultKind, StatusFault, DropFault, DelayFault, CutWatchFault, FaultHandle, FaultProxyOptions, FaultProxyStats, FaultProxyUpstream } from './fault-proxy.js';
export { auditConsistency, analyzeHistory, readEtcdHistory, registryKey, formatAuditReport, ConsistencyAuditError, DEFAULT_AUDIT_TIMEOUT_MS } from './consistency-audit.js';
export type { AuditReport, AuditFinding, FindingKind, LostUpdateKind, OutOfOrderKind, HistoryEvent, HistoryKv, RecordedWrite, ConsistencyAuditOptions, ReadEtcdHistoryOptions, AnalyzeHistoryOptions } from './consistency-audit.js';
export { EtcdClusterError, ETCD_MEMBER_USER_PREFIX } from './etcd-cluster.js';
export type { EtcdMemberStatus } from './etcd-cluster.js';
