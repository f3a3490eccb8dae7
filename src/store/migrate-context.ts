// What every part of `tribunal migrate --from json --to postgres` shares (migrate-json.ts runs them):
// the kinds it reports on, their counts, and how a part tells a difference or what it left behind.
import type { RunKind } from './migrate-runs.ts';
import type { PostgresStore } from './postgres-store.ts';
import type { Store } from './types.ts';

/** Tables of db.json added after the first migration (migrate-extras.ts). */
export type ExtraKind = 'files' | 'claim_tokens' | 'synthetic_data' | 'budget_caps' | 'budget_counters' | 'provider_batches';
export const EXTRA_KINDS: ExtraKind[] = ['files', 'claim_tokens', 'synthetic_data', 'budget_caps', 'budget_counters', 'provider_batches'];

/** The rooms beside the Store (review queues, evaluation rules, spans): migrated by src/cli/migrate-rooms.ts. */
export type RoomKind =
  | 'review_queues'
  | 'review_items'
  | 'review_leases'
  | 'review_labels'
  | 'evaluation_rules'
  | 'rule_counters'
  | 'rule_units'
  | 'trace_spans'
  | 'span_evaluations';
export const ROOM_KINDS: RoomKind[] = [
  'review_queues',
  'review_items',
  'review_leases',
  'review_labels',
  'evaluation_rules',
  'rule_counters',
  'rule_units',
  'trace_spans',
  'span_evaluations',
];

export type BaseKind = 'organizations' | 'api_keys' | 'projects' | 'evaluators' | 'evaluator_versions' | 'judges' | 'judge_versions' | 'models' | 'execution_logs' | 'annotations';
export type Kind = BaseKind | RunKind | ExtraKind | RoomKind;
export type Counts = Record<Kind, { source: number; copied: number; verified: number }>;

export interface MigrateContext {
  dataDir: string;
  source: Store;
  target: PostgresStore;
  batchSize: number;
  counts: Counts;
  mismatches: string[];
  /** What is deliberately not copied, and why (printed with the report). */
  notCopied: string[];
  /** Counts `want` verified when `got` equals it (in the canonical form), else lists the difference. */
  compare: (kind: Kind, label: string, want: unknown, got: unknown) => void;
  equal: (a: unknown, b: unknown) => boolean;
  log: (line: string) => void;
}

/** Copies and verifies the rooms beside the Store; given by the caller (the store layer cannot import them). */
export type RoomMigration = (ctx: MigrateContext) => Promise<void>;
