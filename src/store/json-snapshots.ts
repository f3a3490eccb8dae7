// Read-only snapshots of the JSON store's records for the reads every judged call makes (the API
// key with its organization, the judge, each evaluator). A copy per read (json-data.ts `clone`)
// cost about 8 us a call on issue 33's profile, three or four deep copies of records that the run
// only reads. A snapshot is made once per stored record: a deep copy, deep-frozen, kept beside the
// record in a WeakMap and handed to every reader until the record is replaced.
//
// Why that is safe:
// - the stored record is never changed in place by the parts that hand out its snapshot: each of
//   their writes puts a new object in the table (json-versioned.ts, json-api-keys.ts), so a
//   snapshot is of the record as stored and is never stale while its record is in the table;
// - a snapshot is frozen all the way down, so a reader that tried to change it would fail loudly
//   (a TypeError in strict-mode modules) instead of changing what every later read sees. Readers
//   that set a field of their own make a copy first (domain/judges.ts pins a version that way).
import { clone } from './json-data.ts';

const snapshots = new WeakMap<object, object>();

function freezeDeep<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) freezeDeep(inner);
  return Object.freeze(value);
}

/** The frozen copy of a stored record (made on first read, the same object on every read after that). */
export function snapshotOf<T extends object>(stored: T): T;
export function snapshotOf<T extends object>(stored: T | null | undefined): T | null;
export function snapshotOf<T extends object>(stored: T | null | undefined): T | null {
  if (stored === null || stored === undefined) return null;
  let snapshot = snapshots.get(stored) as T | undefined;
  if (snapshot === undefined) {
    snapshot = freezeDeep(clone(stored));
    snapshots.set(stored, snapshot);
  }
  return snapshot;
}
