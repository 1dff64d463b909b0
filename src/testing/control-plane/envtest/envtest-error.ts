import { OperatorRuntimeError } from '../../../core/errors.js';

/**
 * Why getting envtest binaries failed: an index that cannot be read, an unknown version, a refused,
 * truncated or corrupted download, an archive with entries outside its folder. The message names
 * the archive, the expected hash and the fix; nothing is left in the cache.
 */
export class EnvtestError extends OperatorRuntimeError {
  declare readonly code: 'ERR_ENVTEST';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_ENVTEST', message, options);
  }
}
