/**
 * Reads a screenshot the way the console's browser tests check it: size, distinct colours and the
 * share of the most common one (a blank page is one colour; text, tables and charts make hundreds).
 */
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';

/** Distinct RGB(A) colours of an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes). */
export function pngColours(png: Buffer): { width: number; height: number; colours: number; dominantShare: number } {
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.subarray(offset + 4, offset + 8).toString('latin1');
    const data = png.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth 8');
      assert.equal(data[12], 0, 'not interlaced');
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      assert.ok(channels > 0, `colour type ${data[9]}`);
    } else if (type === 'IDAT') idat.push(data);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const prev = Buffer.alloc(stride);
  const line = Buffer.alloc(stride);
  const counts = new Map<number, number>();
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels]! : 0;
      const b = prev[i]!;
      const c = i >= channels ? prev[i - channels]! : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter]!;
      line[i] = (src[i]! + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      const colour = line.readUIntBE(x * channels, 3);
      counts.set(colour, (counts.get(colour) ?? 0) + 1);
    }
    line.copy(prev);
  }
  return { width, height, colours: counts.size, dominantShare: Math.max(...counts.values()) / (width * height) };
}
