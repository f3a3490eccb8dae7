// The shape of db.json in memory and the small helpers the JSON store's tables share: copying a
// record out (so a caller can never change the stored one), pages, visibility and search.
import type { Organization } from '../schemas.ts';
import { forgetReservations, type BudgetTables } from './json-budgets.ts';
import type { FileTable } from './file-types.ts';
import {
  isAfter,
  newestFirst,
  type AnnotationRecord,
  type ApiKeyRecord,
  type CalibrationRunRecord,
  type ClaimTokenRecord,
  type EvaluatorRecord,
  type JudgeRecord,
  type ModelRecord,
  type Page,
  type PageQuery,
  type ProjectRecord,
  type SyntheticDataRecord,
} from './types.ts';

export interface JsonData {
  format: 1;
  organizations: Record<string, Organization>;
  api_keys: Record<string, ApiKeyRecord>;
  projects: Record<string, ProjectRecord>;
  evaluators: Record<string, EvaluatorRecord>;
  evaluator_versions: Record<string, EvaluatorRecord[]>;
  judges: Record<string, JudgeRecord>;
  judge_versions: Record<string, JudgeRecord[]>;
  /** Absent in db.json files written before the model registry; created on load. */
  models?: Record<string, ModelRecord>;
  /** Absent in db.json files written before calibration; created on load. */
  annotations?: Record<string, AnnotationRecord>;
  calibration_runs?: Record<string, CalibrationRunRecord>;
  // Room surface (issue 30): absent in older files; created on load.
  claim_tokens?: Record<string, ClaimTokenRecord>;
  synthetic_data?: Record<string, SyntheticDataRecord>;
  /** Budgets (room h-cost, json-budgets.ts); absent in files written before them, created on load. */
  budget_caps?: BudgetTables['budget_caps'];
  budget_counters?: BudgetTables['budget_counters'];
  /** Provider batches of runs in mode provider_batch (issue 32, json-provider-batches.ts); created on load. */
  provider_batches?: Record<string, import('./provider-batch-types.ts').ProviderBatchRecord>;
  /** Attachments' metadata, keyed "<org>/<id>" (json-files-table.ts); absent in older files. */
  files?: FileTable;
}

export const emptyData = (): JsonData => ({
  format: 1,
  organizations: {},
  api_keys: {},
  projects: {},
  evaluators: {},
  evaluator_versions: {},
  judges: {},
  judge_versions: {},
});

/**
 * Tables keyed by id have no prototype, so that an id like `constructor` or `__proto__` looks up
 * nothing (a 404) instead of a member of Object.prototype (once a 500).
 */
export function withoutPrototypes(data: JsonData): void {
  for (const table of ['organizations', 'api_keys', 'projects', 'evaluators', 'evaluator_versions', 'judges', 'judge_versions'] as const) {
    data[table] = Object.assign(Object.create(null) as Record<string, never>, data[table]);
  }
  data.models = Object.assign(Object.create(null) as Record<string, ModelRecord>, data.models ?? {});
  data.annotations = Object.assign(Object.create(null) as Record<string, AnnotationRecord>, data.annotations ?? {});
  data.calibration_runs = Object.assign(Object.create(null) as Record<string, CalibrationRunRecord>, data.calibration_runs ?? {});
  data.claim_tokens = Object.assign(Object.create(null) as Record<string, ClaimTokenRecord>, data.claim_tokens ?? {});
  data.synthetic_data = Object.assign(Object.create(null) as Record<string, SyntheticDataRecord>, data.synthetic_data ?? {});
  // Budgets (room h-cost)
  data.budget_caps = Object.assign(Object.create(null) as BudgetTables['budget_caps'], data.budget_caps ?? {});
  data.budget_counters = Object.assign(Object.create(null) as BudgetTables['budget_counters'], data.budget_counters ?? {});
  data.provider_batches = Object.assign(Object.create(null) as NonNullable<JsonData['provider_batches']>, data.provider_batches ?? {});
  data.files = Object.assign(Object.create(null) as FileTable, data.files ?? {});
  forgetReservations(data as BudgetTables);
}

/**
 * Tables of db.json whose records name their organization (`org_id`): an organization's purge takes
 * its records out of each. A new table of organization records is added here.
 */
const ORG_TABLES = [
  'api_keys',
  'projects',
  'evaluators',
  'judges',
  'models',
  'annotations',
  'calibration_runs',
  'claim_tokens',
  'synthetic_data',
  'budget_caps',
  'budget_counters',
  'provider_batches',
  'files',
] as const satisfies ReadonlyArray<keyof JsonData>;

/** Takes one organization, and every record of it, out of db.json (the caller commits). */
export function purgeOrganizationData(data: JsonData, orgId: string): void {
  for (const name of ORG_TABLES) {
    const table = (data[name] ?? {}) as Record<string, { org_id: string | null }>;
    for (const [key, record] of Object.entries(table)) if (record.org_id === orgId) delete table[key];
  }
  // Version histories are keyed by the resource's id; their records name the organization.
  for (const name of ['evaluator_versions', 'judge_versions'] as const) {
    for (const [id, versions] of Object.entries(data[name])) if (versions[0]?.org_id === orgId) delete data[name][id];
  }
  delete data.organizations[orgId];
}

/**
 * A deep copy, so that callers never share objects with the stored state. Records are JSON data:
 * plain objects, arrays and primitives are copied directly, several times faster than
 * structuredClone on records this small (a judge: 2.8 -> 0.3 us); anything else goes through
 * structuredClone as before.
 *
 * A plain object is copied by one spread, then its object-valued fields replaced by their copies
 * (stores to fields it already has). Not by adding its keys one by one to `{}`: past ~12 keys V8
 * turns an object filled by keyed stores into a dictionary, so every evaluator (25 fields) reached
 * each run as a slow object (measured on Node 20: 2.5 us per evaluator copy and dictionary mode,
 * now 0.7 us and fast properties). A spread defines own properties, so a key named __proto__ stays
 * a plain property, as structuredClone keeps it.
 */
export function clone<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return typeof value === 'function' ? structuredClone(value) : value;
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = clone(value[i]);
    return out as T;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of Object.keys(out)) {
    const field = out[key];
    // An own data property (the spread made it), so even out.__proto__ = ... sets the field.
    if (typeof field === 'object' && field !== null) out[key] = clone(field);
    else if (typeof field === 'function') out[key] = structuredClone(field);
  }
  return out as T;
}

export function paginate<T extends { created_at: string; id: string }>(sorted: T[], page: PageQuery): Page<T> {
  const start = page.after ? sorted.findIndex((item) => isAfter(item, page.after!)) : 0;
  if (start < 0) return { items: [] };
  const items = sorted.slice(start, start + page.limit);
  const more = start + page.limit < sorted.length;
  const lastItem = items[items.length - 1];
  return { items: items.map(clone), last: more && lastItem ? { created_at: lastItem.created_at, id: lastItem.id } : undefined };
}

/** A page of a table's rows that `keep` passes, newest first: how a JSON table answers a list. */
export function pageNewestFirst<T extends { created_at: string; id: string }>(rows: Record<string, T>, keep: (row: T) => boolean, page: PageQuery): Page<T> {
  return paginate(Object.values(rows).filter(keep).sort(newestFirst), page);
}

/** Whether a row passes a list filter's optional fields: each one given must equal the row's field of the same name. */
export function matchesGiven<F extends object, R extends object>(filter: F, row: R, fields: Array<keyof F & keyof R>): boolean {
  return fields.every((field) => filter[field] === undefined || (row[field] as unknown) === filter[field]);
}

/** Whether a row was created inside a filter's optional date_from..date_to (both ends included). */
export function createdWithin(filter: { date_from?: string; date_to?: string }, row: { created_at: string }): boolean {
  return (filter.date_from === undefined || row.created_at >= filter.date_from) && (filter.date_to === undefined || row.created_at <= filter.date_to);
}

/** One organization's records of a table, newest first, a page of them (keys, projects, models, files). */
export function orgPage<T extends { org_id: string; created_at: string; id: string }>(table: Record<string, T>, orgId: string, page: PageQuery): Page<T> {
  return pageNewestFirst(table, (r) => r.org_id === orgId, page);
}

export function visibleTo(filter: { org_id: string; include_public: boolean; include_presets?: boolean }, rec: { org_id: string | null; visibility: string }) {
  return rec.org_id === filter.org_id || (filter.include_public && rec.visibility === 'public') || (filter.include_presets === true && rec.org_id === null);
}

export function matchesSearch(search: string | undefined, ...fields: string[]): boolean {
  if (!search) return true;
  const needle = search.toLowerCase();
  return fields.some((f) => f.toLowerCase().includes(needle));
}
