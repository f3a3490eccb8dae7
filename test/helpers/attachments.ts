// Small real files of the four attachment kinds, made in the test (no binary fixtures), and an
// upload helper that sends multipart/form-data through fetch's own FormData.
import zlib from 'node:zlib';

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid 1x1 greyscale PNG whose pixel is `shade` (different shades are different bytes). */
export function png(shade = 0): Buffer {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(Buffer.from([0, shade & 0xff]))),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A JFIF header and end marker: what the sniffer and a provider's first look see of a JPEG. */
export const jpeg = (): Buffer =>
  Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0', 'latin1'), Buffer.from([1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9])]);

/** A lossless 1x1 WebP. */
export const webp = (): Buffer => Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');

/** A one-page PDF with a line of text. */
export const pdf = (text = 'Invoice 42: total 10 EUR'): Buffer =>
  Buffer.from(
    `%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 50]/Contents 4 0 R>>endobj\n4 0 obj<</Length ${text.length + 24}>>stream\nBT /F1 12 Tf 10 20 Td (${text}) Tj ET\nendstream endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n`,
    'latin1',
  );

/** POST /v1/files/ with one file field (or `field` for another name); answers status and parsed body. */
export async function upload(url: string, key: string, data: Buffer, name = 'file.bin', opts: { field?: string; type?: string } = {}) {
  const form = new FormData();
  form.append(opts.field ?? 'file', new Blob([new Uint8Array(data)], { type: opts.type ?? 'application/octet-stream' }), name);
  const res = await fetch(`${url}/v1/files/`, { method: 'POST', headers: { authorization: `Api-Key ${key}` }, body: form });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
}
