/**
 * Issue 24 item 13: the secure-metrics certificate was read once at start, so a rotated certificate
 * (cert-manager renewing it, a Secret volume's swap) was never served until a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Client } from '../client/client.js';
import { FakeClock } from '../core/fake-clock.js';
import { freePort } from '../testing/control-plane/free-port.js';
import { Manager } from './manager.js';
import { createSelfSignedCertificate } from '../webhook/self-signed-certificate.js';
import { quietClient } from './testing/quiet-client.js';

const client = (): Client => quietClient({ extra: { create: async () => ({ status: { authenticated: false } }) } });

/** The fingerprint of the certificate a new TLS connection is served. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cert: PeerCertificate = socket.getPeerCertificate();
      socket.destroy();
      resolve(cert.fingerprint256);
    });
    socket.on('error', reject);
  });
}

async function writePair(dir: string, pair: { cert: string; key: string }): Promise<void> {
  // As a Secret volume does: the new files appear whole.
  await writeFile(path.join(dir, 'tls.crt.tmp'), pair.cert);
  await writeFile(path.join(dir, 'tls.key.tmp'), pair.key);
  await rename(path.join(dir, 'tls.key.tmp'), path.join(dir, 'tls.key'));
  await rename(path.join(dir, 'tls.crt.tmp'), path.join(dir, 'tls.crt'));
}

test(
  'regression: a rotated secure-metrics certificate is served to the next TLS connection without a restart',
  { timeout: 30_000 },
  async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'metrics-cert-'));
    const first = createSelfSignedCertificate({ hosts: ['first.example'] });
    const second = createSelfSignedCertificate({ hosts: ['second.example'] });
    await writePair(dir, first);
    const clock = new FakeClock(0);
    const manager = new Manager({
      client: client(),
      clock,
      metricsPort: await freePort(),
      healthPort: 0,
      bindHost: '127.0.0.1',
      secureMetrics: { certFile: path.join(dir, 'tls.crt'), keyFile: path.join(dir, 'tls.key') },
    });
    const synced = new Promise<void>((resolve) =>
      manager.add({ start: async () => resolve() }, { needLeaderElection: false }),
    );
    const stop = new AbortController();
    const run = manager.start(stop.signal);
    try {
      await synced;
      const port = manager.endpoints.metricsPort!;
      const fp = (pem: string): string => new X509Certificate(pem).fingerprint256;
      assert.equal(await servedFingerprint(port), fp(first.cert));
      await writePair(dir, second);
      // The directory watch usually fires first; the poll on the manager's clock is the fallback.
      await clock.advance(10_000);
      const until = Date.now() + 10_000;
      let served = await servedFingerprint(port);
      while (served !== fp(second.cert) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        served = await servedFingerprint(port);
      }
      assert.equal(served, fp(second.cert), 'the new certificate is served');
    } finally {
      stop.abort();
      await run;
    }
  },
);
