/**
 * The string formats the API server validates in custom resources (apiextensions' supported
 * formats, checked by kube-openapi's strfmt), reproduced from their Go definitions so
 * `validateAgainstSchema` agrees with the server. Format names are compared without dashes, as
 * go-openapi normalises them (`date-time` is `datetime`). Formats outside the supported list are
 * stripped by the server and not checked by either.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Every format apiextensions validates (Kubernetes 1.20 through 1.36; 1.34 adds the k8s-* names). */
export const SERVER_FORMATS: ReadonlySet<string> = new Set([
  'bsonobjectid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
  'ssn',
  'hexcolor',
  'rgbcolor',
  'byte',
  'password',
  'date',
  'duration',
  'datetime',
]);

/**
 * Formats the server checks with Go library parsers (net/mail, net/url, time.ParseDuration, …)
 * that are not reproduced here: like CEL rules, only the server checks them.
 */
export const SERVER_ONLY_FORMATS: ReadonlySet<string> = new Set([
  'uri',
  'email',
  'hostname',
  'duration',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
]);

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})([^\n][0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const BYTE_255 = '(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])';
const RGBCOLOR = new RegExp(`^rgb\\(\\s*${BYTE_255}\\s*,\\s*${BYTE_255}\\s*,\\s*${BYTE_255}\\s*\\)$`);
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
const BSON_OBJECT_ID = /^[0-9a-fA-F]{24}$/;
const MAC_COLON = /^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2})*$/;
const MAC_DOT = /^[0-9a-fA-F]{4}(\.[0-9a-fA-F]{4})*$/;

/** The name the server looks a format up by: dashes removed. */
export function normalizedFormat(format: string): string {
  return format.replaceAll('-', '');
}

/**
 * Whether `value` is valid for `format` as the API server checks it; `undefined` for a format the
 * server does not check (or checks with a parser not reproduced here, {@link SERVER_ONLY_FORMATS}).
 */
export function checkFormat(format: string, value: string): boolean | undefined {
  switch (normalizedFormat(format)) {
    case 'byte':
      return BASE64.test(value);
    case 'password':
      return true;
    case 'date':
      return isDate(value);
    case 'datetime':
      return isDateTime(value);
    case 'uuid':
      return UUID.test(value);
    case 'uuid3':
      return UUID3.test(value);
    case 'uuid4':
      return UUID4.test(value);
    case 'uuid5':
      return UUID5.test(value);
    case 'hexcolor':
      return HEXCOLOR.test(value);
    case 'rgbcolor':
      return RGBCOLOR.test(value);
    case 'ssn':
      return value.length === 11 && SSN.test(value);
    case 'bsonobjectid':
      return BSON_OBJECT_ID.test(value);
    case 'ipv4':
      return value.includes('.') && isIPv4(value);
    case 'ipv6':
      // Go's net.ParseIP has no zone (fe80::1%eth0); Node's isIPv6 accepts one.
      return value.includes(':') && !value.includes('%') && isIPv6(value);
    case 'cidr':
      return isCidr(value);
    case 'mac':
      return isMac(value);
    default:
      return undefined;
  }
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Go's `time.Parse("2006-01-02", s)`: exact digits, a real day of that month. */
function isDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && !leap ? 28 : DAYS[month - 1]!);
}

/** strfmt.IsDateTime, step by step (it splits the lowercased value on every "t"). */
function isDateTime(value: string): boolean {
  if (value.length < 4) return false;
  const parts = value.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = TIME.exec(parts[1]!);
  if (!m) return false;
  return m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/** Go's net.ParseCIDR: an address, a slash, a decimal prefix length within the family's bits. */
function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const address = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!/^\d{1,9}$/.test(bits)) return false;
  const n = Number(bits);
  if (isIPv4(address)) return n <= 32;
  if (address.includes(':') && !address.includes('%') && isIPv6(address)) return n <= 128;
  return false;
}

/** Go's net.ParseMAC: 6, 8 or 20 octets, colon-, dash- or dot-separated. */
function isMac(value: string): boolean {
  let octets: number;
  if (MAC_COLON.test(value)) octets = (value.length + 1) / 3;
  else if (MAC_DOT.test(value)) octets = ((value.length + 1) / 5) * 2;
  else return false;
  return octets === 6 || octets === 8 || octets === 20;
}
