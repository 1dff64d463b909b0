import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../core/fake-clock.js';
import { recordingLogger } from '../logging/recording-logger.js';
import { CertificateReloader, checkServingPair, type ServingCertificate } from './certificate-reloader.js';
import { createSelfSignedCertificate } from './self-signed-certificate.js';

describe('certificate reloader: only a pair that can serve replaces the one in use', () => {
  let dir: string;
  let reloader: CertificateReloader;
  const changes: ServingCertificate[] = [];
  const log = recordingLogger();
  const first = createSelfSignedCertificate({ hosts: ['127.0.0.1'] });
  const second = createSelfSignedCertificate({ hosts: ['127.0.0.1'] });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cert-reloader-'));
    await writeFile(join(dir, 'tls.crt'), first.cert);
    await writeFile(join(dir, 'tls.key'), first.key);
    reloader = new CertificateReloader({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      clock: new FakeClock(),
      logger: log,
      onChange: (pair) => changes.push(pair),
    });
    assert.equal((await reloader.start()).cert, first.cert);
  });
  after(async () => {
    reloader.stop();
    await rm(dir, { recursive: true, force: true });
  });

  // What a reader sees between a writer's truncate and its write, or mid-rotation.
  for (const [name, cert, key] of [
    ['an empty certificate file (a write caught after its truncate)', '', first.key],
    ['an empty key file', first.cert, ''],
    ['a certificate cut short', first.cert.slice(0, 120), first.key],
    ['a certificate from another pair than the key', second.cert, first.key],
  ] as const) {
    test(`${name} is refused and the previous pair keeps serving`, async () => {
      log.clear();
      await writeFile(join(dir, 'tls.crt'), cert);
      await writeFile(join(dir, 'tls.key'), key);
      await reloader.reload();
      assert.equal(reloader.certificate?.cert, first.cert);
      assert.equal(changes.length, 0);
      const refusal = log.entries.find((e) => e.msg === 'serving certificate does not load; keeping the previous one');
      assert.ok(refusal, 'the refusal is logged');
      assert.doesNotMatch(JSON.stringify(refusal), /PRIVATE KEY/, 'the log never carries the key');
    });
  }

  test('a matching pair replaces it and is announced once', async () => {
    await writeFile(join(dir, 'tls.crt'), second.cert);
    await writeFile(join(dir, 'tls.key'), second.key);
    await reloader.reload();
    await reloader.reload();
    assert.equal(reloader.certificate?.cert, second.cert);
    assert.deepEqual(
      changes.map((c) => c.cert),
      [second.cert],
    );
  });

  test('checkServingPair names what is wrong', () => {
    assert.throws(() => checkServingPair({ cert: second.cert, key: first.key }), /does not match its key/);
    assert.throws(() => checkServingPair({ cert: '', key: first.key }));
    assert.doesNotThrow(() => checkServingPair(first));
  });
});
