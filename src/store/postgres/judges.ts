// The PostgreSQL store's judge part: the versioned table (versioned.ts) with its columns and filter,
// and which judges apply an evaluator (evaluator_ids, a text[] column with a GIN index).
import { judgePart, type JudgeFilter, type JudgeRecord, type JudgeStore } from '../parts/versioned.ts';
import { JUDGE_INSERT_COLUMNS, judgeFromRow, judgeValues, searchSql, visibilitySql } from './codecs.ts';
import type { PgConnection } from './connection.ts';
import { PgVersioned } from './versioned.ts';

export const judgeTable = (db: PgConnection) =>
  new PgVersioned<JudgeRecord, JudgeFilter>(db, {
    kind: 'judge',
    columns: JUDGE_INSERT_COLUMNS,
    values: judgeValues,
    fromRow: judgeFromRow,
    where(q, filter) {
      visibilitySql(q, filter);
      if (filter.project_id !== undefined) q.where.push(`project_id = ${q.p(filter.project_id)}`);
      if (filter.name !== undefined) q.where.push(`name = ${q.p(filter.name)}`);
      searchSql(q, filter.search, ['name', 'intent', "coalesce(stage, '')"]);
    },
  });

export const pgJudges = (db: PgConnection): JudgeStore =>
  judgePart(judgeTable(db), async (evaluatorId) => {
    const { rows } = await db.query('SELECT id, name, org_id FROM judges WHERE evaluator_ids @> ARRAY[$1::text] ORDER BY created_at, id', [evaluatorId]);
    return rows.map((r) => ({ id: r.id as string, name: r.name as string, org_id: r.org_id as string }));
  });
