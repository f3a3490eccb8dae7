// The fence every piece of untrusted data is shown to the judge model in (docs/SCORING.md): a tag
// whose name ends in a nonce, around XML-escaped text. Scoring's prompt and the conversation
// renderer both fence through here, so turns, tool calls and tool results get exactly the escaping
// and nonce scheme that responses get.
//
// Scoring derives the nonce from a server secret and the evaluator version (versionNonce), so the
// static part of a scoring prompt is the same bytes on every call of that version and provider
// prompt caches apply (docs/MODELS.md, "Caching"). The fence stays unforgeable: escaping leaves no
// `<` in the data, so no tag at all can be written from inside it, whatever the nonce; and the
// nonce, an HMAC under a secret, cannot be guessed from outside either.
import { createHmac, randomBytes } from 'node:crypto';
import { randomHex } from '../ids.ts';

/** 96 random bits, hex: unguessable, and only [0-9a-f] so it is safe in a tag name. */
export const newNonce = () => randomHex(12);

const NONCE_CACHE_SIZE = 4096;
const nonceCache = new WeakMap<Buffer, Map<string, string>>();

/** Used when TRIBUNAL_SECRET_KEY is not set: nonces then stay the same within this process only. */
const PROCESS_SECRET = randomBytes(32);

/**
 * The nonce of one evaluator version: 96 bits of HMAC-SHA256 under the server secret
 * (TRIBUNAL_SECRET_KEY, else a random secret of this process), hex. The same for every call of
 * that version; another version (or another secret) gives another nonce.
 */
export function versionNonce(secret: Buffer | null, evaluatorId: string, version: number): string {
  const key = secret ?? PROCESS_SECRET;
  // The nonce depends only on the secret and the version, and scoring asks for it on every call:
  // keep the last few thousand per secret instead of an HMAC per call.
  let bySecret = nonceCache.get(key);
  if (!bySecret) nonceCache.set(key, (bySecret = new Map()));
  const id = `${evaluatorId}\0${version}`;
  let nonce = bySecret.get(id);
  if (nonce === undefined) {
    nonce = createHmac('sha256', key).update(`tribunal fence nonce\0${id}`).digest('hex').slice(0, 24);
    if (bySecret.size >= NONCE_CACHE_SIZE) bySecret.delete(bySecret.keys().next().value!);
    bySecret.set(id, nonce);
  }
  return nonce;
}

/** XML escaping for fenced data: after it, the data holds no `<` or `>`, so no tag at all. */
export const escapeData = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Escaping for a value inside a fence tag's attribute: no tag, and no `"` to end the value early. */
export const escapeAttribute = (text: string) => escapeData(text).replace(/"/g, '&quot;');

/** `<name_nonce attrs>` + escaped text + `</name_nonce>`, the text on its own lines. */
export function fence(name: string, nonce: string, text: string, attrs = ''): string {
  return `<${name}_${nonce}${attrs}>\n${escapeData(text)}\n</${name}_${nonce}>`;
}
