// Evaluators and judges in db.json: the latest version in one table, every version's snapshot in
// <kind>_versions, changed together and committed once. One helper keeps both (parts/versioned.ts
// names its methods as the Store's); each resource gives its tables and its filter.
import { clone, matchesSearch, paginate, visibleTo, type JsonData } from './json-data.ts';
import {
  evaluatorPart,
  judgePart,
  type EvaluatorFilter,
  type EvaluatorRecord,
  type EvaluatorStore,
  type JudgeFilter,
  type JudgeRecord,
  type JudgeStore,
  type Versioned,
} from './parts/versioned.ts';
import { snapshotOf } from './json-snapshots.ts';
import { newestFirst, StoreConflictError, type Page, type PageQuery } from './types.ts';

type VersionedRecord = { id: string; org_id: string | null; name: string; version: number; created_at: string };

export interface JsonVersionedTables<R> {
  latest: Record<string, R>;
  versions: Record<string, R[]>;
}

export class JsonVersioned<R extends VersionedRecord, F> implements Versioned<R, F> {
  constructor(
    private readonly kind: 'evaluator' | 'judge',
    private readonly tables: () => JsonVersionedTables<R>,
    private readonly save: () => Promise<void>,
    private readonly matches: (filter: F, record: R) => boolean,
  ) {}

  /** Names are unique per organization (the presets' null organization included). */
  private assertUniqueName(rec: R) {
    const clash = Object.values(this.tables().latest).find((r) => r.org_id === rec.org_id && r.name === rec.name && r.id !== rec.id);
    if (clash) throw new StoreConflictError({ kind: 'name_taken', resource: this.kind, name: rec.name });
  }

  async create(record: R): Promise<void> {
    const { latest, versions } = this.tables();
    if (latest[record.id]) throw new StoreConflictError({ kind: 'id_taken', resource: this.kind, id: record.id });
    this.assertUniqueName(record);
    latest[record.id] = clone(record);
    versions[record.id] = [clone(record)];
    await this.save();
  }
  /**
   * The latest version as a read-only snapshot (json-snapshots.ts), not a copy: every run reads its
   * judge and each evaluator here. This class never changes a stored record in place (create and
   * update put new objects in the tables), so the snapshot is the record as stored.
   */
  async get(id: string) {
    return snapshotOf(this.tables().latest[id]);
  }
  async getVersion(id: string, version: number) {
    return clone(this.tables().versions[id]?.find((v) => v.version === version) ?? null);
  }
  async listVersions(id: string) {
    return clone([...(this.tables().versions[id] ?? [])].reverse());
  }
  async list(filter: F, page: PageQuery): Promise<Page<R>> {
    const rows = Object.values(this.tables().latest).filter((r) => this.matches(filter, r));
    return paginate(rows.sort(newestFirst), page);
  }
  async update(next: R, expectedVersion: number): Promise<boolean> {
    const { latest, versions } = this.tables();
    const current = latest[next.id];
    if (!current || current.version !== expectedVersion) return false;
    this.assertUniqueName(next);
    latest[next.id] = clone(next);
    (versions[next.id] ??= []).push(clone(next));
    await this.save();
    return true;
  }
  async delete(id: string): Promise<boolean> {
    const { latest, versions } = this.tables();
    if (!latest[id]) return false;
    delete latest[id];
    delete versions[id];
    await this.save();
    return true;
  }
}

/** The JSON store's evaluator part, over db.json (read late: init loads it) and its commit. */
export function jsonEvaluators(data: () => JsonData, save: () => Promise<void>): EvaluatorStore {
  const evaluators = new JsonVersioned<EvaluatorRecord, EvaluatorFilter>(
    'evaluator',
    () => ({ latest: data().evaluators, versions: data().evaluator_versions }),
    save,
    (f, e) =>
      visibleTo(f, e) &&
      (f.project_id === undefined || e.project_id === f.project_id) &&
      (f.name === undefined || e.name === f.name) &&
      (f.is_preset === undefined || e.is_preset === f.is_preset) &&
      matchesSearch(f.search, e.name, e.intent),
  );
  return evaluatorPart(evaluators);
}

/** The JSON store's judge part, likewise. */
export function jsonJudges(data: () => JsonData, save: () => Promise<void>): JudgeStore {
  const judges = new JsonVersioned<JudgeRecord, JudgeFilter>(
    'judge',
    () => ({ latest: data().judges, versions: data().judge_versions }),
    save,
    (f, j) =>
      visibleTo(f, j) &&
      (f.project_id === undefined || j.project_id === f.project_id) &&
      (f.name === undefined || j.name === f.name) &&
      matchesSearch(f.search, j.name, j.intent, j.stage ?? ''),
  );
  // Judges (any org) whose latest version applies the evaluator.
  const judgesUsing = async (evaluatorId: string) =>
    Object.values(data().judges)
      .filter((j) => j.evaluators.some((e) => e.id === evaluatorId))
      .map((j) => ({ id: j.id, name: j.name, org_id: j.org_id }));
  return judgePart(judges, judgesUsing);
}
