// What a file is, from its first bytes (magic numbers), never from its name or declared type: a
// `.png` holding text is refused. Only the four kinds the judge models take as content parts.
import type { AttachmentType } from '../store/file-types.ts';

export const ATTACHMENT_TYPES: readonly AttachmentType[] = ['application/pdf', 'image/png', 'image/jpeg', 'image/webp'];

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const startsWith = (data: Uint8Array, bytes: number[], at = 0) => data.length >= at + bytes.length && bytes.every((b, i) => data[at + i] === b);
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

/** The content type the bytes are, or null when they are none of the four. */
export function sniffType(data: Uint8Array): AttachmentType | null {
  if (startsWith(data, ascii('%PDF-'))) return 'application/pdf';
  if (startsWith(data, PNG)) return 'image/png';
  // JPEG: SOI (FF D8) then the first marker's FF.
  if (startsWith(data, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  // WebP: a RIFF container whose form type is WEBP.
  if (startsWith(data, ascii('RIFF')) && startsWith(data, ascii('WEBP'), 8)) return 'image/webp';
  return null;
}

/** Says what the bytes look like instead, for the error (never echoes them). */
export function describeBytes(data: Uint8Array): string {
  if (!data.length) return 'empty';
  const head = data.subarray(0, 512);
  const text = head.every((b) => b === 0x09 || b === 0x0a || b === 0x0d || (b >= 0x20 && b < 0x7f) || b >= 0x80);
  return text ? 'text' : `binary data starting ${Buffer.from(data.subarray(0, 4)).toString('hex')}`;
}
