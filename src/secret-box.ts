// Seals secrets at rest (a registered model's API key) with AES-256-GCM under the server secret
// TRIBUNAL_SECRET_KEY. A sealed value is "v1.<iv>.<tag>.<ciphertext>" in base64url: a dump of the
// store or the data directory holds no usable key, and the GCM tag refuses a value that was changed
// or sealed under another secret instead of decrypting it to garbage.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const MAKE_SECRET_HINT = `node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`;

export function seal(secret: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', secret, iv);
  // The record's id as associated data: a sealed key copied onto another model does not open.
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** The plaintext, or null when the value was sealed under another secret (or tampered with). */
export function open(secret: Buffer, sealed: string, context: string): string | null {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
