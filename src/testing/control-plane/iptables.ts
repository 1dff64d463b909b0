import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { OperatorRuntimeError } from '../../core/errors.js';

const run = promisify(execFile);

/** Every rule the chaos bed adds carries a comment starting with this, then the env's id. */
export const CHAOS_RULE_COMMENT_PREFIX = 'operator-runtime-chaos-';

/** One rule on the OUTPUT chain for TCP packets sent by sockets of `uid`. */
export interface BlockRule {
  readonly uid: number;
  readonly destination?: string;
  readonly destinationPort?: number;
  readonly sourcePort?: number;
  /**
   * `drop` (default): the packet vanishes, the sender times out. `reset`: REJECT with a TCP reset
   * to the local sender, so its connection dies at once and its new ones are refused.
   */
  readonly action?: 'drop' | 'reset';
}

export class IptablesError extends OperatorRuntimeError {
  declare readonly code: 'ERR_TEST_ENV_IPTABLES';
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_TEST_ENV_IPTABLES', message, options);
  }
}

/**
 * The OUTPUT rules of one owner (a TestEnv), tagged with `-m comment` so that removing them deletes
 * exactly those and nothing another env or the host added. `-w` waits for the xtables lock, since
 * test files run in parallel processes. Needs root and the iptables package.
 */
export class TaggedOutputRules {
  readonly comment: string;

  constructor(ownerId: string) {
    if (!/^[A-Za-z0-9_.-]+$/.test(ownerId)) throw new IptablesError(`invalid rule owner id ${JSON.stringify(ownerId)}`);
    this.comment = `${CHAOS_RULE_COMMENT_PREFIX}${ownerId}`;
  }

  async block(rule: BlockRule): Promise<void> {
    const args = ['-p', 'tcp', '-m', 'owner', '--uid-owner', String(rule.uid)];
    if (rule.destination) args.push('-d', rule.destination);
    if (rule.destinationPort !== undefined) args.push('--dport', String(rule.destinationPort));
    if (rule.sourcePort !== undefined) args.push('--sport', String(rule.sourcePort));
    const target = rule.action === 'reset' ? ['-j', 'REJECT', '--reject-with', 'tcp-reset'] : ['-j', 'DROP'];
    await iptables(['-I', 'OUTPUT', ...args, '-m', 'comment', '--comment', this.comment, ...target]);
  }

  /** This owner's rules as `iptables -S` prints them. */
  async list(): Promise<string[]> {
    return (await outputRules()).filter((line) => commentOf(line) === this.comment);
  }

  /** Deletes every rule carrying this owner's comment; returns how many. */
  async removeAll(): Promise<number> {
    return removeRules((comment) => comment === this.comment);
  }

  /** The same, synchronously: for a process 'exit' hook, where nothing async runs any more. */
  removeAllSync(): void {
    try {
      const out = execFileSync('iptables', ['-w', '-S', 'OUTPUT'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      for (const line of out.split('\n')) {
        if (!line.startsWith('-A OUTPUT ') || commentOf(line) !== this.comment) continue;
        execFileSync('iptables', ['-w', '-D', ...line.split(/\s+/).filter(Boolean).slice(1)], { stdio: 'ignore' });
      }
    } catch {
      // best effort at exit; the next chaos TestEnv.start removes what is left
    }
  }
}

/** `iptables -S OUTPUT`, one rule per line. */
export async function outputRules(): Promise<string[]> {
  const out = await iptables(['-S', 'OUTPUT']);
  return out.split('\n').filter((line) => line.startsWith('-A OUTPUT '));
}

/**
 * Deletes the chaos rules whose owner id `isStale` accepts (rules of a test process that was
 * SIGKILLed before it could heal). Returns how many were deleted.
 */
export async function removeStaleChaosRules(isStale: (ownerId: string) => boolean): Promise<number> {
  return removeRules(
    (comment) =>
      comment.startsWith(CHAOS_RULE_COMMENT_PREFIX) && isStale(comment.slice(CHAOS_RULE_COMMENT_PREFIX.length)),
  );
}

/** Whether the iptables binary is usable (root, installed). */
export async function iptablesAvailable(): Promise<boolean> {
  try {
    await iptables(['-S', 'OUTPUT']);
    return true;
  } catch {
    return false;
  }
}

async function removeRules(match: (comment: string) => boolean): Promise<number> {
  let removed = 0;
  for (const line of await outputRules()) {
    const comment = commentOf(line);
    if (comment === undefined || !match(comment)) continue;
    // Our rules hold no quoted or spaced values, so `-A` → `-D` with the same words is exact.
    const words = line.split(/\s+/).filter(Boolean);
    try {
      await iptables(['-D', ...words.slice(1)]);
      removed++;
    } catch (err) {
      // Deleted meanwhile by another cleanup: fine; anything else is a leak worth knowing about.
      if (!/does a matching rule exist|Bad rule/i.test(String((err as { stderr?: unknown }).stderr ?? err))) throw err;
    }
  }
  return removed;
}

function commentOf(line: string): string | undefined {
  const m = /--comment\s+"?([^"\s]+)"?/.exec(line);
  return m?.[1];
}

async function iptables(args: readonly string[]): Promise<string> {
  try {
    const { stdout } = await run('iptables', ['-w', ...args]);
    return stdout;
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new IptablesError(`iptables ${args.join(' ')} failed${stderr ? `: ${stderr}` : ''}`, { cause: err });
  }
}
