import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { OperatorRuntimeError } from '../../core/errors.js';

const run = promisify(execFile);

/** A system account to run a component as (for iptables' owner match). */
export interface SystemUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

export class SystemUserError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_SYSTEM_USER';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TEST_ENV_SYSTEM_USER', message, options);
  }
}

/**
 * Returns the system user `name`, creating it (no home, no login shell) when missing. Idempotent and
 * safe when two test processes race: a lost `useradd` race is followed by a second lookup.
 * Needs root to create.
 */
export async function ensureSystemUser(name: string): Promise<SystemUser> {
  const existing = await lookupUser(name);
  if (existing) return existing;
  try {
    await run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  } catch (err) {
    // exit 9: created by someone else meanwhile.
    const again = await lookupUser(name);
    if (again) return again;
    throw new SystemUserError(`cannot create system user ${name} (chaos tests need root and useradd)`, { cause: err });
  }
  const created = await lookupUser(name);
  if (!created) throw new SystemUserError(`system user ${name} missing right after useradd`);
  return created;
}

async function lookupUser(name: string): Promise<SystemUser | undefined> {
  try {
    const { stdout } = await run('getent', ['passwd', name]);
    const fields = stdout.trim().split(':');
    const uid = Number(fields[2]);
    const gid = Number(fields[3]);
    if (!Number.isInteger(uid) || !Number.isInteger(gid)) return undefined;
    return { name, uid, gid };
  } catch {
    return undefined;
  }
}
