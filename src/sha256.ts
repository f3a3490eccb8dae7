// SHA-256 of a string, through crypto.hash where Node has it (20.12+): a one-shot call, several
// times cheaper than a Hash object per call under OpenSSL 3. Used on hot paths (every API key
// check, every batch row's log id); the Hash object is the fallback on older Node 20 releases.
import crypto, { createHash } from 'node:crypto';

const hasOneShot = typeof crypto.hash === 'function';

/** The digest in hex. */
export const sha256hex: (text: string) => string = hasOneShot ? (text) => crypto.hash('sha256', text, 'hex') : (text) => createHash('sha256').update(text).digest('hex');

// crypto.hash's types know only string encodings; 'buffer' answers the digest's bytes (checked once here).
const oneShotBytes = (text: string) => crypto.hash('sha256', text, 'buffer' as 'hex') as unknown as Buffer;

/** The digest's bytes: no hex string made only to be decoded again. */
export const sha256bytes: (text: string) => Buffer = hasOneShot && Buffer.isBuffer(oneShotBytes('')) ? oneShotBytes : (text) => createHash('sha256').update(text).digest();
