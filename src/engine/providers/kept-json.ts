// JSON kept for the parts of a model request that are the same on every call of one evaluator
// version: the system prompt block (some 6 kB of text) and the tool with its schema. Serializing
// them again on every call was most of the request body's JSON.stringify, itself the largest self
// time of a judged call in issue 33's profile. A part is registered once (and frozen, so what is
// sent can never drift from what was kept) and kept as its UTF-8 bytes; a body that holds it is then
// the same bytes that JSON.stringify of the whole would give, encoded as UTF-8, with the kept parts
// copied in (not serialized, flattened and encoded again on every call).
//
// The body is written straight into a slab shared by calls (bodyBytes), not into a Buffer of its
// own: undici turned each string body into a fresh Buffer, and a fresh ArrayBuffer of some 9 kB per
// call was one of the largest native costs of a model call (issue 33's profile, h-provider). A slab
// is only ever appended to, never rewritten, so a body handed to a socket stays as written for as
// long as the write holds it; the slab is freed once no body in it is referenced.

const kept = new WeakMap<object, Buffer>();

function freezeDeep<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) freezeDeep(inner);
  return Object.freeze(value);
}

/** Freezes `part` (deeply) and keeps its JSON as bytes: a body encoded by `encodeBody` that holds it does not serialize it again. */
export function keepJson<T extends object>(part: T): T {
  const frozen = freezeDeep(part);
  if (!kept.has(frozen)) kept.set(frozen, Buffer.from(JSON.stringify(frozen), 'utf8'));
  return frozen;
}

const SLAB_BYTES = 256 * 1024;
/** A body larger than this (attachments, say) gets a Buffer of its own rather than pinning a large slab. */
const OWN_BUFFER_BYTES = 64 * 1024;
let slab = Buffer.allocUnsafe(SLAB_BYTES);
let used = 0;

/** Makes room for `max` bytes at `used` (a fresh slab when the current one is too full). */
function reserve(max: number): void {
  if (used + max > slab.length) {
    slab = Buffer.allocUnsafe(SLAB_BYTES);
    used = 0;
  }
}

/** A string's UTF-8 bytes: exactly Buffer.from(text, 'utf8'), written into the shared slab when small. */
export function bodyBytes(text: string): Buffer {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4).
  const max = text.length * 3;
  if (max > OWN_BUFFER_BYTES) return Buffer.from(text, 'utf8');
  reserve(max);
  const start = used;
  used += slab.write(text, used, 'utf8');
  return slab.subarray(start, used);
}

/**
 * Exactly Buffer.from(JSON.stringify(body)) for a plain object, each top-level value that keepJson
 * kept copied in as its bytes; the body is written into the shared slab when small.
 */
export function encodeBody(body: object): Buffer {
  // The body as text runs between kept parts: [text, kept, text, kept, ..., text].
  const pieces: Array<string | Buffer> = [];
  let text = '{';
  let max = 0;
  let first = true;
  // Object.keys, not Object.entries: no [key, value] array per field.
  for (const key of Object.keys(body)) {
    const value = (body as Record<string, unknown>)[key];
    const bytes = value !== null && typeof value === 'object' ? kept.get(value) : undefined;
    if (bytes) {
      text += `${first ? '' : ','}${JSON.stringify(key)}:`;
      pieces.push(text, bytes);
      max += text.length * 3 + bytes.length;
      text = '';
      first = false;
      continue;
    }
    const json = JSON.stringify(value);
    // JSON.stringify leaves out what has no JSON (undefined, functions, symbols).
    if (json === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:${json}`;
    first = false;
  }
  text += '}';
  pieces.push(text);
  max += text.length * 3;
  if (max > OWN_BUFFER_BYTES) {
    return Buffer.concat(pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece)));
  }
  reserve(max);
  const start = used;
  for (const piece of pieces) used += typeof piece === 'string' ? slab.write(piece, used, 'utf8') : piece.copy(slab, used);
  return slab.subarray(start, used);
}
