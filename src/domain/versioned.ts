// The rules evaluators and judges share as versioned resources: read by id or exact name (only what
// the caller may see, version by version), and edit by optimistic concurrency, each change a new
// version. domain/evaluators.ts and domain/judges.ts give what differs (VersionedKind).
import { notFound, TribunalError, validationError } from '../errors.ts';
import { looksLikeId } from '../ids.ts';
import type { RequestContext } from '../context.ts';
import type { Store } from '../store/types.ts';
import { conflictToError } from './conflicts.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller'>;
type VersionedRecord = { id: string; org_id: string | null; name: string; visibility: string; version: number; updated_at: string };

export interface VersionedKind<R extends VersionedRecord> {
  /** As in messages and fields: `evaluator` (evaluator_id, evaluator_name), `judge`. */
  noun: 'evaluator' | 'judge';
  get(store: Store, id: string): Promise<R | null>;
  getVersion(store: Store, id: string, version: number): Promise<R | null>;
  listVersions(store: Store, id: string): Promise<R[]>;
  /** Those of this exact name visible to the caller (its own org's and public ones). */
  named(ctx: Ctx, name: string): Promise<R[]>;
  /** Among records of one name, the ones meant (the caller's own first, ...). */
  candidates(ctx: Ctx, items: R[]): R[];
  /** The latest version, when the caller may edit it (else the error that says why not). */
  editable(ctx: Ctx, id: string): Promise<R>;
  update(store: Store, next: R, expectedVersion: number): Promise<boolean>;
  /** The fields a version is made of: a change elsewhere makes no new version. */
  fields: readonly (keyof R & string)[];
  /** What a name conflict tells the caller to do. */
  conflictHint: string;
}

const title = (noun: string) => noun[0].toUpperCase() + noun.slice(1);

/**
 * Decided for the caller on every record, current or past: each stored version keeps the visibility
 * it was saved with, so a version saved private stays private to its organization even after a
 * later version was made public (publishing publishes from then on, not the history).
 */
export function canRead(ctx: Ctx, rec: { org_id: string | null; visibility: string }): boolean {
  return rec.org_id === ctx.caller.org.id || rec.visibility === 'public';
}

export async function getVisible<R extends VersionedRecord>(kind: VersionedKind<R>, ctx: Ctx, id: string, version?: number): Promise<R> {
  // Names are accepted wherever ids are (GET /v1/evaluators/Faithfulness/, get_judge, PATCH, DELETE).
  if (!looksLikeId(id)) return resolve(kind, ctx, { name: id }, version);
  const latest = await kind.get(ctx.store, id);
  if (!latest || !canRead(ctx, latest)) throw notFound(title(kind.noun), id);
  if (version === undefined || version === latest.version) return latest;
  const old = await kind.getVersion(ctx.store, id, version);
  if (!old || !canRead(ctx, old)) throw new TribunalError('not_found', 404, `${title(kind.noun)} ${id} has no version ${version} visible to you; its latest is ${latest.version}.`);
  return old;
}

/** Every version the caller may read, newest first (versions saved private are its owner's only). */
export async function listVisibleVersions<R extends VersionedRecord>(kind: VersionedKind<R>, ctx: Ctx, idOrName: string): Promise<R[]> {
  const { id } = await getVisible(kind, ctx, idOrName);
  return (await kind.listVersions(ctx.store, id)).filter((v) => canRead(ctx, v));
}

/** By id, or by exact name among `candidates` (ambiguity there is an error that lists them). */
export async function resolve<R extends VersionedRecord>(kind: VersionedKind<R>, ctx: Ctx, ref: { id?: string; name?: string }, version?: number): Promise<R> {
  if (ref.id) return getVisible(kind, ctx, ref.id, version);
  const n = kind.noun;
  if (!ref.name) throw validationError(`Give ${n}_id or ${n}_name.`, [{ field: `${n}_id`, message: `required (or ${n}_name)` }]);
  const candidates = kind.candidates(ctx, await kind.named(ctx, ref.name));
  if (!candidates.length) {
    throw new TribunalError('not_found', 404, `No ${n} named ${JSON.stringify(ref.name)} is visible to you; names are exact (case-sensitive).`);
  }
  if (candidates.length > 1) {
    throw validationError(`Several public ${n}s are named ${JSON.stringify(ref.name)} (${candidates.map((c) => c.id).join(', ')}); pass ${n}_id instead.`, [
      { field: `${n}_name`, message: 'ambiguous' },
    ]);
  }
  return version === undefined ? candidates[0] : getVisible(kind, ctx, candidates[0].id, version);
}

/**
 * Applies a change to the latest editable version, bumping `version` when any of the kind's fields
 * changed. Optimistic concurrency: re-read and retry when another edit lands between read and write.
 */
export async function revise<R extends VersionedRecord>(kind: VersionedKind<R>, ctx: Ctx, id: string, change: (next: R, current: R) => Promise<R>): Promise<R> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await kind.editable(ctx, id);
    const next = await change({ ...current }, current);
    if (kind.fields.every((f) => JSON.stringify(next[f]) === JSON.stringify(current[f]))) return current;
    next.version = current.version + 1;
    next.updated_at = new Date().toISOString();
    try {
      if (await kind.update(ctx.store, next, current.version)) return next;
    } catch (err) {
      throw conflictToError(err, kind.conflictHint);
    }
  }
  throw new TribunalError('conflict', 409, `${title(kind.noun)} ${id} is being edited concurrently; try again.`, { reason: 'edited_concurrently' });
}
