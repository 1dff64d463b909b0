/**
 * A self-signed serving certificate made in-process (ECDSA P-256, X.509 v3 with subjectAltNames),
 * for secure metrics serving when no certificate files are given, as controller-runtime's
 * `filters.WithAuthenticationAndAuthorization` setup does. node:crypto signs but cannot build
 * X.509, so the few DER structures needed are encoded here rather than shelling out to openssl
 * (absent from slim and distroless images).
 */
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

export interface SelfSignedCertificate {
  /** PEM */
  readonly cert: string;
  /** PEM (PKCS#8) */
  readonly key: string;
}

export interface SelfSignedCertificateOptions {
  /** DNS names and IP addresses for subjectAltName. @defaultValue ['localhost', '127.0.0.1', '::1'] */
  readonly hosts?: readonly string[];
  /** @defaultValue DEFAULT_SELF_SIGNED_VALIDITY_MS */
  readonly validityMs?: number;
  /** @defaultValue Date.now() */
  readonly nowMs?: number;
}

/** One year: the certificate is made again at every start. @defaultValue 365 days */
export const DEFAULT_SELF_SIGNED_VALIDITY_MS = 365 * 24 * 3600 * 1000;

export function createSelfSignedCertificate(options: SelfSignedCertificateOptions = {}): SelfSignedCertificate {
  const hosts = options.hosts ?? ['localhost', '127.0.0.1', '::1'];
  const now = options.nowMs ?? Date.now();
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(hosts[0] ?? 'operator-runtime', 'utf8')))));
  const serial = randomBytes(16);
  // A positive INTEGER in minimal DER: first byte 0x40–0x7f (0x00 followed by a byte < 0x80 would be
  // padding OpenSSL refuses, 1 draw in 256 before this).
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  const sans = hosts.map((h) => (isIP(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h, 'ascii'))));
  const extensions = seq(
    seq(oid('2.5.29.17'), tlv(0x04, seq(...sans))), // subjectAltName
    seq(oid('2.5.29.37'), tlv(0x04, seq(oid('1.3.6.1.5.5.7.3.1')))), // extKeyUsage: serverAuth
  );
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([2]))), // v3
    tlv(0x02, serial),
    ecdsaWithSha256,
    name,
    seq(time(now - 60_000), time(now + (options.validityMs ?? DEFAULT_SELF_SIGNED_VALIDITY_MS))),
    name,
    spki,
    tlv(0xa3, extensions),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const der = seq(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const cert = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
  // Parsing it back is the check that the encoding above is valid X.509.
  new X509Certificate(cert);
  return {
    cert,
    key: createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' }))
      .export({ type: 'pkcs8', format: 'pem' })
      .toString(),
  };
}

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...parts: Buffer[]): Buffer => tlv(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => tlv(0x31, Buffer.concat(parts));

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [a! * 40 + b!];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = v >>> 7; x > 0; x >>>= 7) chunk.unshift((x & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime until 2049, GeneralizedTime after, as RFC 5280 requires. */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  const year = new Date(ms).getUTCFullYear();
  return year < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`, 'ascii')) : tlv(0x18, Buffer.from(`${iso}Z`, 'ascii'));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.concat(
    groups.map((g) => {
      const b = Buffer.alloc(2);
      b.writeUInt16BE(parseInt(g, 16));
      return b;
    }),
  );
}
