/**
 * operator-runtime/testing/chaos: fault injection and verification for chaos suites — the fault
 * proxy (429s, 500s, dropped connections, watch cuts), the etcd-history consistency audit, etcd
 * member faults (`etcdFaults(env)`: partitions, kills, pauses, leader queries), etcd cluster and
 * iptables errors, and supervised child processes. Partitions need root and
 * iptables; nothing in `operator-runtime/testing` needs either.
 */
export { FaultProxy, FaultProxyError } from './fault-proxy.js';
export type {
  FaultRule,
  FaultMatch,
  FaultKind,
  StatusFault,
  DropFault,
  DelayFault,
  CutWatchFault,
  RewriteFault,
  RewrittenResponse,
  FaultRuleBase,
  FaultHandle,
  FaultProxyOptions,
  FaultProxyStats,
  FaultProxyUpstream,
} from './fault-proxy.js';
export {
  auditConsistency,
  analyzeHistory,
  readEtcdHistory,
  registryKey,
  formatAuditReport,
  ConsistencyAuditError,
  DEFAULT_AUDIT_TIMEOUT_MS,
} from './consistency-audit.js';
export type {
  AuditReport,
  AuditFinding,
  FindingKind,
  LostUpdateKind,
  OutOfOrderKind,
  HistoryEvent,
  HistoryKv,
  RecordedWrite,
  ConsistencyAuditOptions,
  ReadEtcdHistoryOptions,
  AnalyzeHistoryOptions,
} from './consistency-audit.js';
export { EtcdClusterError, ETCD_MEMBER_USER_PREFIX } from '../control-plane/etcd-cluster.js';
export { EtcdFaults, etcdFaults, DEFAULT_WAIT_FOR_ETCD_LEADER_TIMEOUT_MS } from './etcd-faults.js';
export type { EtcdMemberStatus } from '../control-plane/etcd-cluster.js';
export { IptablesError, CHAOS_RULE_COMMENT_PREFIX, iptablesAvailable } from '../control-plane/iptables.js';
export { ManagedProcess } from '../control-plane/managed-process.js';
export type { ManagedProcessOptions } from '../control-plane/managed-process.js';
