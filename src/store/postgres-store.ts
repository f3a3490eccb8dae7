// The PostgreSQL store: the same Store contract as the JSON store, for several instances on one
// database. The schema comes from src/store/migrations (see migrate-schema.ts), applied at init.
//
// The store is in three rooms: postgres/connection.ts (pool, statements, error mapping),
// postgres/codecs.ts (row codecs and SQL builders), postgres/contract.ts (the Store contract). This
// file adds the bulk import that `tribunal migrate --from json` uses, which is not part of the contract.
import type { Organization } from '../schemas.ts';
import { EVALUATOR_COLUMNS, evaluatorValues, json, JUDGE_COLUMNS, judgeValues, LOG_INSERT_COLUMNS, logFromRow, logValues, placeholders } from './postgres/codecs.ts';
import { PostgresContractStore } from './postgres/contract.ts';
import { StoreConflictError, type ApiKeyRecord, type EvaluatorRecord, type ExecutionLogRecord, type JudgeRecord, type ProjectRecord } from './types.ts';

// What callers outside the store use (the CLI, the log benchmark, tests), from where they always came.
export { logPageQuery, logWhere } from './postgres/codecs.ts';
export { describeUrl, type PostgresStoreOptions } from './postgres/connection.ts';

export class PostgresStore extends PostgresContractStore {
  // Bulk import (tribunal migrate --from json): not part of the Store contract.

  /**
   * Inserts what is not there yet (by id). Answers how many rows were new, and why any record could
   * not be copied (its name or prefix is taken by another row).
   */
  async importRecords(
    kind: 'organizations' | 'api_keys' | 'projects',
    records: Array<Organization | ApiKeyRecord | ProjectRecord>,
  ): Promise<{ copied: number; refused: string[] }> {
    let copied = 0;
    const refused: string[] = [];
    for (const r of records) {
      try {
        if (kind === 'organizations') await this.createOrganization(r as Organization);
        else if (kind === 'api_keys') await this.createApiKey(r as ApiKeyRecord);
        else await this.createProject(r as ProjectRecord);
        copied++;
      } catch (err) {
        if (!(err instanceof StoreConflictError)) throw err;
        const existing = kind === 'organizations' ? await this.getOrganization(r.id) : kind === 'api_keys' ? await this.getApiKey(r.id) : await this.getProject(r.id);
        if (!existing) refused.push(`${kind}: ${r.id} not copied: ${err.message}`);
      }
    }
    return { copied, refused };
  }

  /**
   * Imports an evaluator or judge with its whole version history. One whose id exists keeps its
   * latest version; only versions it lacks are added.
   */
  async importVersioned(
    kind: 'evaluator' | 'judge',
    latest: EvaluatorRecord | JudgeRecord,
    versions: Array<EvaluatorRecord | JudgeRecord>,
  ): Promise<{ latest: boolean; versions: number }> {
    const table = kind === 'evaluator' ? 'evaluators' : 'judges';
    return this.transaction(
      async (c) => {
        const exists = await c.query(`SELECT 1 FROM ${table} WHERE id = $1`, [latest.id]);
        if (!exists.rowCount) {
          if (kind === 'evaluator') {
            await c.query(`INSERT INTO evaluators (${EVALUATOR_COLUMNS.join(', ')}, extra) VALUES (${placeholders(16)})`, evaluatorValues(latest as EvaluatorRecord));
          } else {
            await c.query(
              `INSERT INTO judges (${JUDGE_COLUMNS.slice(0, 8).join(', ')}, evaluator_ids, ${JUDGE_COLUMNS.slice(8).join(', ')}, extra) VALUES (${placeholders(13)})`,
              judgeValues(latest as JudgeRecord),
            );
          }
        }
        let added = 0;
        for (const v of versions.length ? versions : [latest]) {
          const r = await c.query(`INSERT INTO ${kind}_versions (id, version, record) VALUES ($1, $2, $3) ON CONFLICT (id, version) DO NOTHING`, [v.id, v.version, json(v)]);
          added += r.rowCount ?? 0;
        }
        return { latest: !exists.rowCount, versions: added };
      },
      kind === 'evaluator' ? this.evaluatorConflict(latest as EvaluatorRecord) : this.judgeConflict(latest as JudgeRecord),
    );
  }

  /** Several logs by id (those that exist), for verification. */
  async getExecutionLogs(ids: string[]): Promise<ExecutionLogRecord[]> {
    const { rows } = await this.query('SELECT * FROM execution_logs WHERE id = ANY($1::text[])', [ids]);
    return rows.map(logFromRow);
  }

  /** Inserts logs in multi-row statements, skipping ids already present; answers how many were new. */
  async importExecutionLogs(logs: ExecutionLogRecord[]): Promise<number> {
    const perRow = LOG_INSERT_COLUMNS.length;
    const batch = Math.floor(60_000 / perRow);
    let inserted = 0;
    for (let i = 0; i < logs.length; i += batch) {
      const chunk = logs.slice(i, i + batch);
      const rows = chunk.map((_, r) => `(${placeholders(perRow, r * perRow)})`).join(', ');
      const result = await this.write(`INSERT INTO execution_logs (${LOG_INSERT_COLUMNS.join(', ')}) VALUES ${rows} ON CONFLICT (id) DO NOTHING`, chunk.flatMap(logValues));
      inserted += result.rowCount ?? 0;
    }
    return inserted;
  }
}
