import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TestEnv } from './test-env.js';
import { iptablesAvailable, outputRules } from './iptables.js';

const usable = process.getuid?.() === 0 && (await iptablesAvailable());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a chaos test process killed with SIGKILL mid-fault', { skip: !usable && 'needs root and iptables' }, () => {
  test('leaves no etcd member running, and removeStale() deletes its iptables rules and temp dir', async () => {
    const script = `
      import { TestEnv } from ${JSON.stringify(new URL('./test-env.ts', import.meta.url).href)};
      import { etcdFaults } from ${JSON.stringify(new URL('../chaos/etcd-faults.ts', import.meta.url).href)};
      const env = await TestEnv.start({ etcdMembers: 3 });
      await etcdFaults(env).partitionMember(1);
      process.stdout.write(JSON.stringify({ pids: env.pids(), id: env.id, dir: env.dir }) + '\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const info = await new Promise<{ pids: number[]; id: string; dir: string }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n')[0];
        if (out.includes('\n') && line) resolve(JSON.parse(line) as { pids: number[]; id: string; dir: string });
      });
      child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    assert.equal(info.pids.length, 4, 'three members and kube-apiserver');
    const ours = async (): Promise<string[]> =>
      (await outputRules()).filter((r) => r.includes(`operator-runtime-chaos-${info.id}`));
    assert.equal((await ours()).length, 5);
    // Other test files start 3-member envs at the same time, and TestEnv.start sweeps stale rules:
    // while we check that the killed process healed nothing, its env must not look stale to them.
    // Its owner becomes this (live) test process; handing it back to the dead child makes it stale.
    const ownerFile = join(info.dir, 'owner.pid');
    await writeFile(ownerFile, String(process.pid));
    child.kill('SIGKILL');
    const deadline = Date.now() + 10_000;
    while (info.pids.some(alive)) {
      if (Date.now() > deadline) assert.fail(`still alive: ${info.pids.filter(alive).join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal((await ours()).length, 5, 'nobody healed: the rules outlive the killed process');
    await writeFile(ownerFile, String(child.pid));
    await TestEnv.removeStale({ iptables: true });
    assert.deepEqual(await ours(), []);
    assert.equal(existsSync(info.dir), false);
  });
});
