// Ids are a short type prefix plus a UUIDv7 (hex, no dashes): opaque to callers, unique without
// coordination between instances, and sortable by creation time.
import { randomBytes } from 'node:crypto';

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
  const rand = randomBytes(10);
  const time = ms.toString(16).padStart(12, '0');
  const seq = (0x7000 | (counter & 0x0fff)).toString(16); // version 7 + 12-bit sequence
  rand[0] = (rand[0] & 0x3f) | 0x80; // RFC 4122 variant
  return time + seq + rand.toString('hex').slice(0, 16);
}

export type IdKind = 'org' | 'key' | 'prj' | 'evl' | 'jdg' | 'log';

export const newId = (kind: IdKind) => `${kind}_${uuidv7Hex()}`;

/** True when `value` has the shape of an id (any kind, or a given kind). Used to tell ids from names. */
export function looksLikeId(value: string, kind?: IdKind): boolean {
  const m = /^([a-z]{3})_[0-9a-f]{32}$/.exec(value) ?? /^(preset)_[a-z0-9_]+$/.exec(value);
  return !!m && (!kind || m[1] === kind || (kind === 'evl' && m[1] === 'preset'));
}
