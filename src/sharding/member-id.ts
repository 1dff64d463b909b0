/**
 * Member ids: a replica's identity and incarnation (`hostname_<uuid>#<uuid>`, long and with characters
 * a label value cannot hold) shortened to 16 hex digits of its 64-bit FNV-1a hash. The id is what the
 * shard label carries and what the Lease name ends with; the Lease's holderIdentity keeps the identity.
 */
import { fnv1a64Hex } from './rendezvous.js';

export function memberIdOf(identity: string): string {
  return fnv1a64Hex(identity);
}
