// Ids are a short type prefix plus a UUIDv7 (hex, no dashes): opaque to callers, unique without
// coordination between instances, and sortable by creation time.
import { randomFillSync } from 'node:crypto';

// Random bytes come from a pool filled from the CSPRNG 4 KiB at a time (as crypto.randomUUID does):
// one randomFillSync per 4 KiB instead of one randomBytes call per id, which on the request path
// cost more than the rest of making the id. Each byte is handed out once.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** `bytes` fresh random bytes (from the CSPRNG) as lowercase hex. */
export function randomHex(bytes: number): string {
  if (bytes > POOL_SIZE) return randomFillSync(Buffer.alloc(bytes)).toString('hex');
  if (poolOffset + bytes > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

let lastMs = 0;
let counter = 0;

function uuidv7Hex(): string {
  let ms = Date.now();
  // Monotonic within one process: ids made in the same millisecond still sort in creation order.
  if (ms <= lastMs) {
    ms = lastMs;
    counter++;
    if (counter > 0x0fff) {
      // 4,096 ids in one millisecond: borrow the next millisecond rather than wrap the sequence.
      ms = ++lastMs;
      counter = 0;
    }
  } else {
    lastMs = ms;
    counter = 0;
  }
  const rand = randomHex(8);
  const time = ms.toString(16).padStart(12, '0');
  const seq = (0x7000 | (counter & 0x0fff)).toString(16); // version 7 + 12-bit sequence
  // RFC 4122 variant in the top two bits of the first random byte.
  const variant = ((parseInt(rand.slice(0, 2), 16) & 0x3f) | 0x80).toString(16);
  return time + seq + variant + rand.slice(2);
}

export type IdKind = 'org' | 'key' | 'prj' | 'evl' | 'jdg' | 'log' | 'dst' | 'itm' | 'mdl' | 'bat';

export const newId = (kind: IdKind) => `${kind}_${uuidv7Hex()}`;

/** True when `value` has the shape of an id (any kind, or a given kind). Used to tell ids from names. */
export function looksLikeId(value: string, kind?: IdKind): boolean {
  const m = /^([a-z]{3})_[0-9a-f]{32}$/.exec(value) ?? /^(preset)_[a-z0-9_]+$/.exec(value);
  return !!m && (!kind || m[1] === kind || (kind === 'evl' && m[1] === 'preset'));
}
