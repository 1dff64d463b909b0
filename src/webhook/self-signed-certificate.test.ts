import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSelfSignedCertificate } from './self-signed-certificate.js';

test('the self-signed certificate parses, verifies itself, matches its key and names its hosts', () => {
  const nowMs = Date.UTC(2026, 0, 1);
  const { cert, key } = createSelfSignedCertificate({
    hosts: ['metrics.ops.svc', '127.0.0.1', '::1'],
    nowMs,
    validityMs: 3600_000,
  });
  const x = new X509Certificate(cert);
  assert.ok(x.verify(x.publicKey), 'signed by its own key');
  assert.ok(x.checkPrivateKey(createPrivateKey(key)));
  assert.equal(x.checkHost('metrics.ops.svc'), 'metrics.ops.svc');
  assert.equal(x.checkIP('127.0.0.1'), '127.0.0.1');
  assert.equal(x.checkIP('0:0:0:0:0:0:0:1'), '0:0:0:0:0:0:0:1');
  assert.equal(x.checkHost('evil.test'), undefined);
  assert.equal(Date.parse(x.validTo), nowMs + 3600_000 - (nowMs % 1000));
  assert.ok(Date.parse(x.validFrom) < nowMs);
});

test('two certificates have different keys and serials', () => {
  const a = new X509Certificate(createSelfSignedCertificate().cert);
  const b = new X509Certificate(createSelfSignedCertificate().cert);
  assert.notEqual(a.serialNumber, b.serialNumber);
  assert.notEqual(a.fingerprint256, b.fingerprint256);
});

test('every random serial is a minimal DER INTEGER: a leading 0x00 before a byte < 0x80 is "illegal padding" to OpenSSL', () => {
  // 1 serial in 256 drew that before the fix, failing a manager's start; 3,000 draws make it certain.
  for (let i = 0; i < 3000; i++) {
    // createSelfSignedCertificate parses its own output and throws on a bad encoding.
    const serial = new X509Certificate(createSelfSignedCertificate().cert).serialNumber;
    assert.equal(serial.length, 32, `serial ${serial}: 16 significant bytes`);
  }
});
