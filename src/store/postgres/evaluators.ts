// The PostgreSQL store's evaluator part: the versioned table (versioned.ts) with its columns and filter.
import { evaluatorPart, type EvaluatorFilter, type EvaluatorRecord, type EvaluatorStore } from '../parts/versioned.ts';
import { EVALUATOR_INSERT_COLUMNS, evaluatorFromRow, evaluatorValues, searchSql, visibilitySql } from './codecs.ts';
import type { PgConnection } from './connection.ts';
import { PgVersioned } from './versioned.ts';

export const evaluatorTable = (db: PgConnection) =>
  new PgVersioned<EvaluatorRecord, EvaluatorFilter>(db, {
    kind: 'evaluator',
    columns: EVALUATOR_INSERT_COLUMNS,
    values: evaluatorValues,
    fromRow: evaluatorFromRow,
    where(q, filter) {
      visibilitySql(q, filter);
      if (filter.project_id !== undefined) q.where.push(`project_id = ${q.p(filter.project_id)}`);
      if (filter.name !== undefined) q.where.push(`name = ${q.p(filter.name)}`);
      if (filter.is_preset !== undefined) q.where.push(`is_preset = ${q.p(filter.is_preset)}`);
      searchSql(q, filter.search, ['name', 'intent']);
    },
  });

export const pgEvaluators = (db: PgConnection): EvaluatorStore => evaluatorPart(evaluatorTable(db));
