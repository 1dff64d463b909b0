/**
 * sharding: scale a controller out across replicas. Each replica holds a membership Lease in a ring;
 * a sharder (the leader) assigns every primary object to one live member by rendezvous hashing and
 * writes the assignment as a label; each replica watches and reconciles only its own objects. A key
 * moves from a live owner only after the owner acknowledged a drain, and from a dead one only after
 * its Lease expired, which fencing makes safe. See docs/sharding.md.
 */
export { Sharding } from './sharding.js';
export type { ShardingHost, ShardingDependencies } from './sharding.js';
export { ShardGate, ACK_CONFLICT_RETRY_MS } from './shard-gate.js';
export type { Admission, ShardGateOptions } from './shard-gate.js';
export { RING_LABEL, MEMBER_LABEL, shardLabel, drainLabel, grantLabel, releasedLabel, assignmentLabels, memberLeaseName, resolveShardingOptions } from './sharding-options.js';
export type { ShardingMode, ResolvedShardingMode, ShardingOptions, ResolvedSharding } from './sharding-options.js';
export { ownerOf, rendezvousWeight, fnv1a64Hex } from './rendezvous.js';
export { memberIdOf } from './member-id.js';
export { RingMembership } from './ring-membership.js';
export type { MembershipChange, RingMembershipOptions } from './ring-membership.js';
export { DRAIN_VALUE, ShardAssignmentError, UNASSIGNABLE_EVENT_REASON } from './sharder.js';
export { HASH_BUCKETS, bucketOf, bucketOwner, bucketsOf, bucketSelector } from './buckets.js';
export { RangeListerWatcher } from './range-lister-watcher.js';
export type { CacheInformers, ShardingPermission } from './sharding.js';
export {
  FULL_HASH_RANGE,
  HASH_SPACE_END,
  InvalidShardSelectorError,
  fnv1a64,
  formatHashBound,
  formatShardSelector,
  hashInRange,
  hashRange,
  mergeRanges,
  objectInRange,
  parseShardSelector,
  rangeFraction,
  selectorMatches,
  shardHash,
  splitHashSpace,
} from './hash-range.js';
export type { HashRange, ShardKeyField, ShardSelector } from './hash-range.js';
export { INVALID_PROBE_SELECTOR, probeShardSelectorSupport } from './server-support.js';
export type { ShardSelectorSupport, ShardSupportProbeOptions } from './server-support.js';
export { assignHashRanges, assignHashSlices, DEFAULT_HASH_SEGMENTS } from './range-assignment.js';
export type { RangeAssignmentOptions } from './range-assignment.js';
