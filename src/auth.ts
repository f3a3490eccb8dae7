// API keys: how they are made, stored and checked, and how a request becomes a caller.
//
// A key looks like `trb_<16 hex lookup>_<43 chars secret>`. The lookup part (with `trb_`) is the
// key's `prefix`: stored in clear, shown for recognition, and used to find the record. The whole key
// is stored only as a SHA-256 hash (keys carry 256 random bits, so a slow hash adds nothing) and the
// hashes are compared with timingSafeEqual.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { notAuthenticated } from './errors.ts';
import { newId } from './ids.ts';
import { sha256bytes, sha256hex } from './sha256.ts';
import { isoOfMs, msOfIso } from './iso-time.ts';
import type { Organization } from './schemas.ts';
import type { ApiKeyRecord, Store } from './store/types.ts';

export interface Caller {
  org: Organization;
  key: ApiKeyRecord;
}

const KEY_PATTERN = /^(trb_[0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

// The one-shot digest where Node has it (sha256.ts): every request checks a key.
export const hashKey: (key: string) => string = sha256hex;

/** The same digest as bytes, for the comparison: no hex string made only to be decoded again. */
const hashKeyBytes: (key: string) => Buffer = sha256bytes;

/** Makes a new key for an org. Returns the secret (to show once) and the record to store. */
export function mintApiKey(orgId: string, name: string, expiresAt: string | null): { secret: string; record: ApiKeyRecord } {
  const prefix = `trb_${randomBytes(8).toString('hex')}`;
  const secret = `${prefix}_${randomBytes(32).toString('base64url')}`;
  const record: ApiKeyRecord = {
    id: newId('key'),
    org_id: orgId,
    name,
    prefix,
    hash: hashKey(secret),
    created_at: new Date().toISOString(),
    expires_at: expiresAt,
    last_used_at: null,
    revoked_at: null,
  };
  return { secret, record };
}

/** `Api-Key <key>` or `Bearer <key>` -> the key, or null when the header is absent. Throws on a malformed header. */
export function keyFromAuthorization(header: string | undefined): string | null {
  if (header === undefined || header.trim() === '') return null;
  const match = /^\s*(Api-Key|Bearer)\s+(\S+)\s*$/i.exec(header);
  if (!match) throw notAuthenticated('Malformed Authorization header: send `Authorization: Api-Key <key>` or `Authorization: Bearer <key>`.');
  return match[2];
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** Compared when no key has the prefix, so that an unknown prefix costs what a wrong secret costs. */
const NO_SUCH_KEY = hashKey('no such key');

/**
 * A stored hash (hex) as bytes, kept: every request of a key compares against the same hash, and
 * decoding it again was one of the check's two hex conversions (issue 33). Only hashes the store
 * answered are kept, one per key; the map is emptied past its bound (it refills as keys are used).
 */
const STORED_HASHES_KEPT = 10_000;
const storedHashBytes = new Map<string, Buffer>();
function storedHash(hex: string): Buffer {
  let bytes = storedHashBytes.get(hex);
  if (bytes === undefined) {
    if (storedHashBytes.size >= STORED_HASHES_KEPT) storedHashBytes.clear();
    bytes = Buffer.from(hex, 'hex');
    storedHashBytes.set(hex, bytes);
  }
  return bytes;
}

export class Authenticator {
  constructor(private readonly store: Store) {}

  /** Resolves an Authorization header to its caller, or throws 401 with a reason the caller can act on. */
  async authenticate(header: string | undefined): Promise<Caller> {
    const key = keyFromAuthorization(header);
    if (key === null) {
      throw notAuthenticated('No API key: send `Authorization: Api-Key <key>` or `Authorization: Bearer <key>`. Get a demo key with POST /create-demo-user/.');
    }
    const parts = KEY_PATTERN.exec(key);
    if (!parts) throw notAuthenticated('Malformed API key: Tribunal keys look like trb_<16 hex>_<43 characters>.');
    // Key and organization in one read (PostgreSQL: one round trip, not two). The records may be
    // the store's read-only snapshots (the JSON store's): they are read here, never changed.
    const found = await this.store.getApiKeyWithOrganization(parts[1]);
    const record = found?.key ?? null;
    const expected = storedHash(record?.hash ?? NO_SUCH_KEY);
    const given = hashKeyBytes(key);
    const matches = expected.length === given.length && timingSafeEqual(given, expected);
    if (!record || !matches) throw notAuthenticated('Unknown API key.');
    if (record.revoked_at) throw notAuthenticated(`API key ${record.prefix} was revoked at ${record.revoked_at}.`);
    const now = Date.now();
    if (record.expires_at && msOfIso(record.expires_at) <= now) {
      // h-harden: nothing is left for this key to cancel: its batch runs were stopped when it expired (batch/key-liveness.ts).
      throw notAuthenticated(
        `API key ${record.prefix} expired at ${record.expires_at}; batch runs it started were cancelled when it expired (another key of the organization can read them). Create a new key (or a new demo key).`,
      );
    }
    const org = found!.org;
    if (!org) throw notAuthenticated('Unknown API key.');
    // last_used_at at minute resolution: a write per request would make every read a write. The
    // caller gets the key as it now is (a copy with the new time: the record read is not changed).
    if (!record.last_used_at || now - msOfIso(record.last_used_at) > LAST_USED_RESOLUTION_MS) {
      const last_used_at = isoOfMs(now);
      void this.store.updateApiKey(record.id, { last_used_at }).catch(() => {});
      return { org, key: Object.assign({}, record, { last_used_at }) };
    }
    return { org, key: record };
  }
}
