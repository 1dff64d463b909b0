import { InvalidOptionError } from '../core/errors.js';
import type { ResourceType } from './discovery.js';
import type { ObjectLike } from './client-options.js';

/** `{ apiVersion, kind }` of an object to write; every Client implementation addresses it this way. */
export function typeOf(obj: ObjectLike): ResourceType {
  if (!obj.apiVersion || !obj.kind)
    throw new InvalidOptionError('apiVersion/kind', 'the object must carry apiVersion and kind');
  return { apiVersion: obj.apiVersion, kind: obj.kind };
}

export function nameOf(obj: ObjectLike): string {
  const name = obj.metadata?.name;
  if (!name) throw new InvalidOptionError('metadata.name', 'the object must carry a name');
  return name;
}
