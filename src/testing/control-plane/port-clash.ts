import { ComponentError } from './managed-process.js';

/**
 * Whether a control-plane component failed because the port it was given was taken (etcd and
 * kube-apiserver both log Go's "bind: address already in use"): the one start failure that a new
 * attempt with new ports cures.
 */
export function isPortClash(err: unknown): boolean {
  return err instanceof ComponentError && err.logTail.includes('address already in use');
}
