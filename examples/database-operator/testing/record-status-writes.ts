/**
 * A client that passes everything through and tells `onWrite` about each status write to a
 * Database that landed: the resourceVersion it was conditioned on (a merge patch carries it in
 * `metadata.resourceVersion`, as `patchStatus` sends it) and the one the server answered with.
 */
import type { Client } from 'operator-runtime';
import { DATABASE } from '../src/database.js';

export interface StatusWrite {
  /** `namespace/name` */
  readonly key: string;
  readonly read: string;
  readonly written: string;
}

export function recordStatusWrites(client: Client, onWrite: (write: StatusWrite) => void): Client {
  return {
    mapper: client.mapper,
    get: (type, name, opts) => client.get(type, name, opts),
    listPage: (type, opts) => client.listPage(type, opts),
    listPages: (type, opts) => client.listPages(type, opts),
    list: (type, opts) => client.list(type, opts),
    watch: (type, opts) => client.watch(type, opts),
    create: (obj, opts) => client.create(obj, opts),
    update: (obj, opts) => client.update(obj, opts),
    patch: (type, name, patch, opts) => client.patch(type, name, patch, opts),
    apply: client.apply.bind(client),
    delete: (type, name, opts) => client.delete(type, name, opts),
    updateStatus: (obj, opts) => client.updateStatus(obj, opts),
    applyStatus: client.applyStatus.bind(client),
    async patchStatus(type, name, patch, opts) {
      const written = await client.patchStatus(type, name, patch, opts);
      if (type.apiVersion === DATABASE.apiVersion && type.kind === DATABASE.kind) {
        const read = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
        const after = (written as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
        if (read && after) onWrite({ key: `${opts?.namespace ?? ''}/${name}`, read, written: after });
      }
      return written;
    },
  };
}
