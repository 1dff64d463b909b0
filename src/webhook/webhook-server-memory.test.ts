import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';
import { DEFAULT_RESOURCES } from '../codegen/operator-manifests.js';
import { DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS } from './webhook-server.js';

const MiB = 1024 * 1024;

/** Kilobytes in a /proc/<pid>/status line (VmRSS now, VmHWM the peak). */
function procKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1]);
}

function post(port: number, ca: string, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/validate',
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      },
    );
    // A refused review's connection is dropped while its body is still being sent.
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

const review = (items: string, uid: string): string =>
  `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","kind":{"group":"example.com","version":"v1","kind":"Widget"},"resource":{"group":"example.com","version":"v1","resource":"widgets"},"operation":"CREATE","userInfo":{"username":"alice"},"object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"items":[${items}]}}}}`;

/** A review of about `bytes` whose list holds `item` repeated. */
function sized(bytes: number, item: string, uid: string): Buffer {
  const n = Math.floor((bytes - review('', uid).length) / (item.length + 1));
  return Buffer.from(review(Array.from({ length: n }, () => item).join(','), uid));
}

test(
  'under 50 concurrent 7 MiB reviews the server process stays under the Deployment memory limit, and a small review is answered in time',
  { skip: process.platform !== 'linux' ? 'reads /proc' : false },
  async (t) => {
    const limitMiB = Number(/^(\d+)Mi$/.exec(String(DEFAULT_RESOURCES.limits!.memory))![1]);
    const script = fileURLToPath(new URL('./testing/webhook-server-process.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const { port, ca } = await new Promise<{ port: number; ca: string }>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString('utf8');
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!) as { port: number; ca: string });
        });
        child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
      });
      const before = procKb(child.pid!, 'VmRSS');
      // The shape (`[{},{},…]`, ~240 MiB once decoded) and an ordinary one (~4x once decoded).
      const empty = sized(7 * MiB - 4096, '{}', 'empty');
      const ordinary = sized(
        7 * MiB - 4096,
        '{"name":"item-00001","image":{"name":"nginx","tag":"1.25"},"replicas":3,"labels":{"app":"web"}}',
        'ordinary',
      );
      const started = performance.now();
      const big = Array.from({ length: 50 }, (_, i) => post(port, ca, i % 2 ? ordinary : empty));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const smallStarted = performance.now();
      const small = await post(port, ca, Buffer.from(review('{"name":"a"}', 'small')));
      const smallMs = performance.now() - smallStarted;
      const statuses = await Promise.all(big);
      const elapsedMs = performance.now() - started;
      const peakMiB = procKb(child.pid!, 'VmHWM') / 1024;
      const count = (s: number) => statuses.filter((x) => x === s).length;
      t.diagnostic(
        `server RSS ${Math.round(before / 1024)} MiB before, peak ${peakMiB.toFixed(0)} MiB (limit ${limitMiB} MiB); small review ${smallMs.toFixed(0)} ms; 50 big in ${elapsedMs.toFixed(0)} ms: 200×${count(200)} 413×${count(413)} 429×${count(429)} dropped×${count(0)}`,
      );
      assert.equal(small, 200);
      assert.ok(smallMs < DEFAULT_WEBHOOK_REQUEST_TIMEOUT_MS, `small review took ${smallMs.toFixed(0)} ms`);
      assert.ok(peakMiB < limitMiB, `peak RSS ${peakMiB.toFixed(0)} MiB`);
      // The largest ordinary review: an UPDATE of an object at etcd's 1.5 MiB limit, with its old object.
      assert.equal(
        await post(
          port,
          ca,
          sized(
            3 * MiB,
            '{"name":"item-00001","image":{"name":"nginx","tag":"1.25"},"replicas":3,"labels":{"app":"web"}}',
            'update',
          ),
        ),
        200,
        'a 3 MiB ordinary review alone is served',
      );
      assert.ok(procKb(child.pid!, 'VmHWM') / 1024 < limitMiB);
    } finally {
      child.kill('SIGTERM');
    }
  },
);
