/**
 * sharding: scale a controller out across replicas. Each replica holds a membership Lease in a ring;
 * a sharder (the leader) assigns every primary object to one live member by rendezvous hashing and
 * writes the assignment as a label; each replica watches and reconciles only its own objects. A key
 * moves from a live owner only after the owner acknowledged a drain, and from a dead one only after
 * its Lease expired, which fencing makes safe. See docs/sharding.md.
 *
 * This entry is what a user configures and handles: the manager's `sharding` option, the labels
 * tools must leave alone, the error and Event reason of an object that cannot be assigned, and the
 * server-side building blocks. The gate, the sharder, the ring observer and the hashing are
 * internal; the `shardSelector` wire format is in `operator-runtime/client`.
 */
export type {
  ShardingMode,
  ResolvedShardingMode,
  ShardingOptions,
  ResolvedSharding,
  ShardMembership,
} from './sharding-options.js';
export { RING_LABEL, MEMBER_LABEL, shardLabel, assignmentLabels } from './sharding-options.js';
export { ShardAssignmentError, UNASSIGNABLE_EVENT_REASON } from './sharder.js';
export { probeShardSelectorSupport } from './server-support.js';
export type { ShardSelectorSupport, ShardSupportProbeOptions } from './server-support.js';
export { assignHashRanges } from './range-assignment.js';
export type { RangeAssignmentOptions } from './range-assignment.js';
